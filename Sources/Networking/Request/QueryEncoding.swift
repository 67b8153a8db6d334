/// Turns parameters into a query string (or a form body).
///
/// Keys are sorted so the output is deterministic. Nested objects become `key[sub]=value`,
/// arrays `key[]=value` for each element (the convention of Rails, PHP and Alamofire), `true` and
/// `false` are written as words, and `null` members are left out. Every name and value is
/// percent-encoded except RFC 3986's unreserved characters.
enum QueryEncoding {
    static func encode(_ object: [String: JSONValue]) -> String {
        var pairs: [(String, String)] = []
        for key in object.keys.sorted() {
            if let value = object[key] { append(value, name: key, to: &pairs) }
        }
        return pairs.map { "\(PathEncoding.encodeQueryComponent($0.0))=\(PathEncoding.encodeQueryComponent($0.1))" }
            .joined(separator: "&")
    }

    private static func append(_ value: JSONValue, name: String, to pairs: inout [(String, String)]) {
        switch value {
        case .null: break
        case .bool(let flag): pairs.append((name, flag ? "true" : "false"))
        case .int(let number): pairs.append((name, String(number)))
        case .double(let number): pairs.append((name, format(number)))
        case .string(let text): pairs.append((name, text))
        case .array(let elements): for element in elements { append(element, name: "\(name)[]", to: &pairs) }
        case .object(let members):
            for key in members.keys.sorted() {
                if let member = members[key] { append(member, name: "\(name)[\(key)]", to: &pairs) }
            }
        }
    }

    /// Whole numbers without a fraction (`2`, not `2.0`); others as Swift prints them.
    private static func format(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return String(number)
    }
}

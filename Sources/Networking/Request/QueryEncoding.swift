/// Turns parameters into a query string (or a form body).
///
/// Keys are sorted so the output is deterministic. Nested objects become `key[sub]=value`,
/// arrays and booleans are written as the ``QueryEncodingStyle`` says (by default `key[]=value`
/// for each element and `true`/`false`), and `null` members are left out. Every name and value
/// is percent-encoded except RFC 3986's unreserved characters.
enum QueryEncoding {
    static func encode(_ object: [String: JSONValue], style: QueryEncodingStyle = .default) -> String {
        var pairs: [(String, String)] = []
        for key in object.keys.sorted() {
            if let value = object[key] { append(value, name: key, style: style, to: &pairs) }
        }
        return pairs.map { "\(PathEncoding.encodeQueryComponent($0.0))=\(PathEncoding.encodeQueryComponent($0.1))" }
            .joined(separator: "&")
    }

    private static func append(_ value: JSONValue, name: String, style: QueryEncodingStyle, to pairs: inout [(String, String)]) {
        switch value {
        case .null: break
        case .bool(let flag):
            switch style.booleans {
            case .literal: pairs.append((name, flag ? "true" : "false"))
            case .numeric: pairs.append((name, flag ? "1" : "0"))
            }
        case .int(let number): pairs.append((name, String(number)))
        case .double(let number): pairs.append((name, text(of: number)))
        case .string(let text): pairs.append((name, text))
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                let elementName =
                    switch style.arrays {
                    case .brackets: "\(name)[]"
                    case .noBrackets: name
                    case .indexInBrackets: "\(name)[\(index)]"
                    }
                append(element, name: elementName, style: style, to: &pairs)
            }
        case .object(let members):
            for key in members.keys.sorted() {
                if let member = members[key] { append(member, name: "\(name)[\(key)]", style: style, to: &pairs) }
            }
        }
    }

    /// Whole numbers as integers, every digit written (`2`, `1700000000000000`, not `2.0` or
    /// `1.7e+15`), as far as 64 bits hold them; others as Swift prints them.
    static func text(of number: Double) -> String {
        if let whole = Int64(exactly: number) { return String(whole) }
        return String(number)
    }
}

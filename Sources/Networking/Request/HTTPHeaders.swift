/// An ordered collection of HTTP header fields with case-insensitive names.
///
/// Setting a field replaces every field of the same name (compared case-insensitively) and keeps
/// the position of the first one; `add(name:value:)` appends a repeated field. The spelling of
/// the name given last is the one sent.
public struct HTTPHeaders: Sendable, Hashable, Codable, Sequence, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    /// One header field.
    public struct Field: Sendable, Hashable, Codable {
        /// The field name as it will be sent, for example `"Content-Type"`.
        public var name: String
        /// The field value.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    /// Creates an empty collection.
    public init() { fields = [] }

    /// Creates a collection from fields, in order; repeated names are kept.
    public init(_ fields: [Field]) { self.fields = fields }

    /// Creates a collection from a dictionary; fields are sorted by name so the order is stable.
    public init(_ dictionary: [String: String]) {
        fields = dictionary.sorted { $0.key < $1.key }.map { Field(name: $0.key, value: $0.value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = []
        for (name, value) in elements { self[name] = value }
    }

    /// The value of the first field with this name, compared case-insensitively; setting `nil`
    /// removes every field with this name.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveEquals(name) }?.value }
        set {
            guard let newValue else {
                fields.removeAll { $0.name.caseInsensitiveEquals(name) }
                return
            }
            if let index = fields.firstIndex(where: { $0.name.caseInsensitiveEquals(name) }) {
                fields[index] = Field(name: name, value: newValue)
                var next = index + 1
                while next < fields.count {
                    if fields[next].name.caseInsensitiveEquals(name) { fields.remove(at: next) } else { next += 1 }
                }
            } else {
                fields.append(Field(name: name, value: newValue))
            }
        }
    }

    /// Every value of the fields with this name, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// Appends a field without removing earlier ones of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Whether a field with this name is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// The `Age` field in seconds: how long a cache on the way held the response (RFC 9111 §5.1).
    /// The first value when it is a non-negative integer, capped at 2³¹ seconds as the RFC asks of
    /// larger ones; `nil` when absent or not such a number. Time counted from the response's
    /// `Date` adds it: the retry step does for a `Retry-After` date, a response cache for freshness.
    public var age: Double? {
        guard let field = self["Age"] else { return nil }
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let first = (field.split(separator: ",").first ?? "").drop(while: blank).reversed().drop(while: blank).reversed()
        guard !first.isEmpty, first.allSatisfy({ $0.isASCII && $0.isWholeNumber }) else { return nil }
        let digits = first.drop { $0 == "0" }
        return digits.count > 10 ? 2_147_483_648 : Swift.min(Double(String(digits)) ?? 0, 2_147_483_648)
    }

    /// Returns these headers with every field of `other` set on top: the other's fields of a name
    /// replace these, in the place of the first they replace; repeated ones stay repeated (two
    /// `Cookie` fields joined with a comma would be one cookie's value).
    public func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        var result = self
        for name in other.names {
            let replacing = other.fields.filter { $0.name.caseInsensitiveEquals(name) }
            // Every field removed is at or after the first, so it is still the place to insert.
            let first = result.fields.firstIndex { $0.name.caseInsensitiveEquals(name) } ?? result.fields.endIndex
            result.fields.removeAll { $0.name.caseInsensitiveEquals(name) }
            result.fields.insert(contentsOf: replacing, at: first)
        }
        return result
    }

    /// The distinct field names, in order of first appearance.
    public var names: [String] {
        var seen = Set<String>()
        return fields.compactMap { seen.insert($0.name.lowercased()).inserted ? $0.name : nil }
    }

    /// The number of fields, repeated ones counted separately.
    public var count: Int { fields.count }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The fields as a dictionary; repeated fields are joined with `", "`.
    public var dictionary: [String: String] {
        var result: [String: String] = [:]
        for name in names { result[name] = values(for: name).joined(separator: ", ") }
        return result
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.map { [$0.name.lowercased(), $0.value] } == rhs.fields.map { [$0.name.lowercased(), $0.value] }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name.lowercased())
            hasher.combine(field.value)
        }
    }

    /// The fields one per line, with credentials redacted, for logs and error descriptions.
    public var description: String {
        fields.map { "\($0.name): \(Redaction.standard.headerValue(name: $0.name, value: $0.value))" }
            .joined(separator: "\n")
    }
}

/// A value that can stand for header fields: ``HTTPHeaders`` itself, or a `[String: String]`
/// dictionary (its fields sorted by name).
public protocol HTTPHeadersConvertible: Sendable {
    /// The header fields.
    var httpHeaders: HTTPHeaders { get }
}

extension HTTPHeaders: HTTPHeadersConvertible {
    public var httpHeaders: HTTPHeaders { self }
}

extension Dictionary: HTTPHeadersConvertible where Key == String, Value == String {
    public var httpHeaders: HTTPHeaders { HTTPHeaders(self) }
}

extension String {
    func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && lowercased() == other.lowercased()
    }
}

extension HTTPHeaders {
    /// Whether the library treats a field of this name as a credential — `Authorization`,
    /// `Cookie`, and any name holding `token`, `secret`, `password`, `api-key`, `session` and the
    /// like: its value is hidden in logs, descriptions and dumps, and kept from other hosts on
    /// redirects. The built-in names only (a configuration's
    /// ``NetworkingConfiguration/secretFields`` add more). A feature built on the library (a
    /// response cache keeping API keys apart, a batch not copying them into its body) asks this
    /// so that it draws the same line.
    public static func isSecretFieldName(_ name: String) -> Bool { Redaction.standard.isSecret(name) }

    /// Whether a field value can be sent: it holds no control character but a tab (RFC 9110
    /// §5.5), the rule every request is checked by before it is sent. A feature that sends back a
    /// value a server gave (a cache's `ETag` as `If-None-Match`) asks this, so that a value the
    /// transports would refuse is left out rather than fail every later request.
    public static func isSendableFieldValue(_ value: String) -> Bool { !value.utf8.contains(where: HeaderValidation.isForbidden) }
}

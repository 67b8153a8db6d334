import Foundation

/// A JSON document as a value: what request parameters are turned into, and how an error
/// shows the body a server sent.
///
/// Integers and floating-point numbers are kept apart so that identifiers survive a round trip.
/// Objects keep no key order; encoding sorts keys so request bodies built from dictionaries are
/// deterministic (an `Encodable` value's body is its encoder's text: see `Parameters(_:)` of an `Encodable` value).
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral,
    ExpressibleByNilLiteral
{
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number that fits in an `Int`.
    case int(Int)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array, in order.
    case array([JSONValue])
    /// An object; its keys are unordered.
    case object([String: JSONValue])

    /// A string, written as a literal (`"Dune"`).
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer, written as a literal (`42`).
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A floating-point number, written as a literal (`4.5`).
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `true` or `false`, written as a literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array, written as a literal (`[1, "two"]`).
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// `null`, written as `nil`.
    public init(nilLiteral: ()) { self = .null }
    /// An object, written as a literal (`["title": "Dune"]`); of a key written twice, the last wins.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// Parses JSON text; fragments such as `"text"` or `42` are accepted.
    ///
    /// - Throws: `DecodingError` when the data is not valid JSON, or holds a number no `Double`
    ///   holds (`1e999`).
    public init(parsing data: Data) throws {
        // The library's decoder, not JSONDecoder: it is faster, and a number JSONDecoder traps on
        // when `init(from:)` tries it as an integer is an error here (response bodies are parsed
        // for logs and error descriptions).
        self = try FastJSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Reads any JSON value: with this library's decoder by the value's kind (and nested values
    /// without recursion); with another decoder by trying each kind in turn.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let fast = decoder as? FastJSONDecoderImpl {
            self = try Self(fastJSON: fast)
            return
        }
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Writes the value as the JSON it stands for.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The member with this key when the value is an object, otherwise `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at this index when the value is an array and the index is in range, otherwise `nil`.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// The value found by following a dotted key path such as `"page.current"` or `"data.0.id"`.
    ///
    /// At every level, a key with dots in it is found too: the longest run of the remaining
    /// components that is a key of the object wins (`"error.detail.code"` finds
    /// `{"error": {"detail.code": "E1"}}`). Names such as OpenAPI's `post.id` are keys in their
    /// own right (`["post.id": 5]`), and a key that is really there wins over a path that might
    /// also be. A component that is a number indexes an array.
    public func value(atKeyPath keyPath: String) -> JSONValue? {
        if keyPath.contains("."), let member = self[keyPath] { return member }
        let components = keyPath.split(separator: ".")
        var value = self
        var start = 0
        while start < components.count {
            switch value {
            case .object(let members):
                // Only an object with a dotted key pays for trying the longer runs.
                let longest = members.keys.contains { $0.contains(".") } ? components.count : start + 1
                guard
                    let (member, end) = stride(from: longest, to: start, by: -1).lazy.compactMap({ end in
                        members[components[start..<end].joined(separator: ".")].map { ($0, end) }
                    }).first
                else { return nil }
                value = member
                start = end
            case .array(let elements):
                guard let index = Int(components[start]), elements.indices.contains(index) else { return nil }
                value = elements[index]
                start += 1
            default:
                return nil
            }
        }
        return value
    }

    /// The string when the value is a string, otherwise `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number when the value is an integer, otherwise `nil`.
    public var intValue: Int? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// Compact JSON text with sorted keys.
    public var description: String {
        (try? String(decoding: JSONValue.encoder.encode(self), as: UTF8.self)) ?? "null"
    }

    /// Compact JSON data with sorted keys, as sent in request bodies built from dictionaries and arrays.
    public func encoded() throws -> Data { try JSONValue.encoder.encode(self) }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

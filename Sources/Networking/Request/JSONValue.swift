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

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// Parses JSON text; fragments such as `"text"` or `42` are accepted.
    ///
    /// - Throws: `DecodingError` when the data is not valid JSON.
    public init(parsing data: Data) throws {
        // The library's decoder, not JSONDecoder: it is faster, and a number JSONDecoder traps on
        // when `init(from:)` tries it as an integer is an error here (response bodies are parsed
        // for logs and error descriptions).
        self = try FastJSONDecoder().decode(JSONValue.self, from: data)
    }

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
    /// A key path with a dot is looked up as one plain key first, and walked dot by dot only when
    /// the object has no such key: names such as OpenAPI's `post.id` are keys in their own right
    /// (`["post.id": 5]`), and a key that is really there wins over a path that might also be.
    public func value(atKeyPath keyPath: String) -> JSONValue? {
        if keyPath.contains("."), let member = self[keyPath] { return member }
        return keyPath.split(separator: ".").reduce(self as JSONValue?) { value, component in
            guard let value else { return nil }
            if let member = value[String(component)] { return member }
            if let index = Int(component) { return value[index] }
            return nil
        }
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

import Foundation
import Testing

@testable import Networking

// Decodes with Foundation's JSONDecoder and with FastJSONDecoder configured from it, and reports any
// difference: values must be equal; errors must have the same case, coding path (keys compared by
// stringValue and intValue), debugDescription, and type or key.

/// A comparable description of an error.
func describeError(_ error: any Error) -> String {
    func path(_ keys: [any CodingKey]) -> String {
        "[" + keys.map { key in key.intValue.map { "\(key.stringValue)#\($0)" } ?? key.stringValue }.joined(separator: ", ") + "]"
    }
    switch error {
    case DecodingError.typeMismatch(let type, let context):
        return "typeMismatch(\(type)) at \(path(context.codingPath)): \(context.debugDescription)"
    case DecodingError.valueNotFound(let type, let context):
        return "valueNotFound(\(type)) at \(path(context.codingPath)): \(context.debugDescription)"
    case DecodingError.keyNotFound(let key, let context):
        return "keyNotFound(\(path([key]))) at \(path(context.codingPath)): \(context.debugDescription)"
    case DecodingError.dataCorrupted(let context):
        return "dataCorrupted at \(path(context.codingPath)): \(context.debugDescription)"
    case is FastJSONSyntaxError:
        // Mid-decode, before the decoder wraps it, invalid JSON is this internal error; JSONDecoder's
        // is its own internal JSONError. Code that catches it sees a different (internal) type.
        return "invalid JSON (internal error)"
    default:
        if String(reflecting: type(of: error)).hasSuffix(".JSONError") { return "invalid JSON (internal error)" }
        return "other error: \(String(reflecting: error))"
    }
}

/// The result of one decode, ready to compare.
enum Outcome<T>: CustomStringConvertible {
    case value(T)
    case error(String)

    init(_ body: () throws -> T) {
        do {
            self = .value(try body())
        } catch {
            self = .error(describeError(error))
        }
    }

    var description: String {
        switch self {
        case .value(let value): "value \(String(reflecting: value))"
        case .error(let error): error
        }
    }

    func matches(_ other: Outcome<T>, _ equal: (T, T) -> Bool) -> Bool {
        switch (self, other) {
        case (.value(let a), .value(let b)): equal(a, b)
        case (.error(let a), .error(let b)): a == b
        default: false
        }
    }
}

/// Strategies to set on both decoders.
struct Configuration: Sendable, CustomStringConvertible {
    var name = "default"
    var apply: @Sendable (JSONDecoder) -> Void = { _ in }

    static let `default` = Configuration()
    static let snakeCase = Configuration(name: "convertFromSnakeCase") { $0.keyDecodingStrategy = .convertFromSnakeCase }

    var description: String { name }
}

/// Nil when both decoders agree; otherwise what each produced.
func difference<T: Decodable>(
    _ type: T.Type, _ data: Data, _ configuration: Configuration = .default, keyPath: [String]? = nil,
    equal: (T, T) -> Bool
) -> String? {
    let foundation = JSONDecoder()
    configuration.apply(foundation)
    let fast = FastJSONDecoder(foundation)
    let expected: Outcome<T>
    let actual: Outcome<T>
    if let keyPath {
        expected = Outcome { try KeyPathOracle<T>.decode(with: foundation, from: data, keyPath: keyPath) }
        actual = Outcome { try fast.decode(T.self, from: data, keyPath: keyPath) }
    } else {
        expected = Outcome { try foundation.decode(T.self, from: data) }
        actual = Outcome { try fast.decode(T.self, from: data) }
    }
    if expected.matches(actual, equal) { return nil }
    return "JSONDecoder: \(expected)\nFastJSON:    \(actual)"
}

func difference<T: Decodable & Equatable>(
    _ type: T.Type, _ data: Data, _ configuration: Configuration = .default, keyPath: [String]? = nil
) -> String? {
    difference(type, data, configuration, keyPath: keyPath, equal: ==)
}

/// Decodes `json` with both decoders and expects the same value or the same error.
func assertSameAsJSONDecoder<T: Decodable & Equatable>(
    _ type: T.Type, _ json: String, _ configuration: Configuration = .default, keyPath: [String]? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let diff = difference(type, Data(json.utf8), configuration, keyPath: keyPath)
    #expect(diff == nil, "\(T.self) from \(json.debugDescription) [\(configuration)]:\n\(diff ?? "")", sourceLocation: sourceLocation)
}

func assertSameAsJSONDecoder<T: Decodable & Equatable>(
    _ type: T.Type, data: Data, _ configuration: Configuration = .default, keyPath: [String]? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let diff = difference(type, data, configuration, keyPath: keyPath)
    #expect(
        diff == nil,
        "\(T.self) from \(data.count) bytes \(data.prefix(200).map { String(format: "%02x", $0) }.joined()) [\(configuration)]:\n\(diff ?? "")",
        sourceLocation: sourceLocation)
}

/// Reference semantics for `decode(_:from:keyPath:)`, written against JSONDecoder's containers: the
/// value at the end is decoded the way a container decodes a member (so date, data, URL and decimal
/// strategies apply) and a negative index is "no element". Written independently of
/// `FastJSONKeyPathFallback`, which `usesFoundationJSONDecoder` uses, so that both are checked.
struct KeyPathOracle<Value: Decodable>: Decodable {
    let value: Value

    static func decode(with decoder: JSONDecoder, from data: Data, keyPath: [String]) throws -> Value {
        if keyPath.isEmpty { return try decoder.decode(Value.self, from: data) }
        return try KeyPathOracleContext.$components.withValue(keyPath) { try decoder.decode(KeyPathOracle<Value>.self, from: data).value }
    }

    struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// A position in an array, named as `JSONDecoder` names it.
    struct Position: CodingKey {
        let intValue: Int?
        var stringValue: String { "Index \(intValue ?? 0)" }
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    struct Skip: Decodable {
        init(from decoder: any Decoder) throws {}
    }

    init(from decoder: any Decoder) throws {
        let components = KeyPathOracleContext.components
        let first = components[0]
        let rest = Array(components.dropFirst())
        if let index = Int(first), var elements = try? decoder.unkeyedContainer() {
            while elements.currentIndex < index, !elements.isAtEnd { _ = try elements.decode(Skip.self) }
            guard index >= 0, !elements.isAtEnd else {
                throw DecodingError.valueNotFound(
                    Value.self,
                    .init(
                        codingPath: elements.codingPath + [Position(index)], debugDescription: "the array has no element at index \(index)")
                )
            }
            value =
                rest.isEmpty
                ? try elements.decode(Value.self)
                : try KeyPathOracleContext.$components.withValue(rest) { try elements.decode(KeyPathOracle<Value>.self).value }
            return
        }
        let container = try decoder.container(keyedBy: Key.self)
        let key = Key(stringValue: first)
        guard container.contains(key) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: container.codingPath, debugDescription: "no value at key path component \"\(first)\""))
        }
        value =
            rest.isEmpty
            ? try container.decode(Value.self, forKey: key)
            : try KeyPathOracleContext.$components.withValue(rest) { try container.decode(KeyPathOracle<Value>.self, forKey: key).value }
    }
}

enum KeyPathOracleContext {
    @TaskLocal static var components: [String] = []
}

/// Any JSON value, read permissively (each kind tried in turn with `try?`).
indirect enum JSONAnyValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(UInt64)  // a Double's bit pattern, so -0.0 and NaN compare exactly
    case string(String)
    case array([JSONAnyValue])
    case object([String: JSONAnyValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number.bitPattern)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONAnyValue].self) {
            self = .array(array)
        } else {
            self = .object(try decodeObjectInKeyOrder(decoder))
        }
    }
}

/// Decodes an object's members in sorted key order, so that when several members fail both decoders
/// report the same one (JSONDecoder's own dictionary decoding visits keys in hash order).
func decodeObjectInKeyOrder<Value: Decodable>(_ decoder: any Decoder) throws -> [String: Value] {
    let container = try decoder.container(keyedBy: AnyKey.self)
    var result: [String: Value] = [:]
    for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
        result[key.stringValue] = try container.decode(Value.self, forKey: key)
    }
    return result
}

/// Any JSON value, read strictly: only a type mismatch moves on to the next kind, so lazily
/// detected problems (bad numbers, escapes, UTF-8) surface as errors.
indirect enum StrictJSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case string(String)
    case number(UInt64)
    case array([StrictJSONValue])
    case object([String: StrictJSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
            return
        }
        do {
            self = .bool(try container.decode(Bool.self))
            return
        } catch DecodingError.typeMismatch {}
        do {
            self = .string(try container.decode(String.self))
            return
        } catch DecodingError.typeMismatch {}
        do {
            self = .number(try container.decode(Double.self).bitPattern)
            return
        } catch DecodingError.typeMismatch {}
        do {
            self = .array(try [StrictJSONValue](from: decoder))
            return
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.count == decoder.codingPath.count {}
        self = .object(try decodeObjectInKeyOrder(decoder))
    }
}

/// A Double compared by bit pattern (so -0.0 differs from 0.0).
struct ExactDouble: Decodable, Equatable, CustomStringConvertible {
    let bits: UInt64
    init(from decoder: any Decoder) throws { bits = try Double(from: decoder).bitPattern }
    var description: String { "\(Double(bitPattern: bits))" }
}

/// A Float compared by bit pattern.
struct ExactFloat: Decodable, Equatable, CustomStringConvertible {
    let bits: UInt32
    init(from decoder: any Decoder) throws { bits = try Float(from: decoder).bitPattern }
    var description: String { "\(Float(bitPattern: bits))" }
}

/// A coding key for any string.
struct AnyKey: CodingKey, Hashable {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }
    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// Loads a test resource's bytes.
func corpusURL() -> URL? {
    Bundle.module.url(forResource: "Corpus", withExtension: nil)
}

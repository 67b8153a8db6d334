import Foundation

// Differential fuzzing entry point: decodes bytes with Foundation's JSONDecoder and with
// FastJSONDecoder into a few shapes and stops the process when they disagree.
//
// Self-contained on purpose (it uses only Foundation and the FastJSON sources), so that it can be
// compiled into the Networking module next to script/fuzzing/FuzzTarget.swift: drop the
// `@testable import Networking` line there, and call `fastJSONDifferentialFuzz` from the fuzz target.
@testable import Networking

/// Decodes `data` with both decoders into several shapes and strategies, and traps (via
/// `fatalError`, which is what a fuzzer needs to record the input) when any result differs.
func fastJSONDifferentialFuzz(_ data: UnsafeRawBufferPointer) {
    let differences = fastJSONDifferentialCheck(Data(data))
    if !differences.isEmpty {
        fatalError("FastJSONDecoder differs from JSONDecoder:\n" + differences.joined(separator: "\n"))
    }
}

/// The differences between JSONDecoder's and FastJSONDecoder's results for `data`, one line each.
func fastJSONDifferentialCheck(_ data: Data) -> [String] {
    let plain = JSONDecoder()
    let snake = JSONDecoder()
    snake.keyDecodingStrategy = .convertFromSnakeCase
    let dates = JSONDecoder()
    dates.dateDecodingStrategy = .iso8601
    dates.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    var differences: [String] = []
    func compare<T: Decodable & Equatable>(_ type: T.Type, _ decoder: JSONDecoder, keyPath: [String] = [], _ label: String) {
        let expected = FuzzOutcome {
            try keyPath.isEmpty
                ? decoder.decode(T.self, from: data)
                : FastJSONKeyPathFallback<T>.decode(with: decoder, from: data, keyPath: keyPath)
        }
        let actual = FuzzOutcome { try FastJSONDecoder(decoder).decode(T.self, from: data, keyPath: keyPath) }
        if expected != actual {
            differences.append("\(label): JSONDecoder \(expected), FastJSONDecoder \(actual)")
        }
    }
    compare(FuzzValue.self, plain, "value")
    compare(FuzzValue.self, snake, "value, snake case")
    compare(FuzzBook.self, plain, "book")
    compare(FuzzBook.self, snake, "book, snake case")
    compare(FuzzBook.self, dates, "book, dates")
    compare([FuzzBook].self, plain, keyPath: ["data"], "books at data")
    compare(FuzzBook.self, plain, keyPath: ["page", "items"], "book at page.items")
    compare(FuzzValue.self, snake, keyPath: ["data", "0"], "value at data.0")
    compare([String: Double].self, snake, "[String: Double], snake case")
    compare([Int64?].self, plain, "[Int64?]")
    return differences
}

/// A decode's value or error, comparable across decoders: values by equality, errors by case,
/// coding path, description and type or key.
enum FuzzOutcome<T: Equatable>: Equatable, CustomStringConvertible {
    case value(T)
    case error(String)

    init(_ body: () throws -> T) {
        do {
            self = .value(try body())
        } catch {
            self = .error(FuzzOutcome.describe(error))
        }
    }

    static func describe(_ error: any Error) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { key in key.intValue.map { "\(key.stringValue)#\($0)" } ?? key.stringValue }.joined(separator: "/")
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
        default:
            return "\(type(of: error)): \(error)"
        }
    }

    var description: String {
        switch self {
        case .value(let value): "value \(value)"
        case .error(let error): error
        }
    }
}

/// Any JSON value; only a type mismatch moves on to the next kind, so lazily found problems
/// (numbers, escapes, UTF-8) surface as errors. Objects are read in sorted key order, because
/// JSONDecoder's own dictionary decoding visits keys in hash order.
indirect enum FuzzValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case string(String)
    case integer(Int64)
    case number(UInt64)
    case array([FuzzValue])
    case object([String: FuzzValue])

    struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

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
        if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
            return
        }
        do {
            self = .number(try container.decode(Double.self).bitPattern)
            return
        } catch DecodingError.typeMismatch {}
        if var elements = try? decoder.unkeyedContainer() {
            var array: [FuzzValue] = []
            while !elements.isAtEnd { array.append(try elements.decode(FuzzValue.self)) }
            self = .array(array)
            return
        }
        let members = try decoder.container(keyedBy: Key.self)
        var object: [String: FuzzValue] = [:]
        for key in members.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            object[key.stringValue] = try members.decode(FuzzValue.self, forKey: key)
        }
        self = .object(object)
    }
}

/// A model with the shapes APIs send: numbers, strings, optionals, an enum, nesting, dates.
struct FuzzBook: Decodable, Equatable {
    enum Genre: String, Decodable { case fiction, poetry }
    let id: Int
    let title: String
    let rating: Double?
    let genre: Genre
    let tags: [String]
    let published: Date?
    let coverUrl: URL?
    let price: Decimal?
    let nested: [FuzzBook]?
}

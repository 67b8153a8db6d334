import Foundation
import Testing

@testable import Networking

/// Random JSON documents and random byte mutations of them, decoded into a few generic shapes by
/// both decoders. Failures print the seed and input (and are saved for the corpus).
@Suite struct RandomTests {
    struct Shape: Decodable, Equatable {
        let a: Int?
        let b: String?
        let id: Double?
        // swift-format-ignore: AlwaysUseLowerCamelCase
        let super_: [StrictJSONValue]?
        let aB: [String: StrictJSONValue]?

        enum CodingKeys: String, CodingKey {
            case a, b, id
            // swift-format-ignore: AlwaysUseLowerCamelCase
            case super_ = "super"
            case aB
        }
    }

    struct Generator {
        var rng: SplitMix64

        static let keys = ["a", "b", "id", "a_b", "aB", "user_id", "\\u0061", "é", "x\\ny", "", "super", "a_", "ID", "\\ud83d\\ude00"]
        static let numbers = [
            "0", "-0", "1", "-1", "12", "1.5", "-2.25", "1e3", "1E-3", "1.0", "9007199254740993", "18446744073709551615",
            "-9223372036854775808", "1e400", "1e-400", "0.1", "3.14159265358979323846", "123456789012345678901234567890", "01", "1.",
            "-", "1e", "2.5e+10", "255", "256", "-129",
        ]
        static let stringPieces = [
            "a", "hello", "é", "日本", "😀", "\\n", "\\\"", "\\\\", "\\/", "\\u0041", "\\u00e9", "\\ud83d\\ude00", "\\ud800",
            "\\udc00", "\\x", "\\u12G4", " ", "_", "YQ==", "2024-01-02T03:04:05Z", "https://a.b",
        ]

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

        mutating func space() -> String {
            switch int(0...9) {
            case 0: " "
            case 1: "\n  "
            case 2: "\t"
            default: ""
            }
        }

        mutating func string() -> String {
            "\"" + (0..<int(0...3)).map { _ in Self.stringPieces[int(0...Self.stringPieces.count - 1)] }.joined() + "\""
        }

        mutating func value(_ depth: Int) -> String {
            let kind = depth > 4 ? int(0...4) : int(0...7)
            switch kind {
            case 0: return ["null", "true", "false"][int(0...2)]
            case 1, 2: return Self.numbers[int(0...Self.numbers.count - 1)]
            case 3, 4: return string()
            case 5: return "[" + (0..<int(0...4)).map { _ in space() + value(depth + 1) + space() }.joined(separator: ",") + "]"
            default:
                let members = (0..<int(0...5)).map { _ in
                    space() + "\"" + Self.keys[int(0...Self.keys.count - 1)] + "\"" + space() + ":" + space() + value(depth + 1)
                }
                return "{" + members.joined(separator: ",") + space() + "}"
            }
        }

        mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
            var bytes = bytes
            let alphabet = Array("{}[]:,\"\\0123456789eE+-.tfnul _aé\u{0}\t\n".utf8) + [0xFF, 0xC3, 0xED, 0xA0]
            for _ in 0..<int(1...3) {
                let position = bytes.isEmpty ? 0 : int(0...bytes.count - 1)
                switch int(0...5) {
                case 0 where !bytes.isEmpty: bytes[position] = alphabet[int(0...alphabet.count - 1)]
                case 1: bytes.insert(alphabet[int(0...alphabet.count - 1)], at: position)
                case 2 where !bytes.isEmpty: bytes.removeSubrange(position..<min(bytes.count, position + int(1...4)))
                case 3 where !bytes.isEmpty: bytes = Array(bytes[..<position])
                case 4 where !bytes.isEmpty:
                    let end = min(bytes.count, position + int(1...8))
                    bytes.insert(contentsOf: bytes[position..<end], at: position)
                default: if !bytes.isEmpty { bytes[position] ^= UInt8(1 << int(0...7)) }
                }
            }
            return bytes
        }
    }

    /// Every shape's difference for `data`, or nil.
    static func differences(_ data: Data) -> [String] {
        var found: [String] = []
        func check(_ diff: String?, _ shape: String) { if let diff { found.append("\(shape): \(diff)") } }
        check(difference(JSONAnyValue.self, data), "JSONAnyValue")
        check(difference(StrictJSONValue.self, data), "StrictJSONValue")
        check(difference(StrictJSONValue.self, data, .snakeCase), "StrictJSONValue snake")
        check(difference(Shape.self, data), "Shape")
        check(difference(Shape.self, data, .snakeCase), "Shape snake")
        check(difference([String: Int].self, data, .snakeCase), "[String: Int] snake")
        check(difference([StrictJSONValue].self, data), "[StrictJSONValue]")
        check(difference([Int?].self, data), "[Int?]")
        // With default keys JSONDecoder's choice among several failing members varies, so only
        // success, failure and values are compared.
        let foundation = Outcome { try JSONDecoder().decode([String: Int].self, from: data) }
        let fast = Outcome { try FastJSONDecoder(JSONDecoder()).decode([String: Int].self, from: data) }
        switch (foundation, fast) {
        case (.value(let a), .value(let b)) where a == b: break
        case (.error, .error): break
        default: found.append("[String: Int]: JSONDecoder: \(foundation)\nFastJSON:    \(fast)")
        }
        return found
    }

    static func record(_ data: Data, _ failures: [String], seed: UInt64) {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("fastjson-failures")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? data.write(to: directory.appendingPathComponent("random-\(seed).json"))
        Issue.record("seed \(seed), input \(String(decoding: data, as: UTF8.self).debugDescription):\n\(failures.joined(separator: "\n"))")
    }

    /// Rounds per batch; set FASTJSON_RANDOM_ROUNDS for a longer campaign.
    static let rounds = ProcessInfo.processInfo.environment["FASTJSON_RANDOM_ROUNDS"].flatMap(Int.init) ?? 400

    @Test(arguments: 0..<8)
    func randomDocuments(_ batch: Int) {
        var failures = 0
        for round in 0..<Self.rounds {
            let seed = UInt64(batch * 100_000 + round)
            var generator = Generator(rng: SplitMix64(seed: seed))
            let text = generator.space() + generator.value(0) + generator.space()
            let data = Data(text.utf8)
            let found = Self.differences(data)
            if !found.isEmpty {
                Self.record(data, found, seed: seed)
                failures += 1
            }
            let mutated = Data(generator.mutate(Array(data)))
            let foundMutated = Self.differences(mutated)
            if !foundMutated.isEmpty {
                Self.record(mutated, foundMutated, seed: seed)
                failures += 1
            }
            if failures > 10 { return }
        }
    }
}

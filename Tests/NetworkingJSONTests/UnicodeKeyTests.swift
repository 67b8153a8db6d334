import Foundation
import Testing

@testable import Networking

/// Object keys are matched as JSONDecoder matches them: as Swift strings, so canonically equivalent
/// spellings ("é" precomposed or as "e" and a combining accent, the Kelvin sign and "K") are one
/// key, and of duplicates the first in the document wins.
@Suite struct UnicodeKeyTests {
    /// Reports what a keyed container says about each spelling: presence, value, and the exact
    /// scalars of `allKeys` (strings that compare equal could still be spelt differently).
    struct KeyReport: Decodable, Equatable {
        var log: [String] = []

        static let spellings = [
            "caf\u{E9}", "cafe\u{301}", "K", "\u{212A}", ";", "\u{37E}", "`", "\u{1FEF}", "\u{C5}", "A\u{30A}", "\u{212B}", "k3",
            "missing", "caf", "cafe",
        ]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            for spelling in Self.spellings {
                let key = AnyKey(stringValue: spelling)
                let name = Self.scalars(spelling)
                log.append("\(name) contains=\(container.contains(key))")
                do {
                    log.append("\(name)=\(String(describing: try container.decodeIfPresent(Int.self, forKey: key)))")
                } catch {
                    log.append("\(name) threw \(describeError(error))")
                }
            }
            log.append("allKeys=" + container.allKeys.map { Self.scalars($0.stringValue) }.sorted().joined(separator: ","))
        }

        /// The scalars of a string in hex, so that two spellings never compare equal.
        static func scalars(_ string: String) -> String {
            string.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ")
        }
    }

    struct Precomposed: Decodable, Equatable {
        let value: Int
        enum CodingKeys: String, CodingKey { case value = "caf\u{E9}" }
    }

    struct Decomposed: Decodable, Equatable {
        let value: Int
        enum CodingKeys: String, CodingKey { case value = "cafe\u{301}" }
    }

    struct Kelvin: Decodable, Equatable {
        let k: Int?
        let sign: Int?
        enum CodingKeys: String, CodingKey {
            case k = "K"
            case sign = "\u{212A}"
        }
    }

    static let objects = [
        #"{"caf\u00e9":1}"#, #"{"cafe\u0301":1}"#, "{\"caf\u{E9}\":1}", "{\"cafe\u{301}\":1}",
        #"{"caf\u00e9":1,"cafe\u0301":2}"#, #"{"cafe\u0301":1,"caf\u00e9":2}"#, "{\"cafe\u{301}\":1,\"caf\u{E9}\":2,\"cafe\u{301}\":3}",
        #"{"\u212A":1}"#, #"{"K":1}"#, #"{"K":1,"\u212A":2}"#, #"{"\u212A":1,"K":2}"#, "{\"\u{212A}\":1,\"K\":2}",
        #"{"\u037e":1,";":2}"#, #"{";":1,"\u037e":2}"#, #"{"\u1fef":1}"#, #"{"\u00c5":1,"A\u030a":2,"\u212b":3}"#,
        #"{"\u212b":1,"\u00c5":2}"#, #"{"k3":1,"caf\u00e9":2}"#, #"{"cafe":1,"caf":2}"#, "{}",
    ]

    @Test("Equivalent spellings of a key are one key, and the first of them wins", arguments: objects)
    func equivalentKeys(_ json: String) {
        for configuration in [Configuration.default, .snakeCase] {
            assertSameAsJSONDecoder(KeyReport.self, json, configuration)
            assertSameAsJSONDecoder(Precomposed.self, json, configuration)
            assertSameAsJSONDecoder(Decomposed.self, json, configuration)
            assertSameAsJSONDecoder(Kelvin.self, json, configuration)
            assertSameAsJSONDecoder([String: Int].self, json, configuration)
            assertSameAsJSONDecoder(StrictJSONValue.self, json, configuration)
            assertSameAsJSONDecoder([KeyReport].self, "[" + json + "," + json + "]", configuration)
        }
    }

    /// Objects large enough for a hashed key table, with equivalent spellings before and after the
    /// ASCII keys (a dropped duplicate rebuilds the hash index).
    @Test("Equivalent keys in large objects", arguments: [0, 1, 2])
    func largeObjects(_ layout: Int) {
        let ascii = (0..<40).map { "\"k\($0)\":\($0)" }
        let accented = [#""cafe\u0301":100"#, #""caf\u00e9":101"#, #""\u212A":102"#, #""K":103"#]
        let members: [String]
        switch layout {
        case 0: members = accented + ascii
        case 1: members = ascii + accented
        default: members = Array(ascii[..<20]) + accented + Array(ascii[20...]) + accented.reversed()
        }
        let json = "{" + members.joined(separator: ",") + "}"
        assertSameAsJSONDecoder(KeyReport.self, json)
        assertSameAsJSONDecoder(Precomposed.self, json)
        assertSameAsJSONDecoder(Kelvin.self, json)
        assertSameAsJSONDecoder([String: Int].self, json)
        assertSameAsJSONDecoder([String: Int].self, json, .snakeCase)
        assertSameAsJSONDecoder(StrictJSONValue.self, json)
    }

    @Test("A non-ASCII snake-case key is converted by JSONDecoder once, then from a bounded table")
    func convertedKeysAreKept() {
        // Before, each occurrence of such a key built and ran a JSONDecoder of its own.
        let converted = FastJSONSnakeCase.convertExactly("prénom_usuel")
        #expect(converted == "prénomUsuel")
        #expect(FastJSONSnakeCase.conversions.withLock { $0["prénom_usuel"] } == converted)
        #expect(FastJSONSnakeCase.convertExactly("prénom_usuel") == converted)
        // However many new keys a server sends, the table stays bounded.
        for number in 0..<(FastJSONSnakeCase.keptConversions + 10) { _ = FastJSONSnakeCase.convertExactly("clé_\(number)") }
        #expect(FastJSONSnakeCase.conversions.withLock { $0.count } <= FastJSONSnakeCase.keptConversions)
        #expect(FastJSONSnakeCase.convertExactly("clé_7") == "clé7")
    }

    @Test("convert(_:) converts an ASCII key on its bytes as JSONDecoder does, and any other key through it")
    func convertMatchesJSONDecoder() {
        let keys = [
            "user_id", "_leading", "trailing_", "a__b", "__", "", "URL_value", "x_y_z", "one", "it's_o'clock", "a_1b", "prénom_usuel",
        ]
        for key in keys {
            #expect(FastJSONSnakeCase.convert(key) == FastJSONSnakeCase.convertExactly(key), "\(key)")
        }
        #expect(FastJSONSnakeCase.convert("user_id") == "userId")
    }

    @Test("A custom key strategy that makes non-ASCII keys compares them as strings")
    func customStrategy() {
        let custom = Configuration(name: "custom to decomposed") {
            $0.keyDecodingStrategy = .custom { path in
                let last = path.last?.stringValue ?? ""
                return AnyKey(stringValue: last == "plain" ? "cafe\u{301}" : last)
            }
        }
        for json in [#"{"plain":1}"#, #"{"plain":1,"caf\u00e9":2}"#, #"{"caf\u00e9":2,"plain":1}"#, #"{"x":{"plain":3}}"#] {
            assertSameAsJSONDecoder(KeyReport.self, json, custom)
            assertSameAsJSONDecoder(Precomposed.self, json, custom)
            assertSameAsJSONDecoder(Wrapper<Precomposed>.self, json.replacingOccurrences(of: "\"x\"", with: "\"value\""), custom)
        }
    }

    @Test("Key paths match keys as strings too")
    func keyPaths() {
        let json = #"{"caf\u00e9":{"K":5,"list":[{"\u212A":6}]},"cafe\u0301":{"K":7}}"#
        let paths: [[String]] = [
            ["caf\u{E9}", "K"], ["cafe\u{301}", "K"], ["cafe\u{301}", "\u{212A}"], ["caf\u{E9}", "list", "0", "K"],
            ["caf\u{E9}", "list", "0", "\u{212A}"], ["cafe", "K"],
        ]
        for path in paths {
            assertSameAsJSONDecoder(Int.self, json, keyPath: path)
            assertSameAsJSONDecoder(Int.self, json, .snakeCase, keyPath: path)
        }
    }

    @Test("The decoded value is the first spelling's")
    func firstSpellingWins() throws {
        let json = Data(#"{"cafe\u0301":1,"caf\u00e9":2}"#.utf8)
        #expect(try FastJSONDecoder().decode(Precomposed.self, from: json).value == 1)
        #expect(try FastJSONDecoder().decode(Decomposed.self, from: json).value == 1)
        let kelvin = try FastJSONDecoder().decode(Kelvin.self, from: Data(#"{"\u212A":1}"#.utf8))
        #expect(kelvin == Kelvin(k: 1, sign: 1))
    }
}

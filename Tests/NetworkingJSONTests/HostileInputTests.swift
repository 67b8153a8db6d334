import Foundation
import Testing

@testable import Networking

/// Inputs meant to break a decoder: huge strings, extreme nesting, every truncation of a document.
/// FastJSONDecoder must answer each with JSONDecoder's result and never crash.
@Suite struct HostileInputTests {
    /// Runs `body` on the one thread with a large stack (deep `init(from:)` recursion in debug
    /// builds), after the bodies queued before it, and waits without holding one of Swift's
    /// cooperative threads. One at a time: these checks are CPU-bound, and on a 2-core machine a
    /// thread per check starves the timing-sensitive tests running beside them.
    static func onLargeStack<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            LargeStackWorker.shared.enqueue { continuation.resume(returning: body()) }
        }
    }

    /// An element of over half a kilobyte.
    struct Wide: Decodable, Equatable {
        let fields: [String?]
        let a, b, c, d, e, f, g, h: (String?, String?, String?, String?)?

        static func == (lhs: Wide, rhs: Wide) -> Bool { lhs.fields == rhs.fields }

        init(from decoder: any Decoder) throws {
            fields = try decoder.singleValueContainer().decode([String?].self)
            (a, b, c, d, e, f, g, h) = (nil, nil, nil, nil, nil, nil, nil, nil)
        }
    }

    @Test("A huge array or object of invalid elements fails at the first, without reserving room for all of them")
    func hugeCollectionsOfInvalidElements() async {
        #expect(MemoryLayout<Wide>.stride > 500)
        #expect(fastJSONReservation(count: 10_000_000, stride: 1024) == 4096)
        #expect(fastJSONReservation(count: 100, stride: 1024) == 100)
        #expect(fastJSONReservation(count: 5, stride: 0) == 5)
        await Self.onLargeStack {
            assertSameAsJSONDecoder([Wide].self, "[" + Array(repeating: "0", count: 1_000_000).joined(separator: ",") + "]")
            let members = Array(repeating: #""a":0"#, count: 300_000).joined(separator: ",")
            assertSameAsJSONDecoder([String: Wide].self, "{" + members + "}", .snakeCase)
        }
    }

    @Test func tenMegabyteString() async {
        await Self.onLargeStack { Self.tenMegabyteStringChecks() }
    }

    static func tenMegabyteStringChecks() {
        let content = String(repeating: "abcdefghij", count: 1_000_000)
        let json = "\"" + content + "\""
        assertSameAsJSONDecoder(String.self, json)
        assertSameAsJSONDecoder(Int.self, json)
        assertSameAsJSONDecoder(String.self, String(json.dropLast()))
        assertSameAsJSONDecoder([String].self, "[" + json + "]")
        assertSameAsJSONDecoder(Wrapper<String>.self, #"{"value":"# + json + "}")
        let escaped = "\"" + String(repeating: "abc\\n\\u00e9\\ud83d\\ude00", count: 400_000) + "\""
        assertSameAsJSONDecoder(String.self, escaped)
        assertSameAsJSONDecoder(String.self, String(escaped.dropLast(2)) + "\"")
        let nonASCII = "\"" + String(repeating: "é日本😀", count: 800_000) + "\""
        assertSameAsJSONDecoder(String.self, nonASCII)
        var invalid = Array(nonASCII.utf8)
        invalid[invalid.count / 2] = 0xFF
        assertSameAsJSONDecoder(String.self, data: Data(invalid))
        assertSameAsJSONDecoder(StrictJSONValue.self, data: Data(invalid))
    }

    @Test(arguments: [
        String(repeating: "[", count: 100_000),
        String(repeating: "{\"a\":", count: 100_000),
        String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000),
        String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000),
        String(repeating: "[{\"a\":", count: 50_000),
        String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
        String(repeating: "[", count: 512) + String(repeating: "]", count: 512),
        String(repeating: "[", count: 511) + "{}" + String(repeating: "]", count: 511),
        String(repeating: "[", count: 511) + "{\"a\":[]}" + String(repeating: "]", count: 511),
        String(repeating: "{\"a\":", count: 512) + "1" + String(repeating: "}", count: 512),
        String(repeating: "{\"a\":", count: 511) + "1" + String(repeating: "}", count: 511),
        String(repeating: "[", count: 512) + String(repeating: "]", count: 511),
        String(repeating: "[1,", count: 100_000),
        String(repeating: "\"", count: 100_001),
        String(repeating: "\\", count: 100_000),
        String(repeating: "1", count: 100_000),
        "[" + String(repeating: "1,", count: 50_000) + "1]",
        "{" + (0..<10_000).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}",
        "{" + (0..<20_000).map { _ in "\"k\":1" }.joined(separator: ",") + "}",
    ])
    func extremeStructure(_ json: String) async {
        await HostileInputTests.onLargeStack {
            assertSameAsJSONDecoder(StrictJSONValue.self, json)
            assertSameAsJSONDecoder(Int.self, json)
            assertSameAsJSONDecoder([String: Int].self, json, .snakeCase)
        }
    }

    /// Every prefix of a document: each must fail (or succeed) exactly as with JSONDecoder.
    @Test func everyTruncation() {
        let document = #"""
            {"id": 12, "title": "The River \u00e9 \ud83d\ude00", "author": "Ursula Quill", "genre": "novel", "year": 1987,
             "imageUrl": "https:\/\/example.com\/covers\/12.png", "rating": 4.5e0, "available": true, "tags": ["a", "b", null],
             "extra": {"nested": [1, -2.5, 1e-3, {"deep": [true, false, null]}]}}
            """#
        let bytes = Array(document.utf8)
        for end in 0...bytes.count {
            let data = Data(bytes[..<end])
            assertSameAsJSONDecoder(Book.self, data: data)
            assertSameAsJSONDecoder(StrictJSONValue.self, data: data)
            assertSameAsJSONDecoder(Book.self, data: data, keyPath: ["extra"])
            let suffix = Data(bytes[end...])
            assertSameAsJSONDecoder(StrictJSONValue.self, data: suffix)
        }
    }

    /// Objects around the size where key tables get a hash index, with and without duplicates
    /// (libFuzzer found a table whose duplicates changed its hash capacity).
    @Test(arguments: 14...70)
    func hashedTables(_ size: Int) {
        let unique = "{" + (0..<size).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        let duplicated = "{" + (0..<size).map { "\"k\($0 % max(1, size - size / 3))\":\($0)" }.joined(separator: ",") + "}"
        for json in [unique, duplicated] {
            assertSameAsJSONDecoder(StrictJSONValue.self, json)
            assertSameAsJSONDecoder(StrictJSONValue.self, json, .snakeCase)
            assertSameAsJSONDecoder([String: Int].self, json, .snakeCase)
        }
    }

    /// Very many keys in one object use the hashed key table; duplicates keep the first value.
    @Test func largeObjects() {
        let keys = (0..<3_000).map { "key_\($0 % 2_500)" }
        let json = "{" + keys.enumerated().map { "\"\($1)\":\($0)" }.joined(separator: ",") + "}"
        assertSameAsJSONDecoder([String: Int].self, json)
        assertSameAsJSONDecoder([String: Int].self, json, .snakeCase)
        assertSameAsJSONDecoder(StrictJSONValue.self, json)
        assertSameAsJSONDecoder(StrictJSONValue.self, json, .snakeCase)
        struct Few: Decodable, Equatable {
            // swift-format-ignore: AlwaysUseLowerCamelCase
            let key_7: Int
            // swift-format-ignore: AlwaysUseLowerCamelCase
            let key_2499: Int
            // swift-format-ignore: AlwaysUseLowerCamelCase
            let key_0: Int
            let missing: Int?
        }
        assertSameAsJSONDecoder(Few.self, json)
        assertSameAsJSONDecoder([Few].self, "[" + json + "," + json + "]")
    }

    /// Keys of 16 bytes that all hash alike under a fixed multiply-xorshift hash of 8-byte words
    /// (the key tables' hash before it was seeded): the second word cancels the state the first
    /// one left. Its bytes are escaped (`\u00XX`), so any ASCII byte will do.
    static func keysCollidingUnderAFixedHash(_ count: Int) -> (keys: [[UInt8]], json: String) {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        let hexDigits = Array("0123456789abcdef".utf8)
        var keys: [[UInt8]] = []
        var members: [String] = []
        var candidate: UInt64 = 0
        while keys.count < count {
            candidate &+= 1
            let first = (0..<8).map { hexDigits[Int((candidate >> UInt64(4 * (7 - $0))) & 15)] }
            let word = first.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << UInt64(8 * $1.offset) }
            var state = ((0xCBF2_9CE4_8422_2325 ^ 16) ^ word) &* multiplier
            state ^= state >> 29
            let second = state ^ 0x0123_4567_89AB_CDEF
            guard second & 0x8080_8080_8080_8080 == 0 else { continue }
            let secondBytes = (0..<8).map { UInt8(truncatingIfNeeded: second >> UInt64(8 * $0)) }
            keys.append(first + secondBytes)
            let escaped = secondBytes.map { "\\u00" + String(hexDigits[Int($0 >> 4)]) + String(hexDigits[Int($0 & 15)]) }
            members.append("\"" + String(decoding: first, as: UTF8.self) + escaped.joined() + "\":\(keys.count)")
        }
        return (keys, "{" + members.joined(separator: ",") + "}")
    }

    @Test("JSONValue reads each value by its kind: what JSONDecoder reads, and no failed try per leaf of a deep error body")
    func jsonValueByKind() async throws {
        let document = Data(
            #"[null, true, false, 1, -0, 1.0, 1e2, -0.0, 1e-400, 1.5, 9223372036854775808, "s\u00e9", [], {}, {"a": [1, {"b": null}]}]"#
                .utf8)
        #expect(try JSONValue(parsing: document) == JSONDecoder().decode(JSONValue.self, from: document))
        // A decoder that reads non-conforming floats from strings reads them as numbers, as before.
        let strings = JSONDecoder()
        strings.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        let special = Data(#"["+inf", "x"]"#.utf8)
        #expect(try FastJSONDecoder(strings).decode(JSONValue.self, from: special) == strings.decode(JSONValue.self, from: special))
        // Strings and arrays 500 levels down: each miss of a type tried in turn would build an
        // error holding a 500-step coding path.
        let leaves = Array(repeating: #""x", [], 1.5"#, count: 5_000).joined(separator: ", ")
        let deep = Data((String(repeating: "[", count: 499) + "[" + leaves + "]" + String(repeating: "]", count: 499)).utf8)
        let parsed = await Self.onLargeStack { try? JSONValue(parsing: deep) }
        var level = try #require(parsed)
        for _ in 0..<499 {
            guard case .array(let inner) = level, inner.count == 1 else { break }
            level = inner[0]
        }
        guard case .array(let items) = level else {
            Issue.record("expected the innermost array")
            return
        }
        #expect(items.count == 15_000 && items.prefix(3) == [.string("x"), .array([]), .double(1.5)])
    }

    /// A server that knows the key tables' hash could make every key of an object land in one slot,
    /// and building the table quadratic (minutes for a 9 MB object). The hash is seeded per process.
    @Test func keysChosenToCollide() {
        let (keys, json) = Self.keysCollidingUnderAFixedHash(2_000)
        let hashes = Set(keys.map { key in key.withUnsafeBufferPointer { FastJSONReader.hash($0.baseAddress!, $0.count) } })
        #expect(hashes.count > 1_990)
        assertSameAsJSONDecoder([String: Int].self, json)
    }

    /// Containers and decoders kept after their init(from:) returned still answer correctly.
    @Test func escapedContainers() throws {
        final class Keeper: Decodable, @unchecked Sendable {
            let container: KeyedDecodingContainer<AnyKey>
            let decoder: any Decoder
            required init(from decoder: any Decoder) throws {
                container = try decoder.container(keyedBy: AnyKey.self)
                self.decoder = decoder
            }
        }
        struct Outer: Decodable {
            let first: Keeper
            let second: [Int]
        }
        let json = Data(#"{"first":{"a":1,"b":"x"},"second":[1,2,3]}"#.utf8)
        let fast = try FastJSONDecoder(JSONDecoder()).decode(Outer.self, from: json)
        let foundation = try JSONDecoder().decode(Outer.self, from: json)
        for keeper in [fast.first, foundation.first] {
            // A kept container keeps the coding path it was made with.
            #expect(keeper.container.codingPath.map(\.stringValue) == ["first"])
            #expect(try keeper.container.decode(Int.self, forKey: AnyKey(stringValue: "a")) == 1)
            #expect(try keeper.container.decode(String.self, forKey: AnyKey(stringValue: "b")) == "x")
            #expect(keeper.container.allKeys.map(\.stringValue).sorted() == ["a", "b"])
            #expect(!keeper.container.contains(AnyKey(stringValue: "c")))
        }
        // Using the kept decoder must not crash (its answer after the decode is unspecified).
        _ = try? fast.first.decoder.singleValueContainer().decode(Int.self)
        _ = try? fast.first.decoder.container(keyedBy: AnyKey.self).allKeys
    }
}

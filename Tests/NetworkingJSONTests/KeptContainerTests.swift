import Foundation
import Testing

@testable import Networking

/// Containers and decoders a model keeps after its `init(from:)` returned report the coding path
/// they were made with, as JSONDecoder's do, and still decode with the right paths in errors.
@Suite struct KeptContainerTests {
    /// Keeps every kind of container and a super decoder.
    final class Keeper: Decodable {
        let keyed: KeyedDecodingContainer<AnyKey>
        let nested: KeyedDecodingContainer<AnyKey>
        let list: any UnkeyedDecodingContainer
        let superDecoder: any Decoder

        required init(from decoder: any Decoder) throws {
            keyed = try decoder.container(keyedBy: AnyKey.self)
            nested = try keyed.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(stringValue: "inner"))
            list = try keyed.nestedUnkeyedContainer(forKey: AnyKey(stringValue: "list"))
            superDecoder = try keyed.superDecoder(forKey: AnyKey(stringValue: "inner"))
        }
    }

    struct Outer: Decodable {
        let first: Keeper
        let second: [Keeper]
        let third: Wrapper<[Int]>
        let fourth: [String: Keeper]
    }

    static let document = #"""
        {"first":{"inner":{"x":1},"list":[1,"a"]},
         "second":[{"inner":{"x":2},"list":[]},{"inner":{"x":"3"},"list":[true]}],
         "third":{"value":[1,2,3]},"fourth":{"k":{"inner":{"y":4},"list":[null]}}}
        """#

    @Test("Kept containers and decoders keep their coding paths", arguments: [Configuration.default, .snakeCase])
    func keptPaths(_ configuration: Configuration) throws {
        let data = Data(Self.document.utf8)
        let foundationDecoder = JSONDecoder()
        configuration.apply(foundationDecoder)
        let foundation = try foundationDecoder.decode(Outer.self, from: data)
        let fast = try FastJSONDecoder(foundationDecoder).decode(Outer.self, from: data)
        let expected = Self.report(foundation)
        let actual = Self.report(fast)
        #expect(actual == expected, "[\(configuration)]\nJSONDecoder: \(expected)\nFastJSON:    \(actual)")
        #expect(Self.path(fast.first.keyed.codingPath) == "[first]")
        #expect(Self.path(fast.second[1].nested.codingPath) == "[second, Index 1#1, inner]")
    }

    /// What each kept container says, and what decoding through it gives, after the decode.
    static func report(_ outer: Outer) -> [String] {
        var keepers = [("first", outer.first)]
        for (index, keeper) in outer.second.enumerated() { keepers.append(("second \(index)", keeper)) }
        for (key, keeper) in outer.fourth { keepers.append(("fourth \(key)", keeper)) }
        var lines: [String] = []
        for (name, keeper) in keepers {
            lines.append("\(name) keyed \(path(keeper.keyed.codingPath))")
            lines.append("\(name) nested \(path(keeper.nested.codingPath))")
            lines.append("\(name) list \(path(keeper.list.codingPath))")
            lines.append("\(name) super \(path(keeper.superDecoder.codingPath))")
            lines.append("\(name) x: " + outcome { String(try keeper.nested.decode(Int.self, forKey: AnyKey(stringValue: "x"))) })
            lines.append("\(name) x as text: " + outcome { try keeper.nested.decode(String.self, forKey: AnyKey(stringValue: "x")) })
            lines.append(
                "\(name) inner as wrapper: "
                    + outcome { String(describing: try keeper.keyed.decode(Wrapper<Int>.self, forKey: AnyKey(stringValue: "inner"))) })
            var list = keeper.list
            lines.append("\(name) list text: " + outcome { try list.decode(String.self) })
            lines.append(
                "\(name) super x: "
                    + outcome {
                        String(try keeper.superDecoder.container(keyedBy: AnyKey.self).decode(Int.self, forKey: AnyKey(stringValue: "x")))
                    })
        }
        return lines
    }

    /// A model that decodes the same member far more often than the document has values, which
    /// makes path nodes be reused again; results and error paths must not change.
    struct Repeater: Decodable, Equatable {
        let sums: [Int]
        let last: [Int]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            var sums: [Int] = []
            for _ in 0..<600 {
                sums.append(try container.decode([Int].self, forKey: AnyKey(stringValue: "a")).reduce(0, &+))
            }
            self.sums = sums
            last = try container.decode([Int].self, forKey: AnyKey(stringValue: "b"))
        }
    }

    @Test("Decoding the same values many times keeps results and error paths")
    func manyDecodes() {
        for json in [#"{"a":[1,2,3],"b":[4]}"#, #"{"a":[1,2,3],"b":[4,"x"]}"#, #"{"a":[1,2,"x"],"b":[]}"#] {
            assertSameAsJSONDecoder(Repeater.self, json)
            assertSameAsJSONDecoder([Repeater].self, "[" + json + "," + json + "]")
            assertSameAsJSONDecoder(Wrapper<Repeater>.self, #"{"value":"# + json + "}")
        }
        // Past the limit, a kept container's path may be lost, but using it must not crash.
        let json = Data(#"{"value":{"a":[1],"b":[2]},"keeper":{"inner":{"x":1},"list":[]}}"#.utf8)
        struct Both: Decodable {
            let value: Repeater
            let keeper: Keeper
        }
        let both = try? FastJSONDecoder().decode(Both.self, from: json)
        _ = both?.keeper.keyed.codingPath
        _ = try? both?.keeper.nested.decode(Int.self, forKey: AnyKey(stringValue: "x"))
    }

    static func path(_ keys: [any CodingKey]) -> String {
        "[" + keys.map { key in key.intValue.map { "\(key.stringValue)#\($0)" } ?? key.stringValue }.joined(separator: ", ") + "]"
    }

    static func outcome(_ body: () throws -> String) -> String {
        do {
            return try body()
        } catch {
            return describeError(error)
        }
    }
}

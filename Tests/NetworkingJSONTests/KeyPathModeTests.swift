import Foundation
import Testing

@testable import Networking

/// A body decoded at a key path gives the same value or error whichever decoder the configuration
/// picks (`usesFoundationJSONDecoder` or the library's own).
@Suite struct KeyPathModeTests {
    static let document = #"""
        {"data":{"createdAt":"2024-01-02T03:04:05Z","avatar":"YQ==","site":"https://x.y","price":12.5,"count":3,
        "user_info":{"user_id":7,"first_name":"A"},"list":[1,2],"books":[{"id":1},{"id":"x"}],"when":"yesterday","nothing":null},
        "items":[{"created_at":"2024-01-02T03:04:05Z"}],"top":[10,20,30],"caf\u00e9":{"K":1}}
        """#

    static let configurations = [
        Configuration.default,
        Configuration(name: "iso8601") { $0.dateDecodingStrategy = .iso8601 },
        Configuration(name: "iso8601 + snake") {
            $0.dateDecodingStrategy = .iso8601
            $0.keyDecodingStrategy = .convertFromSnakeCase
        },
        Configuration(name: "seconds + base64") {
            $0.dateDecodingStrategy = .secondsSince1970
            $0.dataDecodingStrategy = .base64
        },
    ]

    static let paths = [
        "data.createdAt", "data.when", "data.avatar", "data.site", "data.price", "data.count", "data.user_info", "data.userInfo",
        "data.list", "data.list.0", "data.list.-1", "data.list.2", "data.list.+1", "data.books.1", "data.books.-1", "data.nothing",
        "data.missing", "items.0.createdAt", "items.0.created_at", "top.-1", "top.-3", "top.2", "top.3", "caf\u{E9}.K",
        "cafe\u{301}.\u{212A}", "data", "",
    ]

    @Test("Both decoders give the same result at every key path", arguments: configurations)
    func sameResult(_ configuration: Configuration) {
        let data = Data(Self.document.utf8)
        for path in Self.paths {
            compare(Date.self, data, path, configuration)
            compare(Data.self, data, path, configuration)
            compare(URL.self, data, path, configuration)
            compare(Decimal.self, data, path, configuration)
            compare(Int.self, data, path, configuration)
            compare(String.self, data, path, configuration)
            compare([Int].self, data, path, configuration)
            compare([String: Int].self, data, path, configuration, inAnyKeyOrder: true)
            compare([String: String].self, data, path, configuration, inAnyKeyOrder: true)
            compare(JSONAnyValue.self, data, path, configuration)
        }
    }

    @Test("A date at a key path is read with the date strategy in Foundation mode")
    func dateStrategyAtTheEnd() throws {
        let json = Data(#"{"data":{"createdAt":"2024-01-02T03:04:05Z"}}"#.utf8)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let expected = Date(timeIntervalSince1970: 1_704_164_645)
        for usesFoundation in [true, false] {
            let body = BodyDecoder(jsonDecoder: decoder, usesFoundation: usesFoundation)
            #expect(try body.decode(Date.self, from: json, keyPath: "data.createdAt") == expected)
        }
    }

    @Test("A negative index is no element in Foundation mode")
    func negativeIndex() {
        let json = Data(#"{"data":[1,2]}"#.utf8)
        for usesFoundation in [true, false] {
            let body = BodyDecoder(jsonDecoder: JSONDecoder(), usesFoundation: usesFoundation)
            let outcome = Outcome { try body.decode(Int.self, from: json, keyPath: "data.-1") }
            #expect(
                outcome.description == "valueNotFound(Int) at [data, Index -1#-1]: the array has no element at index -1",
                "usesFoundation \(usesFoundation)")
        }
    }

    /// Decodes with both body decoders and expects the same value or the same error. With
    /// `inAnyKeyOrder`, any two errors match: JSONDecoder decodes a dictionary in its hash order,
    /// which changes from run to run, so which of several bad members it reports does too.
    private func compare<T: Decodable & Equatable>(
        _ type: T.Type, _ data: Data, _ path: String, _ configuration: Configuration, inAnyKeyOrder: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let decoder = JSONDecoder()
        configuration.apply(decoder)
        let foundation = BodyDecoder(jsonDecoder: decoder, usesFoundation: true)
        let fast = BodyDecoder(jsonDecoder: decoder, usesFoundation: false)
        let expected = Outcome { try foundation.decode(T.self, from: data, keyPath: path) }
        let actual = Outcome { try fast.decode(T.self, from: data, keyPath: path) }
        var same = expected.matches(actual, ==)
        if inAnyKeyOrder, case .error = expected, case .error = actual { same = true }
        #expect(
            same,
            "\(T.self) at \"\(path)\" [\(configuration)]:\nFoundation mode: \(expected)\nFastJSON:        \(actual)",
            sourceLocation: sourceLocation)
    }
}

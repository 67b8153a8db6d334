import Foundation
import Testing

@testable import Networking

/// `decode(_:from:keyPath:)` against a reference walk over JSONDecoder's containers.
@Suite struct KeyPathTests {
    static let document = #"""
        {"data":[{"id":1,"title":"a","genre":"novel","available":true},{"id":2,"title":"b","genre":"poetry","available":false},
        {"id":3,"title":"c","genre":"mystery","available":true},{"id":"4","title":"d","genre":"essay","available":true}],
        "page":{"items":{"id":5,"title":"e","genre":"essay","available":true},"count":1,"next":null,"0":{"id":6,"title":"f","genre":"novel","available":true}},
        "user_info":{"user_id":7,"created_at":"2024-01-02T03:04:05Z","avatar":"YQ==","site":"https://x.y","price":12.5},
        "dup":{"a":1,"a":2},"matrix":[[1,2],[3,4]],"empty":[],"nothing":null,"text":"hi"}
        """#

    static let bookPaths: [[String]] = [
        ["data", "0"], ["data", "1"], ["data", "2"], ["data", "3"], ["data", "4"], ["data", "-1"], ["data", "+1"], ["data", "01"],
        ["data", "x"], ["page", "items"], ["page", "0"], ["page", "missing"], ["missing"], ["missing", "0"], ["nothing", "0"],
        ["nothing", "x"], ["text", "0"], ["text", "x"], ["empty", "0"], ["data", "0", "id"], ["page", "items", "title"], ["page"],
        [], ["matrix", "0", "0"], ["data", " 0"], ["data", "0 "], ["", ""],
    ]

    @Test(arguments: bookPaths)
    func books(_ path: [String]) {
        assertSameAsJSONDecoder(Book.self, Self.document, keyPath: path)
        assertSameAsJSONDecoder([Book].self, Self.document, keyPath: path)
        assertSameAsJSONDecoder(Book.self, Self.document, .snakeCase, keyPath: path)
    }

    @Test(arguments: [
        ["page", "count"], ["matrix", "1", "1"], ["matrix", "2", "0"], ["matrix", "1", "2"], ["dup", "a"], ["data", "0", "id"],
        ["data", "3", "id"], ["page", "next"], ["user_info", "user_id"], ["user_info", "userId"], ["text"], ["matrix", "0"],
    ])
    func scalars(_ path: [String]) {
        assertSameAsJSONDecoder(Int.self, Self.document, keyPath: path)
        assertSameAsJSONDecoder(Int?.self, Self.document, keyPath: path)
        assertSameAsJSONDecoder(Int.self, Self.document, .snakeCase, keyPath: path)
        assertSameAsJSONDecoder(String.self, Self.document, keyPath: path)
        assertSameAsJSONDecoder([Int].self, Self.document, keyPath: path)
        assertSameAsJSONDecoder(JSONAnyValue.self, Self.document, keyPath: path)
    }

    @Test func strategiesApplyAtTheEnd() {
        let iso = Configuration(name: "iso8601 + snake") {
            $0.dateDecodingStrategy = .iso8601
            $0.keyDecodingStrategy = .convertFromSnakeCase
        }
        assertSameAsJSONDecoder(Date.self, Self.document, iso, keyPath: ["userInfo", "createdAt"])
        assertSameAsJSONDecoder(Date.self, Self.document, iso, keyPath: ["userInfo", "site"])
        assertSameAsJSONDecoder(Data.self, Self.document, iso, keyPath: ["userInfo", "avatar"])
        assertSameAsJSONDecoder(URL.self, Self.document, iso, keyPath: ["userInfo", "site"])
        assertSameAsJSONDecoder(Decimal.self, Self.document, iso, keyPath: ["userInfo", "price"])
        assertSameAsJSONDecoder([String: String].self, Self.document, iso, keyPath: ["page"])
        assertSameAsJSONDecoder([String: Int].self, Self.document, iso, keyPath: ["user_info"])
    }

    @Test func brokenDocuments() {
        for json in ["", "{", #"{"data":[1,}"#, #"{"data":[{"id":01}]}"#, #"{"data":[{"bad\x":1}]}"#, #"{"data":"x"} y"#, "[[1]]"] {
            assertSameAsJSONDecoder(Int.self, json, keyPath: ["data", "0", "id"])
            assertSameAsJSONDecoder(Int.self, json, keyPath: ["0", "0"])
        }
    }

    /// The coding path in an error names the document root: [data, Index 2, genre].
    @Test func errorPathStartsAtRoot() throws {
        let decoder = FastJSONDecoder(JSONDecoder())
        do {
            _ = try decoder.decode(Book.self, from: Data(Self.document.utf8), keyPath: ["data", "2"])
            Issue.record("expected an error")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.map(\.stringValue) == ["data", "Index 2", "genre"])
            #expect(context.codingPath.map(\.intValue) == [nil, 2, nil])
        }
    }
}

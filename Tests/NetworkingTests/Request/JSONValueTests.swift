import Foundation
import Networking
import Testing

@Suite("JSONValue")
struct JSONValueTests {
    private func parse(_ text: String) throws -> JSONValue {
        try JSONValue(parsing: Data(text.utf8))
    }

    @Test(
        "The library's decoder builds what JSONDecoder builds: keys unconverted under snake case, the first of equal keys, empty containers"
    )
    func sameAsJSONDecoder() throws {
        let snakeCase = JSONDecoder()
        snakeCase.keyDecodingStrategy = .convertFromSnakeCase
        let document = Data(
            #"""
            {"first_name": "Ada", "tags": [], "meta": {}, "list": [[], {}, [1, [2, {"deep_key": null}]], "x"],
             "dup": 1, "dup": 2, "caf\u00e9": 1, "cafe\u0301": 2, "n": [1.0, 1e2, -0, 1.5, 12345678901234567890]}
            """#.utf8)
        for decoder in [JSONDecoder(), snakeCase] {
            let fast = try FastJSONDecoder(decoder).decode(JSONValue.self, from: document)
            #expect(fast == (try decoder.decode(JSONValue.self, from: document)))
            #expect(fast["first_name"] == "Ada" && fast["dup"] == 1)
        }
        // Inside a model too, at any place.
        struct Holder: Decodable { let payload: [JSONValue] }
        let holder = try FastJSONDecoder(snakeCase).decode(Holder.self, from: Data(#"{"payload": [{"a_b": [true]}, "s", {}]}"#.utf8))
        #expect(holder.payload == [["a_b": [true]], "s", [:]])
        // A key that is not valid text fails the whole value, as a string value would.
        #expect(throws: (any Error).self) { try parse(#"{"a": {"b\ud800": 1}}"#) }
        #expect(throws: (any Error).self) { try parse(#"{"a": [1e999]}"#) }
    }

    @Test(
        "Parsing keeps integers and fractions apart and accepts fragments",
        arguments: [
            ("null", JSONValue.null), ("true", .bool(true)), ("false", .bool(false)), ("42", .int(42)),
            ("-7", .int(-7)), ("1.5", .double(1.5)), ("1e-3", .double(0.001)), (#""text""#, .string("text")),
            ("[1, \"a\", null]", .array([.int(1), .string("a"), .null])),
            (#"{"a": {"b": [true]}}"#, .object(["a": .object(["b": .array([.bool(true)])])])),
            ("9007199254740993", .int(9_007_199_254_740_993)),
        ])
    func parsing(text: String, expected: JSONValue) throws {
        #expect(try parse(text) == expected)
    }

    @Test("Invalid JSON throws", arguments: ["", "{", "[1 2]", "{'a': 1}", "nul"])
    func invalid(text: String) {
        #expect(throws: (any Error).self) { try parse(text) }
    }

    @Test("Literals build the matching cases")
    func literals() {
        let value: JSONValue = ["s": "x", "i": 1, "d": 0.5, "b": false, "n": nil, "a": [1, "2"]]
        #expect(
            value
                == .object([
                    "s": .string("x"), "i": .int(1), "d": .double(0.5), "b": .bool(false), "n": .null,
                    "a": .array([.int(1), .string("2")]),
                ]))
    }

    @Test("Encoding is compact with sorted keys and unescaped slashes, and round-trips")
    func encoding() throws {
        // Given
        let value: JSONValue = ["z": 1, "a": ["url": "https://x.test/a", "list": [true, nil, 2.5]]]
        // When
        let text = value.description
        // Then
        #expect(text == #"{"a":{"list":[true,null,2.5],"url":"https://x.test/a"},"z":1}"#)
        #expect(String(decoding: try value.encoded(), as: UTF8.self) == text)
        #expect(try JSONValue(parsing: value.encoded()) == value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value)) == value)
    }

    @Test("Subscripts and key paths read members and elements, or nil")
    func navigation() throws {
        // Given
        let value = try parse(#"{"data": [{"id": 1}, {"id": 2}], "page": {"current": 3}, "0": "zero"}"#)
        // Then
        #expect(value["page"]?["current"] == 3)
        #expect(value["data"]?[1]?["id"] == 2)
        #expect(value["data"]?[2] == nil)
        #expect(value["data"]?[-1] == nil)
        #expect(value[0] == nil)
        #expect(value["missing"] == nil)
        #expect(value.value(atKeyPath: "page.current") == 3)
        #expect(value.value(atKeyPath: "data.1.id") == 2)
        #expect(value.value(atKeyPath: "0") == "zero")
        #expect(value.value(atKeyPath: "data.5") == nil)
        #expect(value.value(atKeyPath: "page.current.more") == nil)
        #expect(value.value(atKeyPath: "") == value)
    }

    @Test("A key path with dots is looked up as one plain key first, then walked")
    func dottedKeys() throws {
        // Given: a key with a dot in its name (OpenAPI's `{post.id}`) beside nested values
        let value = try parse(#"{"post.id": 5, "post": {"id": 6, "title": "t"}, "meeting": {"id": 7}}"#)
        // Then: the whole key wins when it is there; other dotted paths still walk
        #expect(value.value(atKeyPath: "post.id") == 5)
        #expect(value.value(atKeyPath: "post.title") == "t")
        #expect(value.value(atKeyPath: "meeting.id") == 7)
        #expect(value.value(atKeyPath: "post.missing") == nil)
        // Below the top too: the longest run of components that is a key wins at each level.
        let nested = try parse(#"{"error": {"detail.code": "E1", "detail": {"code": "E2", "x": 1}, "items": [{"a.b": 3}]}}"#)
        #expect(nested.value(atKeyPath: "error.detail.code") == "E1")
        #expect(nested.value(atKeyPath: "error.detail.x") == 1)
        #expect(nested.value(atKeyPath: "error.items.0.a.b") == 3)
        #expect(nested.value(atKeyPath: "error.items.0.a") == nil)
    }

    @Test("Typed accessors give the value only for the matching case")
    func accessors() {
        #expect(JSONValue.string("a").stringValue == "a")
        #expect(JSONValue.int(1).stringValue == nil)
        #expect(JSONValue.int(1).intValue == 1)
        #expect(JSONValue.double(1).intValue == nil)
    }

    @Test("A body that is not JSON gives no JSON view of a response")
    func responseJSON() {
        #expect(TransportResponse(statusCode: 200, body: Data(#"{"a":1}"#.utf8)).json == ["a": 1])
        #expect(TransportResponse(statusCode: 200, body: Data("<html>".utf8)).json == nil)
        #expect(TransportResponse(statusCode: 204).json == nil)
    }
}

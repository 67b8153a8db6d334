import Testing

@testable import Networking

@Suite("QueryEncoding")
struct QueryEncodingTests {
    @Test("Keys are sorted so the query is deterministic")
    func sortedKeys() {
        // Given / When
        let query = QueryEncoding.encode(["zeta": 1, "alpha": 2, "Mid": 3, "beta": 4])
        // Then
        #expect(query == "Mid=3&alpha=2&beta=4&zeta=1")
    }

    @Test("Nested objects become key[sub], arrays key[] for each element")
    func nesting() {
        // Given / When
        let query = QueryEncoding.encode([
            "filter": ["genre": "fiction", "year": ["from": 1960, "to": 1970]],
            "ids": [3, 1, 2],
            "tags": [["name": "a"], ["name": "b"]],
        ])
        // Then
        #expect(
            query == "filter%5Bgenre%5D=fiction&filter%5Byear%5D%5Bfrom%5D=1960&filter%5Byear%5D%5Bto%5D=1970"
                + "&ids%5B%5D=3&ids%5B%5D=1&ids%5B%5D=2&tags%5B%5D%5Bname%5D=a&tags%5B%5D%5Bname%5D=b")
    }

    @Test("Booleans are words and numbers keep their form")
    func scalars() {
        // Given / When
        let query = QueryEncoding.encode([
            "yes": true, "no": false, "int": -42, "whole": 2.0, "fraction": 0.25, "huge": 1e20,
        ])
        // Then
        #expect(query == "fraction=0.25&huge=1e%2B20&int=-42&no=false&whole=2&yes=true")
    }

    @Test("Null members are left out, at any depth")
    func nullsDropped() {
        // Given / When
        let query = QueryEncoding.encode(["a": nil, "b": ["c": nil, "d": 1], "e": [nil, 2]])
        // Then
        #expect(query == "b%5Bd%5D=1&e%5B%5D=2")
    }

    @Test(
        "Reserved characters and spaces in names and values are percent-encoded",
        arguments: [
            ("a&b", "a%26b"), ("a=b", "a%3Db"), ("a+b", "a%2Bb"), ("a/b", "a%2Fb"), ("a?b", "a%3Fb"),
            ("a#b", "a%23b"), ("a b", "a%20b"), ("a%b", "a%25b"), ("a[b]", "a%5Bb%5D"), ("-._~", "-._~"),
        ])
    func reservedCharacters(text: String, encoded: String) {
        // Given / When
        let query = QueryEncoding.encode([text: .string(text)])
        // Then both the name and the value are encoded
        #expect(query == "\(encoded)=\(encoded)")
    }

    @Test("Unicode is sent as percent-encoded UTF-8")
    func unicode() {
        // Given / When
        let query = QueryEncoding.encode(["título": "café ☕", "emoji": "👍🏽"])
        // Then
        #expect(query == "emoji=%F0%9F%91%8D%F0%9F%8F%BD&t%C3%ADtulo=caf%C3%A9%20%E2%98%95")
    }

    @Test("An empty object is an empty query, and an empty array adds nothing")
    func empty() {
        #expect(QueryEncoding.encode([:]).isEmpty)
        #expect(QueryEncoding.encode(["ids": []]).isEmpty)
        #expect(QueryEncoding.encode(["text": ""]) == "text=")
    }
}

import Foundation
import Testing

@testable import Networking

@Suite("HTTPHeaders")
struct HTTPHeadersTests {
    @Test(
        "A received value's CR, LF, NUL and other control characters but a tab become spaces, trimmed at the ends; other values are kept as they are"
    )
    func cleanedValues() {
        #expect(HeaderValidation.cleaned("\"v1\"\r") == "\"v1\"")
        #expect(HeaderValidation.cleaned("a\u{0}b\nc") == "a b c")
        #expect(HeaderValidation.cleaned(" a\tb ") == " a\tb ")
        #expect(HeaderValidation.cleaned("a\u{0B}b\u{7F}") == "a b")
        // What is left can be sent; what was not cleaned cannot
        #expect(HTTPHeaders.isSendableFieldValue(HeaderValidation.cleaned("a\u{0B}b\r")) && HTTPHeaders.isSendableFieldValue("W/\"v1\"\tx"))
        #expect(!HTTPHeaders.isSendableFieldValue("a\u{0B}b") && !HTTPHeaders.isSendableFieldValue("a\u{7F}"))
    }

    @Test("A value is sent without the spaces and tabs around it; those inside stay; blanks only are empty")
    func sentValues() {
        #expect(HeaderValidation.withoutSurroundingBlanks(" \ta b\t ") == "a b")
        #expect(HeaderValidation.withoutSurroundingBlanks("a\tb") == "a\tb")
        #expect(HeaderValidation.withoutSurroundingBlanks("   ") == "")
        #expect(HeaderValidation.withoutSurroundingBlanks("") == "")
    }

    @Test("Names are compared case-insensitively")
    func caseInsensitive() {
        // Given
        let headers: HTTPHeaders = ["Content-Type": "application/json"]
        // Then
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.contains("Content-type"))
        #expect(headers["Content-Length"] == nil)
        #expect(!headers.contains("Content"))
    }

    @Test("Setting replaces every field of that name, keeps the first position and the last spelling")
    func setReplaces() {
        // Given
        var headers = HTTPHeaders([
            .init(name: "Accept", value: "a"), .init(name: "X-Tag", value: "1"),
            .init(name: "accept", value: "b"), .init(name: "X-Other", value: "2"),
        ])
        // When
        headers["ACCEPT"] = "c"
        // Then
        #expect(Array(headers).map(\.name) == ["ACCEPT", "X-Tag", "X-Other"])
        #expect(headers.values(for: "accept") == ["c"])
        #expect(headers.count == 3)
    }

    @Test("Setting nil removes every field of that name")
    func setNilRemoves() {
        // Given
        var headers = HTTPHeaders([.init(name: "Set-Cookie", value: "a"), .init(name: "set-cookie", value: "b")])
        headers["X-Keep"] = "1"
        // When
        headers["SET-COOKIE"] = nil
        // Then
        #expect(Array(headers).map(\.name) == ["X-Keep"])
    }

    @Test("Adding keeps earlier fields of the same name, in order")
    func addAppends() {
        // Given
        var headers: HTTPHeaders = ["Set-Cookie": "a=1"]
        // When
        headers.add(name: "set-cookie", value: "b=2")
        // Then
        #expect(headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        #expect(headers["Set-Cookie"] == "a=1")
        #expect(headers.count == 2)
        #expect(headers.names == ["Set-Cookie"])
        #expect(headers.dictionary == ["Set-Cookie": "a=1, b=2"])
    }

    @Test("Merging sets the other's fields on top, in the place of the first they replace, its repeated fields kept apart")
    func merging() {
        // Given
        var base: HTTPHeaders = ["Accept": "application/json", "X-Client": "base", "X-Base": "1"]
        base.add(name: "Via", value: "a")
        var top: HTTPHeaders = ["x-client": "top", "X-New": "2"]
        top.add(name: "X-New", value: "3")
        top.add(name: "via", value: "b")
        top.add(name: "via", value: "c")
        // When
        let merged = base.merging(top)
        // Then
        #expect(merged["X-Client"] == "top")
        #expect(merged.values(for: "X-Client") == ["top"])
        #expect(merged.values(for: "X-New") == ["2", "3"])
        #expect(merged["Accept"] == "application/json")
        // Two `Cookie` or `Via` fields joined with a comma would be one value of another meaning.
        #expect(merged.values(for: "Via") == ["b", "c"])
        #expect(merged.names == ["Accept", "x-client", "X-Base", "via", "X-New"])
    }

    @Test("A dictionary gives fields sorted by name; a literal keeps the written order")
    func ordering() {
        // Given / When
        let fromDictionary = HTTPHeaders(["b": "2", "a": "1", "C": "3"])
        let literal: HTTPHeaders = ["b": "2", "a": "1", "C": "3"]
        // Then
        #expect(Array(fromDictionary).map(\.name) == ["C", "a", "b"])
        #expect(literal.names == ["b", "a", "C"])
    }

    @Test("Equality ignores the case of names but not values or order")
    func equality() {
        let lower: HTTPHeaders = ["accept": "a", "x-b": "b"]
        #expect(lower == ["Accept": "a", "X-B": "b"])
        #expect(lower != ["Accept": "A", "X-B": "b"])
        #expect(lower != ["X-B": "b", "Accept": "a"])
        #expect(Set([lower, ["ACCEPT": "a", "X-b": "b"]]).count == 1)
    }

    @Test("Headers survive a Codable round trip")
    func codable() throws {
        // Given
        var headers: HTTPHeaders = ["Accept": "application/json"]
        headers.add(name: "Set-Cookie", value: "a=1")
        headers.add(name: "Set-Cookie", value: "b=2")
        // When
        let decoded = try JSONDecoder().decode(HTTPHeaders.self, from: JSONEncoder().encode(headers))
        // Then
        #expect(decoded == headers)
        #expect(decoded.values(for: "set-cookie") == ["a=1", "b=2"])
    }

    @Test("The description redacts credentials")
    func description() {
        // Given
        let headers: HTTPHeaders = ["Authorization": "Bearer s3cr3t", "Cookie": "sid=abc", "X-Api-Key": "k3y", "Accept": "*/*"]
        // When
        let text = headers.description
        // Then
        #expect(text.contains("Accept: */*"))
        #expect(text.contains("Authorization: <redacted>"))
        for secret in ["s3cr3t", "sid=abc", "k3y"] { #expect(!text.contains(secret)) }
    }

    @Test("HTTP methods have their ASCII letters upper-cased (no other case mapping) and know which are idempotent")
    func methods() {
        #expect(HTTPMethod("propfind").rawValue == "PROPFIND")
        // Full case mapping would make valid, different tokens of these: they stay invalid.
        for odd in ["lıst", "straße", "ﬀ"] {
            #expect(HTTPMethod(odd).rawValue != odd.uppercased())
            #expect(!HTTPMethod(odd).isValidToken)
        }
        #expect(HTTPMethod("lıst").rawValue == "LıST")
        #expect(("get" as HTTPMethod) == .get)
        #expect(HTTPMethod.put.isIdempotent)
        #expect(!HTTPMethod.post.isIdempotent)
        #expect(!HTTPMethod.patch.isIdempotent)
    }

    @Test(
        "Age is the first value when a non-negative integer, capped at 2^31 seconds; otherwise nil",
        arguments: [
            ("60", 60), (" 7 ", 7), ("5, 9", 5), ("0", 0), ("99999999999", 2_147_483_648), ("2147483649", 2_147_483_648),
            ("00000000060", 60), ("000", 0),
            ("-1", nil), ("1.5", nil), ("soon", nil), ("", nil), ("+3", nil),
        ] as [(String, TimeInterval?)])
    func age(value: String, expected: TimeInterval?) {
        #expect(HTTPHeaders(["Age": value]).age == expected)
        #expect(HTTPHeaders(["Date": "Tue, 15 Nov 1994 08:12:31 GMT"]).age == nil)
    }
}

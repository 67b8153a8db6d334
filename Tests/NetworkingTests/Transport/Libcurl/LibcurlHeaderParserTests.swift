import Testing

@testable import Networking

@Suite("libcurl header parser")
struct LibcurlHeaderParserTests {
    private func parse(_ text: String) -> HTTPHeaders { LibcurlHeaderParser.parse(Array(text.utf8)) }

    @Test("Fields of an HTTP/1.1 head, repeated names kept, values trimmed")
    func http11() {
        let headers = parse("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nSet-Cookie: a=1\r\nSet-Cookie:b=2  \r\nX-Empty:\r\n\r\n")
        #expect(headers["content-type"] == "application/json")
        #expect(headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        #expect(headers["X-Empty"] == "")
        #expect(headers.count == 4)
    }

    @Test("Only the last head counts (100 Continue first), HTTP/2 status lines too")
    func severalHeads() {
        let headers = parse("HTTP/1.1 100 Continue\r\nX-Early: 1\r\n\r\nHTTP/2 201 \r\nlocation: /x\r\n\r\n")
        #expect(headers["X-Early"] == nil)
        #expect(headers["Location"] == "/x")
    }

    @Test("A chunked body's trailer fields are left out; a head after them (a redirect's next) counts")
    func trailers() {
        let headers = parse("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\nContent-Type: text/html\r\nX-Checksum: 1\r\n\r\n")
        #expect(headers["Content-Type"] == "application/json")
        #expect(headers.count == 1)
        let next = parse("HTTP/1.1 302 Found\r\nLocation: /b\r\n\r\nX-Trailer: 1\r\n\r\nHTTP/1.1 200 OK\r\nX-B: 2\r\n\r\n")
        #expect(next["X-B"] == "2")
        #expect(next.count == 1)
    }

    @Test("A CR, NUL or other control byte inside a value (a bare CR before the line's end) becomes a space; a tab stays")
    func controlBytes() {
        let headers = parse(
            "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\r\nX-Nul: a\u{0}b\r\nX-Tab: a\tb\u{1}\r\nX-Del: a\u{7F}b\r\nX-Long: one\r\n two\r\r\n\r\n")
        #expect(headers["ETag"] == "\"v1\"")
        #expect(headers["X-Nul"] == "a b")
        // Sent back (an ETag, a Location), a control byte would have the request refused.
        #expect(headers["X-Tab"] == "a\tb")
        #expect(headers["X-Del"] == "a b")
        #expect(headers["X-Long"] == "one two")
    }

    @Test("Folded lines join the field before them; junk lines are skipped")
    func foldedAndJunk() {
        let headers = parse("HTTP/1.1 200 OK\r\nX-Long: one\r\n\t two\r\nno colon here\r\n: no name\r\nX-Bare: v\n\r\n")
        #expect(headers["X-Long"] == "one two")
        #expect(headers["X-Bare"] == "v")
        #expect(headers.count == 2)
    }
}

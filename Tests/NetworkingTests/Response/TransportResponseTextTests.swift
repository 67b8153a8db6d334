import Foundation
import Networking
import Testing

@Suite("TransportResponse.text")
struct TransportResponseTextTests {
    private func text(_ bytes: [UInt8], contentType: String? = nil) -> String {
        var headers = HTTPHeaders()
        if let contentType { headers["Content-Type"] = contentType }
        return TransportResponse(statusCode: 200, headers: headers, body: Data(bytes)).text
    }

    @Test("The charset of Content-Type is read: UTF-8 by default, UTF-16 either way, Latin-1 and ASCII as windows-1252")
    func charsets() {
        let cafe = Array("café".utf8)
        #expect(text(cafe) == "café")
        #expect(text(cafe, contentType: "text/plain; charset=unknown-8") == "café")
        #expect(text([0x63, 0x61, 0x66, 0xE9], contentType: #"text/plain; charset="ISO-8859-1""#) == "café")
        #expect(text([0x80, 0x35], contentType: "text/plain;charset=us-ascii") == "€5")
        #expect(text([0x81, 0x80, 0x9F], contentType: "text/plain; charset=windows-1252") == "\u{81}€Ÿ")
        #expect(text([0xE9], contentType: "text/plain; charset=csISOLatin1") == "é")
        #expect(text([0x00, 0x63, 0x00, 0xE9], contentType: "text/plain; format=flowed; charset=UTF-16BE") == "cé")
        #expect(text([0x63, 0x00, 0xE9, 0x00], contentType: "text/plain; charset=utf-16") == "cé")
        // Invalid bytes are replaced, never a failure.
        #expect(text([0x63, 0xFF]) == "c\u{FFFD}")
        #expect(text([0x00, 0xD8, 0x63], contentType: "text/plain; charset=utf-16le") == "\u{FFFD}\u{FFFD}")
    }

    @Test("A byte order mark decides the encoding and is dropped")
    func byteOrderMarks() {
        #expect(text([0xEF, 0xBB, 0xBF, 0x61], contentType: "text/plain; charset=iso-8859-1") == "a")
        #expect(text([0xFE, 0xFF, 0x00, 0x61]) == "a")
        #expect(text([0xFF, 0xFE, 0x61, 0x00]) == "a")
        #expect(text([]).isEmpty)
    }
}

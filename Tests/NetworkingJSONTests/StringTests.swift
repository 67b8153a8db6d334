import Foundation
import Testing

/// Escapes, Unicode and invalid text in strings and keys.
@Suite struct StringTests {
    static let texts: [String] = [
        #""""#, #""a""#, #""héllo""#, #""日本語""#, #""😀""#, #""\"""#, #""\\""#, #""\/""#, #""\b\f\n\r\t""#, #""a\u0041b""#,
        #""\u00e9""#, #""\u00E9""#, #""\u20AC""#, #""\ud83d\ude00""#, #""\uD83D\uDE00""#, #""\ud800""#, #""\udc00""#,
        #""\ud800\u0041""#, #""\ud800x""#, #""\ud800\""#, #""\ud83d\ud83d""#, #""\udc00\ud800""#, #""\u0000""#, #""a\u0000b""#,
        #""\uFFFF""#, #""\uFEFF""#, #""\u12""#, #""\u12G4""#, #""\u+123""#, #""\u-123""#, #""\u 123""#, #""\x""#, #""\a""#,
        #""\'""#, #""\U0041""#, #""\""#, #""abc"#, #""a"b""#, #""\u"#, #""\u123"#, #""\u123""#, "\"a\tb\"", "\"a\nb\"",
        "\"\u{1}\"", "\"\u{1F}\"", "\"\u{7F}\"", "\"\u{0}\"", #""\u0041\u0042\u0043""#, #""\ud83d\ude00\ud83d\ude01""#,
        #""\\u0041""#, #""\\\u0041""#, #""a\/b\/c""#, #""https:\/\/example.com\/a""#,
    ]

    @Test(arguments: texts)
    func strings(_ text: String) {
        assertSameAsJSONDecoder(String.self, text)
        assertSameAsJSONDecoder([String].self, "[\(text)]")
        assertSameAsJSONDecoder([String?].self, "[\(text),null]")
        assertSameAsJSONDecoder(Wrapper<String>.self, #"{"value":"# + text + "}")
        assertSameAsJSONDecoder(OptionalWrapper<String>.self, #"{"other":"# + text + #","value":"x"}"#)
        assertSameAsJSONDecoder([String: Int].self, "{" + text + ":1}")
        assertSameAsJSONDecoder([String: Int].self, "{" + text + ":1}", .snakeCase)
        assertSameAsJSONDecoder(Wrapper<Int>.self, #"{"value":1,"# + text + ":2}")
        assertSameAsJSONDecoder(URL.self, text)
        assertSameAsJSONDecoder(UUID.self, text)
    }

    /// Raw bytes: invalid UTF-8, overlong forms, encoded surrogates, BOMs and other encodings.
    static let byteInputs: [[UInt8]] = [
        [0x22, 0xC3, 0xA9, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x22, 0x80, 0x22],
        [0x22, 0x5C, 0x6E, 0xC3, 0x22], [0x22, 0xC3, 0x5C, 0x6E, 0xA9, 0x22], [0x22, 0x5C, 0xC3, 0xA9, 0x22],
        [0xEF, 0xBB, 0xBF, 0x22, 0x61, 0x22], [0xEF, 0xBB, 0xBF], [0xEF, 0xBB], [0xEF, 0xBB, 0xBF, 0x20, 0x31, 0x20],
        [0xFE, 0xFF, 0x00, 0x22, 0x00, 0x61, 0x00, 0x22], [0xFF, 0xFE, 0x22, 0x00, 0x61, 0x00, 0x22, 0x00],
        [0x00, 0x22, 0x00, 0x61, 0x00, 0x22], [0x22, 0x00, 0x61, 0x00, 0x22, 0x00], [0x00, 0x31], [0x31, 0x00],
        [0x00, 0x00, 0x00, 0x31], [0x31, 0x00, 0x00, 0x00], [0x00, 0x00, 0xFE, 0xFF, 0x00, 0x00, 0x00, 0x31],
        [0xFE, 0xFF, 0x00, 0x00, 0x31, 0x00, 0x00, 0x00], [0xFE, 0xFF], [0xFF, 0xFE], [0xFF, 0xFE, 0x31], [0xFE, 0xFF, 0x00, 0xD8, 0x00],
        [0x5B, 0x00, 0x31, 0x00, 0x5D, 0x00], [0x00, 0x5B, 0x00, 0x31, 0x00, 0x5D], [0x22, 0x61, 0x00, 0x62, 0x22], [0x00],
        [0x7B, 0x22, 0xC3, 0x22, 0x3A, 0x31, 0x7D], [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x31, 0x2C, 0x22, 0xFF, 0x22, 0x3A, 0x32, 0x7D],
    ]

    @Test(arguments: byteInputs)
    func bytes(_ bytes: [UInt8]) {
        let data = Data(bytes)
        assertSameAsJSONDecoder(String.self, data: data)
        assertSameAsJSONDecoder(StrictJSONValue.self, data: data)
        assertSameAsJSONDecoder(JSONAnyValue.self, data: data)
        assertSameAsJSONDecoder([String: Int].self, data: data)
        assertSameAsJSONDecoder([String: Int].self, data: data, .snakeCase)
        assertSameAsJSONDecoder(Int.self, data: data)
        assertSameAsJSONDecoder([Int].self, data: data)
    }

    @Test func utf16Documents() throws {
        let json = #"{"id":1,"title":"Ünïcödé 😀","genre":"novel","available":true}"#
        for encoding: String.Encoding in [.utf16BigEndian, .utf16LittleEndian, .utf16, .utf32BigEndian, .utf32LittleEndian, .utf32] {
            let data = try #require(json.data(using: encoding))
            assertSameAsJSONDecoder(Book.self, data: data)
            assertSameAsJSONDecoder(Book.self, data: data.dropLast())
            assertSameAsJSONDecoder(Book.self, data: data.dropFirst())
        }
    }
}

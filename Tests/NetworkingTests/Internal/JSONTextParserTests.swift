import Foundation
import Testing

@testable import Networking

/// The strict parser behind route files and OpenAPI documents: what it accepts, and where it says
/// a document is wrong (1-based lines and columns, columns counting characters).
@Suite("JSONTextParser")
struct JSONTextParserTests {
    private func parse(_ text: String) throws(JSONTextParser.Failure) -> JSONValue {
        try JSONTextParser.parse(Data(text.utf8))
    }

    /// The failure for `text`, or `nil` (recording an issue) when it parses.
    private func syntaxFailure(_ bytes: Data, sourceLocation: SourceLocation = #_sourceLocation) -> JSONTextParser.Failure? {
        do {
            let value = try JSONTextParser.parse(bytes)
            Issue.record("expected a syntax error, parsed \(value)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    private func syntaxFailure(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> JSONTextParser.Failure? {
        syntaxFailure(Data(text.utf8), sourceLocation: sourceLocation)
    }

    // MARK: - Valid documents

    @Test("A document with every kind of value parses into the matching JSONValue")
    func everyKind() throws {
        // Given
        let text = """
            {
              "string": "text", "int": 42, "negative": -7, "fraction": 2.5, "exponent": 1e3,
              "smallExponent": -2.5E-2, "true": true, "false": false, "null": null,
              "array": [1, [2, []], {}], "object": {"nested": {"deep": "yes"}}
            }
            """
        // When
        let value = try parse(text)
        // Then
        #expect(
            value
                == .object([
                    "string": "text", "int": .int(42), "negative": .int(-7), "fraction": .double(2.5),
                    "exponent": .double(1000), "smallExponent": .double(-0.025), "true": true, "false": false,
                    "null": .null, "array": [1, [2, []], .object([:])], "object": ["nested": ["deep": "yes"]],
                ]))
    }

    @Test(
        "Fragments and surrounding whitespace (space, tab, CR, LF) are accepted",
        arguments: [
            (" 42 ", JSONValue.int(42)), ("\t\"x\"\r\n", .string("x")), ("null", .null), ("\n[ ]\n", .array([])),
            ("{ }", .object([:])), ("0", .int(0)), ("-0", .int(0)),
        ])
    func fragments(text: String, expected: JSONValue) throws {
        #expect(try parse(text) == expected)
    }

    @Test("Escapes: the short ones, \\u escapes, surrogate pairs and raw UTF-8")
    func escapes() throws {
        #expect(try parse(#""\" \\ \/ \b \f \n \r \t""#) == .string("\" \\ / \u{08} \u{0C} \n \r \t"))
        #expect(try parse(#""\u0041\u00e9\u4E2D\u0000""#) == .string("Aé中\u{0}"))
        #expect(try parse(#""\ud83d\ude00 and \uD834\uDD1E""#) == .string("😀 and 𝄞"))
        #expect(try parse(#""raw: é 中 😀""#) == .string("raw: é 中 😀"))
    }

    @Test("Escaped and raw spellings of one key are the same key")
    func escapedKeys() throws {
        #expect(try parse(#"{"\u0061b": 1}"#) == ["ab": 1])
        #expect(syntaxFailure(#"{"ab": 1, "\u0061b": 2}"#)?.message == #"the key "ab" appears twice in the same object"#)
    }

    @Test(
        "Integers stay integers while they fit Int; larger ones and exponents become doubles",
        arguments: [
            ("9223372036854775807", JSONValue.int(Int.max)), ("-9223372036854775808", .int(Int.min)),
            ("9223372036854775808", .double(9_223_372_036_854_775_808)),
            ("123456789012345678901234567890", .double(123456789012345678901234567890.0)), ("1E2", .double(100)),
            ("1e+2", .double(100)), ("5e-1", .double(0.5)), ("0.1", .double(0.1)), ("-0.0", .double(-0.0)),
        ])
    func numbers(text: String, expected: JSONValue) throws {
        #expect(try parse(text) == expected)
    }

    @Test("A UTF-8 byte order mark before the document is skipped")
    func byteOrderMark() throws {
        let data = Data([0xEF, 0xBB, 0xBF]) + Data(#"{"a": [1]}"#.utf8)
        #expect(try JSONTextParser.parse(data) == ["a": [1]])
    }

    @Test("Nesting up to 256 levels is accepted")
    func deepestAccepted() throws {
        let text = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        var value = try parse(text)
        var depth = 1
        while case .array(let elements) = value, let first = elements.first {
            value = first
            depth += 1
        }
        #expect(depth == 256)
    }

    // MARK: - Errors with their line and column

    struct SyntaxError: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let message: String
        let line: Int
        let column: Int

        var testDescription: String { name }
    }

    static let syntaxErrors: [SyntaxError] = [
        SyntaxError(name: "empty document", text: "", message: "unexpected end of the document", line: 1, column: 1),
        SyntaxError(name: "only whitespace", text: "  \n ", message: "unexpected end of the document", line: 2, column: 2),
        SyntaxError(
            name: "missing comma between members", text: #"{"a": 1 "b": 2}"#,
            message: #"expected "," or "}" after the value of "a""#, line: 1, column: 9),
        SyntaxError(
            name: "missing comma on the next line", text: "{\n  \"a\": 1\n  \"b\": 2\n}",
            message: #"expected "," or "}" after the value of "a""#, line: 3, column: 3),
        SyntaxError(
            name: "missing comma in an array", text: "[1 2]", message: #"expected "," or "]" in the array"#, line: 1, column: 4),
        SyntaxError(
            name: "trailing garbage", text: #"{"a": 1} x"#, message: "unexpected text after the document", line: 1, column: 10),
        SyntaxError(
            name: "a second document", text: "{}\n{}", message: "unexpected text after the document", line: 2, column: 1),
        SyntaxError(
            name: "unterminated string", text: #"{"a": "abc"#, message: "the string is not closed", line: 1, column: 11),
        SyntaxError(
            name: "unterminated string after a backslash", text: #"["abc\"#, message: "the string is not closed", line: 1,
            column: 7),
        SyntaxError(name: "bad escape", text: #"{"a": "x\q"}"#, message: #"invalid escape \"q""#, line: 1, column: 10),
        SyntaxError(
            name: "short \\u escape", text: #"["\u12"]"#, message: #"a \u escape needs four hexadecimal digits"#, line: 1,
            column: 7),
        SyntaxError(
            name: "tab inside a string", text: "{\"a\": \"x\ty\"}",
            message: "a control character (0x09) inside a string; escape it", line: 1, column: 9),
        SyntaxError(
            name: "newline inside a string", text: "[\n\"x\ny\"]",
            message: "a control character (0x0A) inside a string; escape it", line: 2, column: 3),
        SyntaxError(
            name: "lone high surrogate", text: #"["\ud800"]"#,
            message: #"a high surrogate \ud800 is not followed by a low one"#, line: 1, column: 9),
        SyntaxError(
            name: "lone low surrogate", text: #"["\udc00"]"#, message: #"a lone low surrogate \udc00"#, line: 1, column: 9),
        SyntaxError(
            name: "high surrogate and a non-surrogate", text: #"["\ud800\u0041"]"#, message: "invalid low surrogate", line: 1,
            column: 15),
        SyntaxError(
            name: "duplicate key", text: "{\n  \"book\": {\"path\": \"a\"},\n  \"book\": {\"path\": \"b\"}\n}",
            message: #"the key "book" appears twice in the same object"#, line: 3, column: 3),
        SyntaxError(name: "unquoted key", text: "{a: 1}", message: "expected a key in quotes", line: 1, column: 2),
        SyntaxError(name: "trailing comma in an object", text: #"{"a":1,}"#, message: "expected a key in quotes", line: 1, column: 8),
        SyntaxError(name: "trailing comma in an array", text: "[1,]", message: #"unexpected character "]""#, line: 1, column: 4),
        SyntaxError(name: "missing colon", text: #"{"a" 1}"#, message: #"expected ":" after the key "a""#, line: 1, column: 6),
        SyntaxError(
            name: "misspelt literal", text: "[tru]",
            message: "unexpected text; expected true, a string, a number, an object or an array", line: 1, column: 2),
        SyntaxError(name: "single quotes", text: "['a']", message: #"unexpected character "'""#, line: 1, column: 2),
        SyntaxError(name: "leading zero", text: "[01]", message: "a number cannot start with 0", line: 1, column: 3),
        SyntaxError(name: "minus alone", text: "[-]", message: "a number needs digits", line: 1, column: 3),
        SyntaxError(name: "no digits after the point", text: "[1.]", message: "digits must follow the decimal point", line: 1, column: 4),
        SyntaxError(name: "no digits in the exponent", text: "[1e+]", message: "digits must follow the exponent", line: 1, column: 5),
        SyntaxError(name: "number out of range", text: "[1, 1e999]", message: "the number 1e999 is out of range", line: 1, column: 5),
        SyntaxError(
            name: "columns count characters, not bytes", text: #"{"é中😀": 1 x}"#,
            message: #"expected "," or "}" after the value of "é中😀""#, line: 1, column: 11),
        SyntaxError(
            name: "CRLF line ends", text: "{\r\n\"a\": 1\r\n\"b\": 2}",
            message: #"expected "," or "}" after the value of "a""#, line: 3, column: 1),
        SyntaxError(
            name: "nesting deeper than 256 levels", text: String(repeating: "[", count: 257) + String(repeating: "]", count: 257),
            message: "the document is nested more than 256 levels deep", line: 1, column: 257),
        SyntaxError(
            name: "deep objects count too", text: String(repeating: #"{"a":"#, count: 257) + "1" + String(repeating: "}", count: 257),
            message: "the document is nested more than 256 levels deep", line: 1, column: 1281),
    ]

    @Test("Each syntax error says what is wrong, at which line and column", arguments: syntaxErrors)
    func syntaxError(_ error: SyntaxError) throws {
        // When
        let failure = try #require(syntaxFailure(error.text))
        // Then
        #expect(failure.message == error.message)
        #expect(failure.line == error.line)
        #expect(failure.column == error.column)
        #expect(failure.description == "\(error.message) at line \(error.line), column \(error.column)")
    }

    @Test("A string that is not valid UTF-8 is refused")
    func invalidUTF8() throws {
        let failure = try #require(syntaxFailure(Data([0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D])))
        #expect(failure.message == "the string is not valid UTF-8")
        #expect(failure.line == 1)
    }

    @Test("A byte that cannot start a value is shown in hexadecimal")
    func invalidByte() throws {
        let failure = try #require(syntaxFailure(Data([0x5B, 0xFF, 0x5D])))
        #expect(failure.message == "unexpected character 0xFF")
        #expect(failure.column == 2)
    }

    @Test("A byte order mark is not counted as a column")
    func byteOrderMarkColumn() throws {
        // Given: the same error with and without a BOM
        let plain = try #require(syntaxFailure(#"{"a" 1}"#))
        let withBOM = try #require(syntaxFailure(Data([0xEF, 0xBB, 0xBF]) + Data(#"{"a" 1}"#.utf8)))
        // Then: the column is where the "1" is, as a person counts it in an editor
        #expect(plain.column == 6)
        #expect(withBOM.column == 6)
        #expect(withBOM.line == 1)
    }
}

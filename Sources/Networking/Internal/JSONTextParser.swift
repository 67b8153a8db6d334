import Foundation

/// A strict JSON parser (RFC 8259) for documents a person writes — route files, OpenAPI
/// documents — that says where a syntax error is, by line and column, and refuses duplicate
/// object keys, which other parsers silently resolve.
///
/// Recursive over nesting only up to ``maximumDepth``: deeper documents are refused, never a
/// stack overflow. Not the fast path for response bodies.
struct JSONTextParser {
    /// Why a document was refused, and where.
    struct Failure: Error, CustomStringConvertible {
        let message: String
        let line: Int
        let column: Int

        var description: String { "\(message) at line \(line), column \(column)" }
    }

    static let maximumDepth = 256

    private let bytes: [UInt8]
    /// Whether a number a `Double` or an `Int` cannot hold exactly is kept as its text (a
    /// `.string`), for values only ever written as text.
    private var keepsDigits = false
    private var index = 0
    private var depth = 0

    /// Parses a whole document (any JSON value, surrounded by optional whitespace). With
    /// `keepingDigits`, an integer beyond `Int`, or a fraction written without an exponent (a
    /// `Decimal`'s text), is a `.string` of its text.
    static func parse(_ data: Data, keepingDigits: Bool = false) throws(Failure) -> JSONValue {
        var parser = JSONTextParser(bytes: Array(data))
        parser.keepsDigits = keepingDigits
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.failure("unexpected text after the document") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func parseValue() throws(Failure) -> JSONValue {
        guard let byte = current else { throw failure("unexpected end of the document") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw failure("unexpected character \(Self.show(byte))")
        }
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        if depth > Self.maximumDepth { throw failure("the document is nested more than \(Self.maximumDepth) levels deep") }
    }

    private mutating func parseObject() throws(Failure) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a key in quotes") }
            let keyStart = index
            let key = try parseString()
            if members[key] != nil {
                index = keyStart
                throw failure("the key \"\(key)\" appears twice in the same object")
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected \":\" after the key \"\(key)\"") }
            index += 1
            skipWhitespace()
            members[key] = try parseValue()
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw failure("expected \",\" or \"}\" after the value of \"\(key)\"")
            }
        }
    }

    private mutating func parseArray() throws(Failure) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw failure("expected \",\" or \"]\" in the array")
            }
        }
    }

    private mutating func parseString() throws(Failure) -> String {
        index += 1
        var scalars: [UInt8] = []
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: scalars, as: UTF8.self) else { throw failure("the string is not valid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = current else { break }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                            throw failure("a high surrogate \\u\(String(code, radix: 16)) is not followed by a low one")
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw failure("invalid low surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw failure("a lone low surrogate \\u\(String(code, radix: 16))")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw failure("invalid \\u escape") }
                    scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    index -= 1
                    throw failure("invalid escape \\\(Self.show(escape))")
                }
            case 0x00..<0x20:
                throw failure("a control character (\(Self.show(byte))) inside a string; escape it")
            default:
                scalars.append(byte)
                index += 1
            }
        }
        throw failure("the string is not closed")
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("a \\u escape needs four hexadecimal digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hexadecimal digits")
            }
            value = value * 16 + UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseLiteral(_ word: String, _ value: JSONValue) throws(Failure) -> JSONValue {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<(index + expected.count)]) == expected else {
            throw failure("unexpected text; expected \(word), a string, a number, an object or an array")
        }
        index += expected.count
        return value
    }

    private mutating func parseNumber() throws(Failure) -> JSONValue {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, Self.isDigit(first) else { throw failure("a number needs digits") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = current, Self.isDigit(next) { throw failure("a number cannot start with 0") }
        } else {
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }
        var isInteger = true
        if current == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let byte = current, Self.isDigit(byte) else { throw failure("digits must follow the decimal point") }
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }
        let hasExponent = current == UInt8(ascii: "e") || current == UInt8(ascii: "E")
        if hasExponent {
            isInteger = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, Self.isDigit(byte) else { throw failure("digits must follow the exponent") }
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let integer = Int(text) { return .int(integer) }
        // An exponent is how a Double is written when it is large or small: its digits are the
        // Double's. Without one, the text is kept as written (a Decimal's `0.00001` is not `1e-05`).
        if keepsDigits, isInteger || !hasExponent { return .string(text) }
        guard let number = Double(text), number.isFinite else {
            index = start
            throw failure("the number \(text) is out of range")
        }
        return .double(number)
    }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func show(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "\"\(Character(Unicode.Scalar(byte)))\"" : String(format: "0x%02X", byte)
    }

    /// A failure at the current position.
    private func failure(_ message: String) -> Failure {
        var line = 1
        // A byte order mark is not a column.
        var lineStart = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        for position in lineStart..<max(lineStart, min(index, bytes.count)) where bytes[position] == 0x0A {
            line += 1
            lineStart = position + 1
        }
        // Columns count characters, not bytes.
        let column = String(decoding: bytes[lineStart..<max(lineStart, min(index, bytes.count))], as: UTF8.self).count + 1
        return Failure(message: message, line: line, column: column)
    }
}

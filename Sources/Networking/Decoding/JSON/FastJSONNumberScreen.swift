import Foundation

/// Finds, before a document is handed whole to `JSONDecoder`, the numbers `JSONDecoder` would
/// trap on, so that a hostile or broken server gives an error instead of a crash.
///
/// `JSONDecoder` (swift-foundation) reads a number with a fraction or an exponent whose value is a
/// whole number of 2^53 or more as `Decimal` when asked for an integer, and when `Decimal`'s
/// parser gives up on it (more than about 165 integer digits, or more than 128 digits after the
/// point) it stops the process (`preconditionFailure` in `JSONScanner.validateNumber`).
/// `FastJSONDecoder` checks such numbers itself; the paths that give the whole document to
/// `JSONDecoder` (`allowsJSON5`, `assumesTopLevelDictionary`, `.formatted` dates, documents over
/// 1 GiB, ``NetworkingConfiguration/usesFoundationJSONDecoder``) are screened here first.
///
/// With `allowsJSON5`, a hexadecimal number its own integer reading refuses (a fraction, as in
/// `0x20000000000000.0`, or a negative integer just past `Int64.min` or `Int128.min`) is read
/// by `strtod` instead; when that gives a whole number of 2^53 or more that the integer type
/// holds, it goes to `Decimal`, which cannot read hexadecimal at all, and the process stops the
/// same way.
///
/// A document holding such a number is refused whatever the model asks for, with the error
/// `FastJSONDecoder` gives for it as an integer ("Number … is not representable in Swift."). Only
/// decimal numbers of at least ``minimumLength`` characters, and hexadecimal ones, are looked at
/// closely, so the screen is one pass over the bytes for any real document.
enum FastJSONNumberScreen {
    /// The shortest number the screen parses: every number `Decimal`'s parser gives up on while its
    /// value fits a 128-bit integer is over a hundred characters long.
    static let minimumLength = 40

    /// Throws `JSONDecoder`'s "not valid JSON" error naming the first number it would trap on.
    ///
    /// - Parameter json5: whether single-quoted strings and comments are skipped as well.
    static func check(_ data: Data, json5: Bool) throws {
        let found: String?
        do {
            found = try FastJSONDecoder.withUTF8(of: data) { firstTrappingNumber(in: $0, json5: json5) }
        } catch {
            return  // Not text JSONDecoder can read either; it reports that itself.
        }
        guard let number = found else { return }
        throw FastJSONDecoder.invalidJSON(FastJSONSyntaxError("Number \(number) is not representable in Swift"))
    }

    static func firstTrappingNumber(in bytes: UnsafeRawBufferPointer, json5: Bool) -> String? {
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index = endOfString(bytes, from: index, quote: byte)
            case UInt8(ascii: "'") where json5:
                index = endOfString(bytes, from: index, quote: byte)
            case UInt8(ascii: "/") where json5 && index + 1 < count && bytes[index + 1] == UInt8(ascii: "/"):
                // JSON5 ends a line comment at either line terminator, as JSONDecoder does.
                while index < count, bytes[index] != UInt8(ascii: "\n"), bytes[index] != UInt8(ascii: "\r") { index += 1 }
            case UInt8(ascii: "/") where json5 && index + 1 < count && bytes[index + 1] == UInt8(ascii: "*"):
                index += 2
                while index < count, !(bytes[index] == UInt8(ascii: "*") && index + 1 < count && bytes[index + 1] == UInt8(ascii: "/")) {
                    index += 1
                }
                index += 2
            case _ where isTokenByte(byte):
                let start = index
                while index < count, isTokenByte(bytes[index]) { index += 1 }
                let token = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                if json5, let number = trappingHexadecimalNumber(token) { return number }
                if index - start >= minimumLength, let number = trappingNumber(token) { return number }
            default:
                index += 1
            }
        }
        return nil
    }

    /// The number's text when it is one `JSONDecoder` would trap on as an integer.
    private static func trappingNumber(_ token: UnsafeRawBufferPointer) -> String? {
        // Identifiers (JSON5 keys, `Infinity`) and hexadecimal numbers never reach `Decimal`.
        guard let first = token.first,
            first == UInt8(ascii: "-") || first == UInt8(ascii: "+") || first == UInt8(ascii: ".") || FastJSONNumberParser.isDigit(first),
            token.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }),
            !token.contains(where: { $0 == UInt8(ascii: "x") || $0 == UInt8(ascii: "X") })
        else { return nil }
        let text = String(decoding: token, as: UTF8.self)
        guard Decimal(string: text) == nil, let value = Double(text), value.magnitude >= 0x1p53, value.magnitude <= 0x1p128 else {
            return nil
        }
        return text
    }

    /// The number's text when it is a JSON5 hexadecimal number `JSONDecoder` would trap on as an
    /// integer: one it reads as a whole `Double` of 2^53 or more (up to 2^128, past which no
    /// integer type holds it) that no integer type reads exactly. A plain integer is read
    /// exactly when its type holds it, and fails for a type too small unless rounding to a
    /// `Double` brings it back in: only a negative one just past `Int64.min` or `Int128.min` does.
    private static func trappingHexadecimalNumber(_ token: UnsafeRawBufferPointer) -> String? {
        var rest = token[...]
        let negative = rest.first == UInt8(ascii: "-")
        if negative || rest.first == UInt8(ascii: "+") { rest = rest.dropFirst() }
        guard rest.count > 2, rest[rest.startIndex] == UInt8(ascii: "0"),
            rest[rest.startIndex + 1] | 0x20 == UInt8(ascii: "x")
        else { return nil }
        let text = String(decoding: token, as: UTF8.self)
        guard let value = Double(text), value.magnitude >= 0x1p53, value.magnitude <= 0x1p128, value == value.rounded() else {
            return nil
        }
        let digits = rest.dropFirst(2)
        guard digits.allSatisfy(\.isASCIIHexDigit) else { return text }
        guard negative else { return nil }
        // Rounded to -2^63 or -2^127 from past it: more than 8 followed by 15 or 31 zeros.
        let significant = digits.drop(while: { $0 == UInt8(ascii: "0") })
        let width = value == -0x1p63 ? 16 : value == -0x1p127 ? 32 : 0
        guard width > 0, significant.count == width, let first = significant.first, first >= UInt8(ascii: "8") else { return nil }
        return first == UInt8(ascii: "8") && significant.dropFirst().allSatisfy({ $0 == UInt8(ascii: "0") }) ? nil : text
    }

    /// The index after the closing quote (or the end), skipping escaped characters.
    private static func endOfString(_ bytes: UnsafeRawBufferPointer, from start: Int, quote: UInt8) -> Int {
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\") {
                index += 2
            } else if byte == quote {
                return index + 1
            } else {
                index += 1
            }
        }
        return index
    }

    /// Bytes that can be part of a number, or of an identifier that contains digits.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "."), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "$"):
            true
        default:
            false
        }
    }
}

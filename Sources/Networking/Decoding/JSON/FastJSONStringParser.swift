/// Reads JSON string contents the way `JSONDecoder` does: the escapes of RFC 8259 (including
/// surrogate pairs, and rejecting lone surrogates), no raw control characters, valid UTF-8.
enum FastJSONStringParser {
    /// A string from bytes that need no unescaping; nil if they are not valid UTF-8.
    @inline(__always) static func string(_ p: UnsafePointer<UInt8>, _ n: Int, isASCII: Bool) -> String? {
        let buffer = UnsafeBufferPointer(start: p, count: n)
        if isASCII { return String(decoding: buffer, as: UTF8.self) }
        return String(validating: buffer, as: UTF8.self)
    }

    /// Whether the bytes are valid UTF-8 (by the standard library's own rules).
    static func isValidUTF8(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        String(validating: UnsafeBufferPointer(start: p, count: n), as: UTF8.self) != nil
    }

    @inline(__always) private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte &- UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte &- UInt8(ascii: "a") &+ 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte &- UInt8(ascii: "A") &+ 10)
        default: nil
        }
    }

    /// The four hex digits at `p[i..<i+4]`.
    private static func hex4(_ p: UnsafePointer<UInt8>, _ i: Int, _ n: Int, offset: Int) throws(FastJSONSyntaxError) -> UInt32 {
        guard i &+ 4 <= n else { throw FastJSONSyntaxError("Unexpected end of unicode escape sequence", at: offset &+ i) }
        var value: UInt32 = 0
        for k in 0..<4 {
            guard let digit = hexValue(p[i &+ k]) else {
                throw FastJSONSyntaxError("Invalid hex digit in unicode escape sequence", at: offset &+ i &+ k)
            }
            value = value &<< 4 | digit
        }
        return value
    }

    /// Appends the unescaped contents (`n` bytes at `p`, which start at byte `offset` of the input)
    /// to `out`. Throws for an invalid escape, a lone surrogate or a raw control character; UTF-8
    /// validity is left to the caller.
    static func unescape(
        _ p: UnsafePointer<UInt8>, _ n: Int, offset: Int, into out: inout FastJSONBuffer<UInt8>
    ) throws(FastJSONSyntaxError) {
        out.reserve(n)
        var i = 0
        var chunk = 0
        while i < n {
            let byte = p[i]
            if byte == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(start: p + chunk, count: i &- chunk))
                i &+= 1
                guard i < n else { throw FastJSONSyntaxError("Unexpected end of escape sequence", at: offset &+ i) }
                switch p[i] {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4(p, i &+ 1, n, offset: offset)
                    i &+= 4
                    if scalar >= 0xD800, scalar < 0xDC00 {
                        // A lead surrogate must be followed by an escaped trail surrogate.
                        guard i &+ 2 < n, p[i &+ 1] == UInt8(ascii: "\\"), p[i &+ 2] == UInt8(ascii: "u") else {
                            throw FastJSONSyntaxError("Missing low code point in surrogate pair", at: offset &+ i &+ 1)
                        }
                        let trail = try hex4(p, i &+ 3, n, offset: offset)
                        guard trail >= 0xDC00, trail < 0xE000 else {
                            throw FastJSONSyntaxError("Missing low code point in surrogate pair", at: offset &+ i &+ 3)
                        }
                        scalar = 0x10000 &+ ((scalar &- 0xD800) &<< 10 | (trail &- 0xDC00))
                        i &+= 6
                    } else if scalar >= 0xDC00, scalar < 0xE000 {
                        throw FastJSONSyntaxError("Invalid unicode scalar value '0x\(String(scalar, radix: 16))'", at: offset &+ i)
                    }
                    appendUTF8(scalar, to: &out)
                default:
                    throw FastJSONSyntaxError("Invalid escape sequence", at: offset &+ i)
                }
                i &+= 1
                chunk = i
            } else if byte < 0x20 {
                throw FastJSONSyntaxError("Unescaped control character '0x\(String(byte, radix: 16))'", at: offset &+ i)
            } else {
                i &+= 1
            }
        }
        out.append(contentsOf: UnsafeBufferPointer(start: p + chunk, count: n &- chunk))
    }

    @inline(__always) private static func appendUTF8(_ scalar: UInt32, to out: inout FastJSONBuffer<UInt8>) {
        if scalar < 0x80 {
            out.append(UInt8(truncatingIfNeeded: scalar))
        } else if scalar < 0x800 {
            out.append(UInt8(truncatingIfNeeded: 0xC0 | scalar &>> 6))
            out.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        } else if scalar < 0x10000 {
            out.append(UInt8(truncatingIfNeeded: 0xE0 | scalar &>> 12))
            out.append(UInt8(truncatingIfNeeded: 0x80 | scalar &>> 6 & 0x3F))
            out.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        } else {
            out.append(UInt8(truncatingIfNeeded: 0xF0 | scalar &>> 18))
            out.append(UInt8(truncatingIfNeeded: 0x80 | scalar &>> 12 & 0x3F))
            out.append(UInt8(truncatingIfNeeded: 0x80 | scalar &>> 6 & 0x3F))
            out.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        }
    }
}

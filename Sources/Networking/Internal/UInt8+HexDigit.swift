extension UInt8 {
    /// Whether the byte is an ASCII hexadecimal digit, either case: what percent-encoding and
    /// hexadecimal numbers are written with.
    var isASCIIHexDigit: Bool {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }
}

/// Why some bytes are not JSON that Foundation's `JSONDecoder` accepts.
///
/// Thrown by the scanner, and later by the checks that `JSONDecoder` also defers until a value is
/// decoded (number syntax, escapes, UTF-8, control characters). `FastJSONDecoder` turns it into the
/// same `DecodingError.dataCorrupted` that `JSONDecoder` throws ("The given data was not valid
/// JSON.", empty coding path), with this error as the underlying error so the cause stays readable.
struct FastJSONSyntaxError: Error, CustomStringConvertible, Sendable {
    /// What is wrong, in the words a person debugging a response needs.
    let message: String
    /// The byte offset in the (UTF-8) input where the problem was found, when known.
    let offset: Int?

    init(_ message: String, at offset: Int? = nil) {
        self.message = message
        self.offset = offset
    }

    var description: String {
        if let offset { return "\(message) at byte offset \(offset)." }
        return "\(message)."
    }

    static func unexpectedEnd() -> FastJSONSyntaxError { FastJSONSyntaxError("Unexpected end of file") }

    static func unexpected(_ byte: UInt8, at offset: Int, _ context: String) -> FastJSONSyntaxError {
        let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "0x\(String(byte, radix: 16))"
        return FastJSONSyntaxError("Unexpected character \(shown) \(context)", at: offset)
    }
}

/// Follows JSON text byte by byte to tell a string's bytes from the structure around them: a
/// bracket, a comma or an escaped quote inside a string is text, not syntax. Shared by the scans
/// of JSON text that do not parse it (a depth check, where a redacted value ends, pretty printing).
struct JSONStringTracker {
    /// Whether the last byte taken left the text inside a string.
    private(set) var inString = false
    private var escaped = false

    /// Takes the next byte; whether it belongs to a string, its quotes included.
    mutating func consume(_ byte: UInt8) -> Bool {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            return true
        }
        inString = byte == UInt8(ascii: "\"")
        return inString
    }
}

/// Turns the header lines libcurl hands to its header callback into ``HTTPHeaders``.
///
/// The lines are collected as raw bytes on the event-loop thread and parsed here on the
/// caller's, to keep the loop short. When several heads arrive (a `100 Continue` before the
/// real one), only the last counts. Folded lines (obsolete, RFC 9112 §5.2) are joined to the
/// field before them with one space.
enum LibcurlHeaderParser {
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let lineFeed = UInt8(ascii: "\n")

    /// The fields of the last response head in `bytes`.
    static func parse(_ bytes: [UInt8]) -> HTTPHeaders {
        var fields: [HTTPHeaders.Field] = []
        var lineStart = 0
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count, bytes[lineEnd] != lineFeed { lineEnd += 1 }
            var contentEnd = lineEnd
            if contentEnd > lineStart, bytes[contentEnd - 1] == carriageReturn { contentEnd -= 1 }
            let line = bytes[lineStart..<contentEnd]
            lineStart = lineEnd + 1
            guard let first = line.first else { continue }
            if line.starts(with: "HTTP/".utf8) {
                fields.removeAll(keepingCapacity: true)
            } else if first == space || first == tab {
                guard !fields.isEmpty else { continue }
                let folded = trimmed(line)
                if !folded.isEmpty { fields[fields.count - 1].value += " " + String(decoding: folded, as: UTF8.self) }
            } else if let separator = line.firstIndex(of: colon) {
                let name = trimmed(line[line.startIndex..<separator])
                guard !name.isEmpty else { continue }
                let value = trimmed(line[(separator + 1)...])
                fields.append(HTTPHeaders.Field(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
            }
        }
        return HTTPHeaders(fields)
    }

    /// The bytes without leading and trailing spaces and tabs.
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == space || bytes[start] == tab { start += 1 }
        while end > start, bytes[end - 1] == space || bytes[end - 1] == tab { end -= 1 }
        return bytes[start..<end]
    }
}

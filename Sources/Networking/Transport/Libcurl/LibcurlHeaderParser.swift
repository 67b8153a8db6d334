/// Turns the header lines libcurl hands to its header callback into ``HTTPHeaders``.
///
/// The lines are collected as raw bytes on the event-loop thread and parsed here on the caller's,
/// to keep the loop short. When several heads arrive (a `100 Continue` before the real one), only
/// the last counts. Lines after a head's end that start no new head are a chunked body's trailer
/// fields: they are left out, never merged into the head (RFC 9110 §6.5.1 — a trailer must not
/// replace `Content-Type` or add a `Set-Cookie`). Folded lines (obsolete, RFC 9112 §5.2) are joined
/// to the field before them with one space. A CR or NUL inside a value (a bare CR before the
/// line's end), which libcurl passes on, becomes a space (RFC 9110 §5.5): sent back — an `ETag`
/// as `If-None-Match` — it would be refused, for good. It runs once per response, so it works on
/// the raw buffer.
enum LibcurlHeaderParser {
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let lineFeed = UInt8(ascii: "\n")

    /// The fields of the last response head in `bytes`.
    static func parse(_ bytes: [UInt8]) -> HTTPHeaders {
        bytes.withUnsafeBufferPointer { buffer in HTTPHeaders(fields(in: buffer)) }
    }

    private static func fields(in buffer: UnsafeBufferPointer<UInt8>) -> [HTTPHeaders.Field] {
        var fields: [HTTPHeaders.Field] = []
        var lineStart = 0
        // After a head's empty line, until the next status line: trailer fields.
        var headEnded = false
        while lineStart < buffer.count {
            var lineEnd = lineStart
            while lineEnd < buffer.count, buffer[lineEnd] != lineFeed { lineEnd += 1 }
            var contentEnd = lineEnd
            if contentEnd > lineStart, buffer[contentEnd - 1] == carriageReturn { contentEnd -= 1 }
            let start = lineStart
            lineStart = lineEnd + 1
            guard start < contentEnd else {
                headEnded = true
                continue
            }
            let first = buffer[start]
            if isStatusLine(buffer, from: start, to: contentEnd) {
                fields.removeAll(keepingCapacity: true)
                if fields.capacity == 0 { fields.reserveCapacity(16) }
                headEnded = false
            } else if headEnded {
                continue
            } else if first == space || first == tab {
                guard !fields.isEmpty else { continue }
                let (from, to) = trimmed(buffer, start, contentEnd)
                if from < to { fields[fields.count - 1].value += " " + value(buffer, from, to) }
            } else {
                var separator = start
                while separator < contentEnd, buffer[separator] != colon { separator += 1 }
                guard separator < contentEnd else { continue }
                let (nameFrom, nameTo) = trimmed(buffer, start, separator)
                guard nameFrom < nameTo else { continue }
                let (valueFrom, valueTo) = trimmed(buffer, separator + 1, contentEnd)
                fields.append(HTTPHeaders.Field(name: string(buffer, nameFrom, nameTo), value: value(buffer, valueFrom, valueTo)))
            }
        }
        return fields
    }

    /// Whether the line starts with `HTTP/`.
    private static func isStatusLine(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Bool {
        end - start >= 5 && buffer[start] == UInt8(ascii: "H") && buffer[start + 1] == UInt8(ascii: "T")
            && buffer[start + 2] == UInt8(ascii: "T") && buffer[start + 3] == UInt8(ascii: "P")
            && buffer[start + 4] == UInt8(ascii: "/")
    }

    /// The bounds without leading and trailing spaces and tabs.
    private static func trimmed(_ buffer: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> (Int, Int) {
        var from = start
        var to = end
        while from < to, buffer[from] == space || buffer[from] == tab { from += 1 }
        while to > from, buffer[to - 1] == space || buffer[to - 1] == tab { to -= 1 }
        return (from, to)
    }

    /// A value's text, each control character but a tab (a stray CR, a NUL) replaced with a
    /// space, trimmed again.
    private static func value(_ buffer: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> String {
        guard buffer[from..<to].contains(where: HeaderValidation.isForbidden) else { return string(buffer, from, to) }
        let bytes = buffer[from..<to].map { HeaderValidation.isForbidden($0) ? space : $0 }
        return bytes.withUnsafeBufferPointer { cleaned in
            let (from, to) = trimmed(cleaned, 0, cleaned.count)
            return string(cleaned, from, to)
        }
    }

    private static func string(_ buffer: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: buffer[from..<to]), as: UTF8.self)
    }
}

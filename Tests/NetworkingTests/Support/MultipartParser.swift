import Foundation

/// A small, strict `multipart/form-data` parser for checking what ``MultipartFormData`` writes: it
/// accepts exactly the RFC 2046 framing (no preamble, CRLF line breaks, `--boundary--` CRLF at the
/// end, no epilogue) and the quoted `name` and `filename` parameters, and returns nil otherwise.
enum MultipartParser {
    struct Part: Equatable {
        var name: String
        var fileName: String?
        var contentType: String?
        var content: [UInt8]
    }

    static func parse(_ body: [UInt8], boundary: String) -> [Part]? {
        let opening = Array("--\(boundary)\r\n".utf8)
        let delimiter = Array("\r\n--\(boundary)".utf8)
        guard body.starts(with: opening) else {
            return body == Array("--\(boundary)--\r\n".utf8) ? [] : nil
        }
        var parts: [Part] = []
        var position = opening.count
        while true {
            guard let end = firstIndex(of: delimiter, in: body, from: position) else { return nil }
            guard let part = parsePart(Array(body[position..<end])) else { return nil }
            parts.append(part)
            let after = end + delimiter.count
            let rest = Array(body[after...])
            if rest == Array("--\r\n".utf8) { return parts }
            guard rest.starts(with: Array("\r\n".utf8)) else { return nil }
            position = after + 2
        }
    }

    private static func parsePart(_ bytes: [UInt8]) -> Part? {
        guard let headerEnd = firstIndex(of: Array("\r\n\r\n".utf8), in: bytes, from: 0) else { return nil }
        let headerText = String(decoding: bytes[..<headerEnd], as: UTF8.self)
        var part = Part(name: "", fileName: nil, contentType: nil, content: Array(bytes[(headerEnd + 4)...]))
        var sawDisposition = false
        for line in headerText.components(separatedBy: "\r\n") {
            if line.hasPrefix("Content-Disposition: form-data; ") {
                sawDisposition = true
                var rest = Substring(line.dropFirst("Content-Disposition: form-data; ".count))
                guard let name = quotedParameter("name", in: &rest) else { return nil }
                part.name = name
                if rest.hasPrefix("; ") {
                    rest = rest.dropFirst(2)
                    guard let fileName = quotedParameter("filename", in: &rest) else { return nil }
                    part.fileName = fileName
                }
                guard rest.isEmpty else { return nil }
            } else if line.hasPrefix("Content-Type: ") {
                part.contentType = String(line.dropFirst("Content-Type: ".count))
            } else {
                return nil
            }
        }
        return sawDisposition ? part : nil
    }

    /// Reads `key="value"` from the start of `text` (a value cannot contain `"`) and drops it.
    private static func quotedParameter(_ key: String, in text: inout Substring) -> String? {
        guard text.hasPrefix("\(key)=\"") else { return nil }
        text = text.dropFirst(key.count + 2)
        guard let close = text.firstIndex(of: "\"") else { return nil }
        let value = String(text[..<close])
        text = text[text.index(after: close)...]
        return value
    }

    static func firstIndex(of pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard pattern.count <= bytes.count else { return nil }
        var index = start
        while index <= bytes.count - pattern.count {
            if bytes[index..<(index + pattern.count)].elementsEqual(pattern) { return index }
            index += 1
        }
        return nil
    }
}

import Foundation

/// Reads `Link` header fields (RFC 8288): `<https://…/books?page=3>; rel="next", <…>; rel="prev"`.
///
/// Fields are read byte by byte: every delimiter is ASCII, and reading by `Character` would let
/// a combining mark after a quote or a comma hide it (a reflected title could then smuggle in a
/// link of its own).
enum LinkHeader {
    /// The target of the first link whose `rel` holds `relation` (compared case-insensitively),
    /// resolved against `base`. A link with an `anchor` parameter naming another resource is
    /// about that resource (RFC 8288 §3.2), not this response, and is skipped.
    static func target(of relation: String, in fields: [String], relativeTo base: URL) -> URL? {
        let wanted = relation.lowercased()
        for field in fields {
            for link in links(in: Array(field.utf8)) where link.relations.contains(wanted) {
                if let anchor = link.anchor, !isContext(anchor, of: base) { continue }
                // A target that is no URL does not hide a later link of the same relation.
                if let target = URL(string: link.target, relativeTo: base)?.absoluteURL { return target }
            }
        }
        return nil
    }

    private struct Link {
        var target: String
        var relations: [String]
        var anchor: String?
    }

    /// Whether an `anchor` names the response's own resource (an empty one does).
    private static func isContext(_ anchor: String, of base: URL) -> Bool {
        if anchor.isEmpty { return true }
        guard let resolved = URL(string: anchor, relativeTo: base)?.absoluteURL else { return false }
        return normalized(resolved) == normalized(base.absoluteURL)
    }

    /// A URL's text without fragment, with scheme and host lower-cased and without a default port.
    private static func normalized(_ url: URL) -> String? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        components.fragment = nil
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        if (components.scheme == "http" && components.port == 80) || (components.scheme == "https" && components.port == 443) {
            components.port = nil
        }
        return components.string
    }

    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    /// Where the first `separator` outside double quotes is in `bytes[range]`, or `nil`. A
    /// quoted string may hold `\"` (RFC 9110 §5.6.4), which neither ends it nor starts one.
    private static func firstOutsideQuotes(_ separator: UInt8, in bytes: [UInt8], _ range: Range<Int>) -> Int? {
        var quoted = false
        var escaped = false
        for index in range {
            let byte = bytes[index]
            if escaped {
                escaped = false
            } else if quoted, byte == backslash {
                escaped = true
            } else if byte == quote {
                quoted.toggle()
            } else if byte == separator, !quoted {
                return index
            }
        }
        return nil
    }

    /// The text of `bytes[range]` without surrounding spaces and tabs.
    private static func trimmed(_ bytes: [UInt8], _ range: Range<Int>) -> String {
        var lower = range.lowerBound
        var upper = range.upperBound
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        while lower < upper, blank(bytes[lower]) { lower += 1 }
        while upper > lower, blank(bytes[upper - 1]) { upper -= 1 }
        return String(decoding: bytes[lower..<upper], as: UTF8.self)
    }

    /// Each `<target>; params` of a field, with its relation types lower-cased. An element that
    /// does not start with `<` is skipped whole: a `<` inside its quoted title is no link.
    private static func links(in bytes: [UInt8]) -> [Link] {
        var result: [Link] = []
        var position = 0
        let skipped: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: ",")]
        while true {
            while position < bytes.count, skipped.contains(bytes[position]) { position += 1 }
            guard position < bytes.count else { break }
            guard bytes[position] == UInt8(ascii: "<") else {
                position = (firstOutsideQuotes(UInt8(ascii: ","), in: bytes, position..<bytes.count) ?? bytes.count) + 1
                continue
            }
            let open = position
            guard let close = bytes[open...].firstIndex(of: UInt8(ascii: ">")) else { break }
            var link = Link(target: String(decoding: bytes[(open + 1)..<close], as: UTF8.self), relations: [])
            // The parameters run to the next comma outside quotes.
            let end = firstOutsideQuotes(UInt8(ascii: ","), in: bytes, (close + 1)..<bytes.count) ?? bytes.count
            var start = close + 1
            var sawRelation = false
            while start < end {
                let stop = firstOutsideQuotes(UInt8(ascii: ";"), in: bytes, start..<end) ?? end
                defer { start = stop + 1 }
                guard let equals = bytes[start..<stop].firstIndex(of: UInt8(ascii: "=")) else { continue }
                let name = trimmed(bytes, start..<equals).lowercased()
                let value = trimmed(bytes, (equals + 1)..<stop).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                // RFC 8288 §3.3: only the first `rel` parameter counts (and the first `anchor`).
                if name == "rel", !sawRelation {
                    sawRelation = true
                    link.relations = value.lowercased().split(separator: " ").map(String.init)
                } else if name == "anchor", link.anchor == nil {
                    link.anchor = value
                }
            }
            result.append(link)
            position = min(end + 1, bytes.count)
        }
        return result
    }
}

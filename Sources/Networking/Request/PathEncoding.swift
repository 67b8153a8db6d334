/// Percent-encoding of path segments and query components (RFC 3986).
enum PathEncoding {
    /// Unreserved characters (letters, digits, `-._~`): never encoded anywhere.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// Characters a path segment may hold unencoded (`pchar`): unreserved ones, sub-delims, `:` and `@`.
    private static func isSegmentByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"),
            UInt8(ascii: "@"):
            true
        default: isUnreserved(byte)
        }
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    /// The path's non-empty segments joined with `/` (no leading, trailing or repeated slash),
    /// each encoded as ``encodeSegment(_:)`` does unless `encodes` is `false`; one pass, as it
    /// runs for every request.
    static func joinedSegments(of path: String, encodes: Bool) -> String {
        let slash = UInt8(ascii: "/")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(path.utf8.count)
        var slashPending = false
        for byte in path.utf8 {
            if byte == slash {
                slashPending = !bytes.isEmpty
                continue
            }
            if slashPending {
                bytes.append(slash)
                slashPending = false
            }
            append(byte, keeping: !encodes || isSegmentByte(byte), to: &bytes)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A path segment with everything outside `pchar` encoded; `/`, `?`, `#` and `%` included,
    /// so the segment is taken literally.
    static func encodeSegment(_ segment: String) -> String {
        encode(segment, keeping: isSegmentByte)
    }

    /// A character of a route template's own text, as a URL holds it: kept when a path or query
    /// may hold it (`pchar`, `/`, `?`; in the query `[` and `]` too, as `filter[year]=x` is
    /// commonly sent), and `%` when two hexadecimal digits follow it (text encoded already);
    /// anything else percent-encoded (a space, `|`, non-ASCII, a lone `%`).
    static func encodeTemplateText(_ character: Character, followedBy next: some Collection<Character>, inQuery: Bool) -> String {
        if character == "%" {
            return next.count == 2 && next.allSatisfy { $0.isASCII && $0.isHexDigit } ? "%" : "%25"
        }
        return encode(String(character)) { byte in
            isPathOrQueryByte(byte) || (inQuery && (byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")))
        }
    }

    /// A value placed in a path segment: as ``encodeSegment(_:)``, and `;` encoded too, since
    /// servlet containers (Tomcat, Jetty, Spring) cut a segment at its first `;` before matching
    /// it, so `alice;x` would reach them as `alice`.
    static func encodeSegmentValue(_ value: String) -> String {
        encode(value) { $0 != UInt8(ascii: ";") && isSegmentByte($0) }
    }

    /// A query name or value with everything but unreserved characters encoded, so `&`, `=`, `+`
    /// and spaces in values cannot change the query's meaning.
    static func encodeQueryComponent(_ text: String) -> String {
        encode(text, keeping: isUnreserved)
    }

    /// A URL's path, query and fragment with every byte no URL may hold percent-encoded: `[`, `]`,
    /// a space, `|`, non-ASCII, a `%` that starts no escape, a second `#`. `URL(string:)` would
    /// encode such bytes itself, but then encodes every `%` of their component too, so a route's
    /// `filter[year]=x&q=C%2B%2B` would send `q=C%252B%252B`. Text that needs nothing is returned
    /// as it is.
    static func encodeInvalidBytes(_ text: Substring) -> String {
        // Most paths hold nothing to encode and no `%` to check: one pass, no copy of the bytes.
        var fragments = 0
        let plain = text.utf8.allSatisfy { byte in
            if byte == UInt8(ascii: "#") {
                fragments += 1
                return fragments == 1
            }
            return isPathOrQueryByte(byte)
        }
        if plain { return String(text) }
        let bytes = Array(text.utf8)
        var fragmentStarted = false
        var result: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            var keep = isPathOrQueryByte(byte)
            if byte == UInt8(ascii: "#") {
                keep = !fragmentStarted
                fragmentStarted = true
            } else if byte == UInt8(ascii: "%") {
                keep = index + 2 < bytes.count && bytes[index + 1].isASCIIHexDigit && bytes[index + 2].isASCIIHexDigit
            }
            if !keep, result.isEmpty {
                result.reserveCapacity(bytes.count + 16)
                result.append(contentsOf: bytes[..<index])
            }
            if !keep || !result.isEmpty { append(byte, keeping: keep, to: &result) }
        }
        return result.isEmpty ? String(text) : String(decoding: result, as: UTF8.self)
    }

    /// What a path or a query may hold unencoded: `pchar`, `/` and `?`.
    private static func isPathOrQueryByte(_ byte: UInt8) -> Bool {
        isSegmentByte(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?")
    }

    private static func encode(_ text: String, keeping: (UInt8) -> Bool) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 { append(byte, keeping: keeping(byte), to: &bytes) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the byte as it is, or percent-encoded (`%XX`, uppercase) when it is not kept.
    private static func append(_ byte: UInt8, keeping: Bool, to bytes: inout [UInt8]) {
        guard !keeping else {
            bytes.append(byte)
            return
        }
        bytes.append(UInt8(ascii: "%"))
        bytes.append(hex[Int(byte >> 4)])
        bytes.append(hex[Int(byte & 0x0F)])
    }
}

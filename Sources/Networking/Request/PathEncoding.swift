/// Percent-encoding of path segments and query components (RFC 3986).
enum PathEncoding {
    /// Unreserved characters: never encoded anywhere.
    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    /// Characters a path segment may hold unencoded besides unreserved ones (sub-delims, ":" and "@").
    private static let segmentExtras = Set("!$&'()*+,;=:@".utf8)

    /// A path segment with everything outside `pchar` encoded; `/`, `?`, `#` and `%` included,
    /// so the segment is taken literally.
    static func encodeSegment(_ segment: String) -> String {
        encode(segment) { unreserved.contains($0) || segmentExtras.contains($0) }
    }

    /// A query name or value with everything but unreserved characters encoded, so `&`, `=`, `+`
    /// and spaces in values cannot change the query's meaning.
    static func encodeQueryComponent(_ text: String) -> String {
        encode(text) { unreserved.contains($0) }
    }

    private static func encode(_ text: String, keeping: (UInt8) -> Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if keeping(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

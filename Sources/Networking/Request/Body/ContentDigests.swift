/// Digests of a request body sent in headers, so the server can check what it received:
/// `Content-MD5` (RFC 1864: the base64 MD5 digest — not hex, WebApiClient's first bug) and
/// `Content-Digest` (RFC 9530: `sha-256=:<base64>:`).
///
/// They are computed before sending, by reading the body once more piece by piece (files are never
/// loaded whole); a compressed or streamed body is staged in a temporary file while it is hashed,
/// so the digests cover exactly the bytes sent.
public struct ContentDigests: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `Content-MD5: <base64 MD5>`.
    public static let md5 = ContentDigests(rawValue: 1 << 0)
    /// `Content-Digest: sha-256=:<base64 SHA-256>:`.
    public static let sha256 = ContentDigests(rawValue: 1 << 1)
}

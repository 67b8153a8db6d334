import Foundation

/// The header values that carry a body's digest, so a server can check that the bytes it received
/// are the bytes that were sent.
///
/// Two standards coexist: `Content-MD5` (RFC 1864, obsoleted for HTTP by RFC 7231 but still required
/// by some object stores) and `Content-Digest` (RFC 9530, the current one). Both carry the digest of
/// the body as sent, that is after any `Content-Encoding` such as gzip. These helpers only format a
/// digest the caller computed with ``MD5`` or SHA-256; they do not hash.
enum DigestHeaders {
    /// The value of a `Content-MD5` header: the 16-byte MD5 digest in base64 (RFC 1864 §2), for
    /// example `"1B2M2Y8AsgTpgAmY7PhCfg=="` for an empty body. The digest is encoded as given,
    /// whatever its length.
    static func contentMD5(_ digest: [UInt8]) -> String {
        Data(digest).base64EncodedString()
    }

    /// The value of a `Content-Digest` header carrying one SHA-256 digest (RFC 9530 §2): the
    /// algorithm key `sha-256` and the 32-byte digest as a Structured Fields byte sequence, that is
    /// base64 between colons, for example `"sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"`
    /// for the body `{"hello": "world"}` (RFC 9530 §2). The digest is encoded as given, whatever
    /// its length.
    static func contentDigestSHA256(_ digest: [UInt8]) -> String {
        "sha-256=:\(Data(digest).base64EncodedString()):"
    }
}

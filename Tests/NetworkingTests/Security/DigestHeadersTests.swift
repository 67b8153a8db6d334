import Foundation
import Testing

@testable import Networking

@Suite("Digest headers")
struct DigestHeadersTests {
    @Test("Content-MD5 is the base64 of the MD5 digest (RFC 1864)")
    func contentMD5() {
        #expect(DigestHeaders.contentMD5(MD5.hash([UInt8]())) == "1B2M2Y8AsgTpgAmY7PhCfg==")
        // python3 -c 'import hashlib,base64; print(base64.b64encode(hashlib.md5(b"Check Integrity!").digest()))'
        #expect(DigestHeaders.contentMD5(MD5.hash(Array("Check Integrity!".utf8))) == "nwqq6b6ua/tTDk7B5M184w==")
    }

    @Test("Content-Digest carries sha-256 as a structured-field byte sequence (RFC 9530 §2 example)")
    func contentDigest() throws {
        // SHA-256 of the body {"hello": "world"}, the RFC's example.
        let digest = try #require(Data(base64Encoded: "X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="))
        #expect(digest.count == 32)
        #expect(DigestHeaders.contentDigestSHA256(Array(digest)) == "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:")
    }
}

import Foundation
import Testing

@testable import Networking

@Suite("SHA-256")
struct SHA256Tests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test(
        "NIST FIPS 180-4 example vectors",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
                "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
            ),
        ])
    func nistVectors(message: String, digest: String) {
        #expect(hex(SHA256.hash(Array(message.utf8))) == digest)
    }

    @Test("One million times \"a\" (NIST long message)")
    func millionA() async {
        #expect(
            await onPlainThread { hex(SHA256.hash(repeatElement(UInt8(ascii: "a"), count: 1_000_000))) }
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("Hashing in pieces equals hashing at once")
    func incremental() {
        let message = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var hasher = SHA256()
        hasher.update(message[0..<1])
        hasher.update(message[1..<64])
        hasher.update(message[64..<600])
        hasher.update(message[600...])
        #expect(hasher.finalize() == SHA256.hash(message))
    }

    @Test("Matches openssl dgst -sha256 around every padding boundary")
    func matchesOpenSSL() async throws {
        let openssl = try #require(Subprocess.find("openssl"), "openssl is needed (script/bootstrap installs it)")
        for length in [1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4099] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ length) }
            let result = try await Subprocess.run(openssl, ["dgst", "-sha256", "-r"], input: Data(bytes))
            let expected = String(decoding: result.output, as: UTF8.self).split(separator: " ").first.map(String.init)
            #expect(result.status == 0)
            #expect(hex(SHA256.hash(bytes)) == expected, "length \(length)")
        }
    }
}

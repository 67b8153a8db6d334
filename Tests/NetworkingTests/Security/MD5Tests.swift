import Foundation
import Testing

@testable import Networking

@Suite("MD5")
struct MD5Tests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test(
        "RFC 1321 appendix A.5 test suite",
        arguments: [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
            (
                "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a"
            ),
        ])
    func rfcVectors(message: String, digest: String) {
        #expect(hex(MD5.hash(Array(message.utf8))) == digest)
    }

    @Test("The bytes 04 08 0C 18 (checked with openssl md5 and python hashlib)")
    func smallBinaryMessage() {
        #expect(hex(MD5.hash([0x04, 0x08, 0x0C, 0x18])) == "623edca41c8071ada535895091acf2e5")
    }

    @Test("One million times \"a\"")
    func millionA() async {
        #expect(
            await onPlainThread { hex(MD5.hash(repeatElement(UInt8(ascii: "a"), count: 1_000_000))) } == "7707d6ae4e027c70eea2a935c2296f21")
    }

    @Test("Hashing in two pieces equals hashing at once, at every split point of 200 bytes")
    func everySplitPoint() {
        var generator = SeededGenerator(seed: 1321)
        let message = generator.bytes(200)
        let whole = MD5.hash(message)
        for split in 0...message.count {
            var hasher = MD5()
            hasher.update(message[..<split])
            hasher.update(message[split...])
            #expect(hasher.finalize() == whole, "split at \(split)")
        }
    }

    @Test("Byte by byte, raw buffers, Data and non-contiguous sequences agree")
    func inputKinds() {
        var generator = SeededGenerator(seed: 7)
        let message = generator.bytes(1000)
        let whole = MD5.hash(message)
        var byteByByte = MD5()
        for byte in message { byteByByte.update(CollectionOfOne(byte)) }
        #expect(byteByByte.finalize() == whole)
        var buffered = MD5()
        message.withUnsafeBytes { buffered.update(buffer: $0) }
        #expect(buffered.finalize() == whole)
        #expect(MD5.hash(Data(message)) == whole)
        #expect(MD5.hash(message.lazy.map { $0 }) == whole)
    }

    @Test("Matches openssl md5 around every padding boundary")
    func matchesOpenSSL() async throws {
        let openssl = try #require(Subprocess.find("openssl"), "openssl is not installed")
        var generator = SeededGenerator(seed: 99)
        for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 4097] {
            let message = generator.bytes(length)
            let result = try await Subprocess.run(openssl, ["dgst", "-md5", "-r"], input: Data(message))
            let expected = String(decoding: result.output, as: UTF8.self).split(separator: " ").first.map(String.init)
            #expect(result.status == 0)
            #expect(hex(MD5.hash(message)) == expected, "length \(length)")
        }
    }
}

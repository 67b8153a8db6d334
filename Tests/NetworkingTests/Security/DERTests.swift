import Testing

@testable import Networking

@Suite("DER reader")
struct DERTests {
    @Test("Short and long length forms")
    func lengths() throws {
        let short: [UInt8] = [0x04, 0x02, 0xAA, 0xBB]
        #expect(try DER.element(in: short, at: 0, end: short.count) == DER.Element(tag: 0x04, content: 2..<4, whole: 0..<4))
        let long: [UInt8] = [0x04, 0x82, 0x01, 0x00] + [UInt8](repeating: 7, count: 256)
        #expect(try DER.element(in: long, at: 0, end: long.count).content == 4..<260)
    }

    @Test(
        "Malformed elements are errors",
        arguments: [
            [UInt8](),  // nothing
            [0x30],  // no length
            [0x30, 0x80, 0x00, 0x00],  // indefinite length (BER, not DER)
            [0x1F, 0x01, 0x00],  // multi-byte tag
            [0x30, 0x85, 1, 1, 1, 1, 1],  // five length bytes
            [0x30, 0x82, 0x01],  // truncated length
            [0x30, 0x05, 0x01],  // longer than the bytes
        ])
    func malformed(bytes: [UInt8]) {
        #expect(throws: DER.Failure.self) { try DER.element(in: bytes, at: 0, end: bytes.count) }
    }

    @Test("Children are read in order and must fit their parent")
    func children() throws {
        let bytes: [UInt8] = [0x30, 0x06, 0x02, 0x01, 0x05, 0x04, 0x01, 0x09]
        let parent = try DER.element(in: bytes, at: 0, end: bytes.count)
        #expect(try DER.children(of: parent, in: bytes).map(\.tag) == [0x02, 0x04])
        let overflowing: [UInt8] = [0x30, 0x03, 0x02, 0x05, 0x00, 0x00, 0x00, 0x00]
        let outer = try DER.element(in: overflowing, at: 0, end: overflowing.count)
        #expect(throws: DER.Failure.self) { try DER.children(of: outer, in: overflowing) }
    }

    @Test("A SEQUENCE that is not a certificate is refused")
    func notACertificate() {
        let bytes: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x01]
        #expect(throws: DER.Failure.self) { try DER.subjectPublicKeyInfo(ofCertificate: bytes) }
    }
}

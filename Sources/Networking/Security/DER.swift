/// Just enough of DER (ITU-T X.690) to find the SubjectPublicKeyInfo inside an X.509 certificate.
///
/// It reads tag-length-value elements with single-byte tags and definite lengths, which is all a
/// certificate's outer structure uses, and checks every length against the bytes it was given:
/// garbage input is an error, never a crash.
enum DER {
    /// One tag-length-value element: where it sits in the bytes it was read from.
    struct Element: Equatable {
        /// The identifier octet, for example `0x30` for a SEQUENCE.
        let tag: UInt8
        /// The range of the value (the contents).
        let content: Range<Int>
        /// The range of the whole element: tag, length and value.
        let whole: Range<Int>
    }

    /// Why the bytes are not the DER expected.
    struct Failure: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    static let sequence: UInt8 = 0x30
    static let integer: UInt8 = 0x02
    static let bitString: UInt8 = 0x03
    /// `[0] EXPLICIT`, the certificate's optional version field.
    static let contextZero: UInt8 = 0xA0

    /// Reads the element that starts at `offset`, which must end no later than `end`.
    static func element(in bytes: [UInt8], at offset: Int, end: Int) throws(Failure) -> Element {
        guard offset < end, end <= bytes.count else { throw Failure(description: "truncated DER: no element at byte \(offset)") }
        let tag = bytes[offset]
        guard tag & 0x1F != 0x1F else { throw Failure(description: "unsupported multi-byte DER tag at byte \(offset)") }
        guard offset + 1 < end else { throw Failure(description: "truncated DER: no length at byte \(offset + 1)") }
        let first = bytes[offset + 1]
        var length = 0
        var headerLength = 2
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count >= 1, count <= 4 else {
                throw Failure(description: "unsupported DER length form 0x\(String(first, radix: 16)) at byte \(offset + 1)")
            }
            guard offset + 2 + count <= end else { throw Failure(description: "truncated DER length at byte \(offset + 1)") }
            for index in 0..<count { length = length << 8 | Int(bytes[offset + 2 + index]) }
            headerLength += count
        }
        let contentStart = offset + headerLength
        // Four length bytes with the top bit set make a negative `Int` where it has 32 bits (watchOS).
        guard length >= 0, length <= end - contentStart else {
            throw Failure(description: "DER element at byte \(offset) claims \(length) bytes but only \(end - contentStart) remain")
        }
        return Element(tag: tag, content: contentStart..<(contentStart + length), whole: offset..<(contentStart + length))
    }

    /// The elements directly inside a constructed element, in order.
    static func children(of parent: Element, in bytes: [UInt8]) throws(Failure) -> [Element] {
        var result: [Element] = []
        var offset = parent.content.lowerBound
        while offset < parent.content.upperBound {
            let child = try element(in: bytes, at: offset, end: parent.content.upperBound)
            result.append(child)
            offset = child.whole.upperBound
        }
        return result
    }

    /// The DER bytes of the SubjectPublicKeyInfo of an X.509 certificate (RFC 5280 §4.1):
    /// Certificate → tbsCertificate → (skip the optional `[0]` version, serialNumber, signature,
    /// issuer, validity, subject) → subjectPublicKeyInfo.
    static func subjectPublicKeyInfo(ofCertificate bytes: [UInt8]) throws(Failure) -> ArraySlice<UInt8> {
        let certificate = try element(in: bytes, at: 0, end: bytes.count)
        guard certificate.tag == sequence, certificate.whole.upperBound == bytes.count else {
            throw Failure(description: "not a DER certificate: expected one SEQUENCE")
        }
        let certificateParts = try children(of: certificate, in: bytes)
        guard certificateParts.count == 3, let tbs = certificateParts.first, tbs.tag == sequence else {
            throw Failure(description: "not an X.509 certificate: expected tbsCertificate, signatureAlgorithm, signature")
        }
        var fields = try children(of: tbs, in: bytes)[...]
        if fields.first?.tag == contextZero { fields = fields.dropFirst() }
        let expected: [(tag: UInt8, name: String)] = [
            (integer, "serialNumber"), (sequence, "signature"), (sequence, "issuer"), (sequence, "validity"),
            (sequence, "subject"), (sequence, "subjectPublicKeyInfo"),
        ]
        guard fields.count >= expected.count else {
            throw Failure(description: "not an X.509 certificate: tbsCertificate has too few fields")
        }
        for (field, want) in zip(fields, expected) where field.tag != want.tag {
            throw Failure(description: "not an X.509 certificate: unexpected tag 0x\(String(field.tag, radix: 16)) for \(want.name)")
        }
        let info = fields[fields.startIndex + 5]
        let infoParts = try children(of: info, in: bytes)
        guard infoParts.count == 2, infoParts[0].tag == sequence, infoParts[1].tag == bitString else {
            throw Failure(description: "not an X.509 certificate: subjectPublicKeyInfo is not (algorithm, subjectPublicKey)")
        }
        return bytes[info.whole]
    }
}

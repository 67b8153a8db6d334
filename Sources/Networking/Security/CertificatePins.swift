import Foundation

/// Reads public-key pins from certificates: PEM files (one or more `CERTIFICATE` blocks) and DER
/// files (one certificate), as `openssl` writes them.
///
/// A pin is the SHA-256 of the certificate's DER SubjectPublicKeyInfo, so it survives a
/// certificate renewed with the same key, and matches what
/// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64` prints.
enum CertificatePins {
    private static let pemBegin = "-----BEGIN CERTIFICATE-----"
    private static let pemEnd = "-----END CERTIFICATE-----"

    /// The pins of every certificate in the file.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` naming the file when it cannot
    ///   be read, holds no certificate, or a certificate in it is malformed.
    static func pins(inFile url: URL) throws(RepositoryError) -> [PublicKeyPin] {
        try pins(inContents: try contents(ofFile: url), of: url)
    }

    /// Why a certificate authority file cannot serve, or `nil`: it must be PEM (OpenSSL, under
    /// libcurl, reads no other form) and every certificate in it well-formed. Checked when the
    /// configuration is made, so a wrong file is not found out as a TLS failure on every request.
    static func authorityProblem(inFile url: URL) -> String? {
        do throws(RepositoryError) {
            let bytes = try contents(ofFile: url)
            _ = try pins(inContents: bytes, of: url)
            // Bytes that are not PEM were read as one DER certificate.
            guard String(validating: bytes, as: UTF8.self)?.contains(pemBegin) == true else {
                return "certificateAuthorityFile \(url.path) is not PEM: give the authorities as -----BEGIN CERTIFICATE----- blocks"
            }
            return nil
        } catch {
            return "certificateAuthorityFile: \(error.configurationReason)"
        }
    }

    /// A certificate file's bytes.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` naming the file when it is
    ///   empty or cannot be read.
    private static func contents(ofFile url: URL) throws(RepositoryError) -> [UInt8] {
        // An empty file is refused before reading it: Foundation leaks its read buffer on one.
        if POSIX.kind(ofFileAt: url.path) == .regular(size: 0) {
            throw .invalidConfiguration(reason: "certificate file \(url.path) is empty")
        }
        do throws(ConfigurationFile.Refusal) {
            return [UInt8](try ConfigurationFile.contents(of: url, limit: ConfigurationFile.maximumCertificateSize))
        } catch {
            throw .invalidConfiguration(reason: "certificate file \(url.path) \(error.reason)")
        }
    }

    /// The pins of a certificate file's bytes.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` naming the file when it holds
    ///   no certificate or a malformed one.
    private static func pins(inContents bytes: [UInt8], of url: URL) throws(RepositoryError) -> [PublicKeyPin] {
        do throws(DER.Failure) {
            return try pins(inContents: bytes)
        } catch {
            throw .invalidConfiguration(reason: "certificate file \(url.path) is not a PEM or DER certificate: \(error)")
        }
    }

    /// The pins of the certificates in a PEM or DER file's bytes.
    static func pins(inContents bytes: [UInt8]) throws(DER.Failure) -> [PublicKeyPin] {
        let certificates = try derCertificates(in: bytes)
        var pins: [PublicKeyPin] = []
        for certificate in certificates { pins.append(try pin(ofCertificate: certificate)) }
        return pins
    }

    /// The pin of one DER certificate.
    static func pin(ofCertificate der: [UInt8]) throws(DER.Failure) -> PublicKeyPin {
        let info = try DER.subjectPublicKeyInfo(ofCertificate: der)
        let digest = SHA256.hash(info)
        // A SHA-256 digest always has 32 bytes, which is all PublicKeyPin checks.
        guard let pin = try? PublicKeyPin(sha256Digest: Data(digest)) else {
            throw DER.Failure(description: "internal error: digest of \(digest.count) bytes")
        }
        return pin
    }

    /// The DER certificates in PEM text, or the bytes themselves when they are not PEM.
    static func derCertificates(in bytes: [UInt8]) throws(DER.Failure) -> [[UInt8]] {
        guard let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN") else {
            guard !bytes.isEmpty else { throw DER.Failure(description: "the file is empty") }
            return [bytes]
        }
        var certificates: [[UInt8]] = []
        var remainder = Substring(text)
        while let begin = remainder.range(of: pemBegin) {
            guard let end = remainder.range(of: pemEnd, range: begin.upperBound..<remainder.endIndex) else {
                throw DER.Failure(description: "a PEM certificate block has no END line")
            }
            let body = remainder[begin.upperBound..<end.lowerBound]
            guard let der = Data(base64Encoded: String(body), options: .ignoreUnknownCharacters), !der.isEmpty else {
                throw DER.Failure(description: "a PEM certificate block is not valid base64")
            }
            certificates.append([UInt8](der))
            remainder = remainder[end.upperBound...]
        }
        guard !certificates.isEmpty else {
            throw DER.Failure(description: "the PEM text holds no \(pemBegin) block")
        }
        return certificates
    }
}

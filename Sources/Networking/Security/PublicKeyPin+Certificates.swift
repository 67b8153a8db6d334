import Foundation

/// Pins made from certificates, for configurations that name certificate files rather than pins.
extension PublicKeyPin {
    /// Creates the pin of a certificate's public key from the certificate's DER bytes.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` when the bytes are not an
    ///   X.509 certificate.
    public init(certificateDER der: Data) throws(RepositoryError) {
        do throws(DER.Failure) {
            self = try CertificatePins.pin(ofCertificate: [UInt8](der))
        } catch {
            throw .invalidConfiguration(reason: "not a DER certificate: \(error)")
        }
    }

    /// The pins of every certificate in a PEM file (one or more `CERTIFICATE` blocks, as in a
    /// chain) or a DER file (one certificate).
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` naming the file when it cannot
    ///   be read, holds no certificate, or a certificate in it is malformed.
    public static func pins(fromCertificateFile url: URL) throws(RepositoryError) -> [PublicKeyPin] {
        try CertificatePins.pins(inFile: url)
    }
}

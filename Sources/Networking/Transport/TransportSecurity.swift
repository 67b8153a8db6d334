import Foundation

/// The TLS requirements a request carries to its ``Transport``: which server keys are accepted,
/// which certificate authorities are trusted, and which certificate the client presents.
///
/// A transport that cannot honour a requirement must fail the request with
/// ``TransportError/pinningUnsupported(transport:)`` rather than ignore it.
public struct TransportSecurity: Sendable, Hashable, Codable {
    /// Pins of the server's public key; when not empty, a server whose own (leaf) certificate
    /// has none of these keys is rejected before anything is sent. Keys of intermediate or root
    /// certificates do not count (libcurl checks the leaf only, and every transport does the
    /// same): pin the server's current key and its next one.
    public var pinnedPublicKeys: [PublicKeyPin]
    /// A PEM file of certificate authorities to trust instead of the system's, for private PKI.
    public var certificateAuthorityFile: URL?
    /// The certificate presented when the server asks for one (mutual TLS), or `nil`. Not
    /// encoded: a request kept on disk (the offline queue's) never holds the key, in memory, or its password; the
    /// repository that sends it adds its configuration's certificate again.
    public var clientCertificate: ClientCertificate?

    /// Creates requirements.
    public init(
        pinnedPublicKeys: [PublicKeyPin] = [], certificateAuthorityFile: URL? = nil, clientCertificate: ClientCertificate? = nil
    ) {
        self.pinnedPublicKeys = pinnedPublicKeys
        self.certificateAuthorityFile = certificateAuthorityFile
        self.clientCertificate = clientCertificate
    }

    private enum CodingKeys: String, CodingKey {
        case pinnedPublicKeys, certificateAuthorityFile
    }

    /// No pinning, the system's trust store, no client certificate.
    public static let `default` = TransportSecurity()

    /// Whether the request asks for public-key pinning.
    public var requiresPinning: Bool { !pinnedPublicKeys.isEmpty }

    /// Why a request to `url` cannot meet these requirements, or `nil`: pinning and a client
    /// certificate need `https`, and such a request to plain `http` is refused by every transport
    /// rather than sent unpinned, or without the certificate the server identifies it by.
    func problem(sending url: URL) -> String? {
        guard url.scheme?.lowercased() == "http" else { return nil }
        // The error names the request (and its URL) already.
        if requiresPinning { return "public-key pinning needs https, but the request goes over plain http" }
        if clientCertificate != nil { return "a client certificate needs https, but the request goes over plain http" }
        return nil
    }
}

/// The SHA-256 digest of a certificate's SubjectPublicKeyInfo, base64-encoded: the form that
/// `openssl` prints and that HPKP and browsers use.
///
/// Make one for a server with:
/// `openssl s_client -connect host:443 </dev/null | openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`
public struct PublicKeyPin: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The base64 text of the 32-byte digest.
    public let base64SHA256: String

    /// Creates a pin from its base64 text; a `sha256//` prefix is accepted and dropped.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` when the text is not the
    ///   base64 form of 32 bytes.
    public init(_ text: String) throws(RepositoryError) {
        var value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if value.hasPrefix("sha256//") { value.removeFirst("sha256//".count) }
        guard let digest = Data(base64Encoded: value), digest.count == 32 else {
            throw .invalidConfiguration(
                reason: "\"\(text)\" is not a public-key pin: expected the base64 SHA-256 digest of a SubjectPublicKeyInfo (44 characters)")
        }
        base64SHA256 = digest.base64EncodedString()
    }

    /// Creates a pin from the raw 32-byte digest.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` when the digest is not 32 bytes.
    public init(sha256Digest digest: Data) throws(RepositoryError) {
        guard digest.count == 32 else {
            throw .invalidConfiguration(reason: "a SHA-256 pin has 32 bytes, not \(digest.count)")
        }
        base64SHA256 = digest.base64EncodedString()
    }

    /// Reads a pin as it was encoded, checking it as ``init(_:)`` does: a pin read from a file
    /// or a journal is never a malformed one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .base64SHA256)
        do {
            try self.init(text)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .base64SHA256, in: container, debugDescription: error.description)
        }
    }

    /// `sha256//<base64>`, the form libcurl takes.
    public var description: String { "sha256//\(base64SHA256)" }
}

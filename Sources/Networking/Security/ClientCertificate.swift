import Foundation

/// The certificate and private key a client presents when a server asks for one (mutual TLS):
/// internal services, service meshes, banking and device APIs that identify callers by
/// certificate rather than, or besides, a token.
///
/// Set it on ``NetworkingConfiguration/clientCertificate`` (or a request's
/// ``TransportSecurity/clientCertificate``). The files are read when a new connection needs
/// them, with a full handshake, so a certificate renewed on disk is picked up by the next
/// connection; connections are told apart by the certificate file, so give each identity its
/// own. A request with a client certificate needs `https`: to `http`, or redirected there, it
/// is refused rather than sent without it. Like curl and AsyncHTTPClient, the certificate is
/// presented to any `https` host a redirect leads to.
///
/// | Transport | PEM | PKCS#12 |
/// |---|---|---|
/// | ``LibcurlTransport`` (Linux, the default there) | yes | yes |
/// | ``URLSessionTransport`` on Apple platforms | no | yes |
/// | ``URLSessionTransport`` on Linux | no | no |
///
/// A transport that cannot present the certificate fails the request with
/// ``TransportError/pinningUnsupported(transport:)`` before sending anything; it never goes on
/// without it (the error's name is historical: it covers every TLS requirement). A certificate
/// or key that cannot be read, a wrong password, and a server that refuses the certificate (or
/// wanted one and got none) fail the handshake: ``TransportError/tls(_:)`` with
/// ``TLSFailure/handshakeFailed(_:)``, whose text says which. The offline queue keeps its
/// requests through such failures, as through any TLS failure: a file being renewed, or a
/// certificate the server does not know yet, may pass.
///
/// The password is never encoded, logged or printed: ``description`` and `dump` show whether
/// there is one, not what it is.
public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// How the certificate file is written.
    public enum Format: String, Sendable, Hashable {
        /// PEM text: the certificate (its chain may follow), with the private key in the same
        /// file or in a file of its own.
        case pem
        /// A PKCS#12 archive (`.p12`, `.pfx`) holding the certificate, its private key and
        /// possibly its chain, protected by a password.
        case pkcs12
    }

    /// How ``certificateFile`` is written.
    public let format: Format
    /// The certificate (PEM) or the whole archive (PKCS#12).
    public let certificateFile: URL
    /// The PEM private key's own file; `nil` when the key is in ``certificateFile``.
    public let privateKeyFile: URL?
    /// The password of an encrypted PEM key or of the PKCS#12 archive, or `nil` for none.
    public let password: String?

    /// A PEM certificate and its private key, the form `openssl`, cert-manager and most
    /// certificate authorities hand out. `privateKey` may be omitted when the key follows the
    /// certificate in the same file; `password` decrypts an encrypted key.
    ///
    /// Presented by ``LibcurlTransport`` only; on Apple platforms, convert it to PKCS#12
    /// (`openssl pkcs12 -export -in client.pem -inkey client.key -out client.p12`).
    public static func pem(certificate: URL, privateKey: URL? = nil, password: String? = nil) -> ClientCertificate {
        ClientCertificate(format: .pem, certificateFile: certificate, privateKeyFile: privateKey, password: password)
    }

    /// A PKCS#12 archive and its password. Apple platforms read password-protected archives
    /// only, and keep the identity in memory (never in a keychain).
    public static func pkcs12(_ archive: URL, password: String) -> ClientCertificate {
        ClientCertificate(format: .pkcs12, certificateFile: archive, privateKeyFile: nil, password: password)
    }

    /// The format and files, and whether there is a password — never the password.
    public var description: String {
        let kind = format == .pem ? "PEM" : "PKCS#12"
        let key = privateKeyFile.map { ", key \($0.path)" } ?? ""
        return "\(kind) client certificate \(certificateFile.path)\(key)\(password == nil ? "" : ", with a password")"
    }

    /// What `dump` and debuggers show: the password is left out.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "format": format, "certificateFile": certificateFile, "privateKeyFile": privateKeyFile as Any,
                "password": password == nil ? "none" : "<redacted>",
            ])
    }
}

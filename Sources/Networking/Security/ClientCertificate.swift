import Foundation

/// The certificate and private key a client presents when a server asks for one (mutual TLS):
/// internal services, service meshes, banking and device APIs that identify callers by
/// certificate rather than, or besides, a token.
///
/// Set it on ``NetworkingConfiguration/clientCertificate`` (or a request's
/// ``TransportSecurity/clientCertificate``). It comes from files or from memory (a secrets
/// manager, an environment variable, archive bytes kept in a keychain item, an asset; an
/// identity the keychain holds as a `SecIdentity` is not a form this type takes). Files are read when a new
/// connection needs them, with a full handshake, so a certificate renewed on disk is picked up by
/// the next connection; connections are told apart by the certificate (its file, or its bytes),
/// so give each identity its own. A request with a client certificate needs `https`: to `http`,
/// or redirected there, it is refused rather than sent without it. A redirect to the same host
/// or one under it presents it too; one to another host goes without it.
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
/// The password and the bytes of a certificate or key in memory are never encoded, logged or
/// printed: ``description`` and `dump` show whether there is a password and how many bytes
/// there are, not what they are.
public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// How the certificate is written.
    public enum Format: String, Sendable, Hashable {
        /// PEM text: the certificate (its chain may follow), with the private key after it or
        /// on its own.
        case pem
        /// A PKCS#12 archive (`.p12`, `.pfx`) holding the certificate, its private key and
        /// possibly its chain, protected by a password.
        case pkcs12
    }

    /// Where a certificate or a key comes from.
    public enum Source: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
        /// A file, read by each new connection.
        case file(URL)
        /// Bytes in memory.
        case data(Data)

        /// The file's path, or how many bytes are in memory — never the bytes.
        public var description: String {
            switch self {
            case .file(let url): url.path
            case .data(let data): "in memory (\(data.count) bytes)"
            }
        }

        /// What `dump` and debuggers show: the same as ``description``.
        public var customMirror: Mirror { Mirror(self, children: ["source": description]) }
    }

    /// How ``certificate`` is written.
    public let format: Format
    /// The certificate (PEM) or the whole archive (PKCS#12).
    public let certificate: Source
    /// The PEM private key, when it does not follow the certificate in ``certificate``.
    public let privateKey: Source?
    /// The password of an encrypted PEM key or of the PKCS#12 archive, or `nil` for none.
    public let password: String?

    /// A PEM certificate and its private key in files, the form `openssl`, cert-manager and most
    /// certificate authorities hand out. `privateKey` may be omitted when the key follows the
    /// certificate in the same file; `password` decrypts an encrypted key.
    ///
    /// Presented by ``LibcurlTransport`` only; on Apple platforms, convert it to PKCS#12
    /// (`openssl pkcs12 -export -in client.pem -inkey client.key -out client.p12`).
    public static func pem(certificate: URL, privateKey: URL? = nil, password: String? = nil) -> ClientCertificate {
        ClientCertificate(format: .pem, certificate: .file(certificate), privateKey: privateKey.map { .file($0) }, password: password)
    }

    /// A PEM certificate and its private key in memory (the text of the files above, as a
    /// secrets manager or an environment variable hands it over). Presented by
    /// ``LibcurlTransport`` only.
    public static func pem(certificate: Data, privateKey: Data? = nil, password: String? = nil) -> ClientCertificate {
        ClientCertificate(format: .pem, certificate: .data(certificate), privateKey: privateKey.map { .data($0) }, password: password)
    }

    /// A PKCS#12 archive in a file and its password. Apple platforms read password-protected
    /// archives only, and keep the identity in memory (never in a keychain).
    public static func pkcs12(_ archive: URL, password: String) -> ClientCertificate {
        ClientCertificate(format: .pkcs12, certificate: .file(archive), privateKey: nil, password: password)
    }

    /// A PKCS#12 archive in memory (bytes you keep in a keychain item, an app's assets, a
    /// download from your device-management service) and its password.
    ///
    /// On Apple platforms ``URLSessionTransport`` keeps a URL session per distinct TLS
    /// requirement for its lifetime: rotating short-lived certificates in memory, make a new
    /// transport now and then rather than send thousands of distinct ones through one.
    public static func pkcs12(_ archive: Data, password: String) -> ClientCertificate {
        ClientCertificate(format: .pkcs12, certificate: .data(archive), privateKey: nil, password: password)
    }

    /// The format and sources, and whether there is a password — never the password or the bytes.
    public var description: String {
        let kind = format == .pem ? "PEM" : "PKCS#12"
        let key = privateKey.map { ", key \($0)" } ?? ""
        return "\(kind) client certificate \(certificate)\(key)\(password == nil ? "" : ", with a password")"
    }

    /// What `dump` and debuggers show: the password and the bytes are left out.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "format": format, "certificate": certificate.description, "privateKey": privateKey?.description as Any,
                "password": password == nil ? "none" : "<redacted>",
            ])
    }
}

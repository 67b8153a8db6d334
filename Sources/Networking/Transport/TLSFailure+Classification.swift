/// Classifying TLS failures by the text OpenSSL and libcurl give, shared by the transports:
/// libcurl reports most certificate problems under one code, and FoundationNetworking on Linux
/// reports all of them as `NSURLErrorUnknown`, so only the message tells them apart.
extension TLSFailure {
    /// Whether a message reports an alert the server sent about the client's certificate (OpenSSL's
    /// "tlsv13 alert certificate required", "tlsv1 alert unknown ca", "sslv3 alert bad
    /// certificate"): the server refused the certificate it got, or wanted one and got none. Its
    /// own certificate failing this client's checks is reported without "alert".
    static func isClientCertificateAlert(_ message: String) -> Bool {
        let lowered = message.lowercased()
        guard lowered.contains("alert") else { return false }
        return [
            "certificate required", "unknown ca", "bad certificate", "certificate unknown", "unsupported certificate",
            "certificate revoked", "certificate expired", "access denied",
        ].contains { lowered.contains($0) }
    }

    /// The detail of a handshake that could not start because the client certificate or its key
    /// could not be loaded.
    static func clientCertificateUnusable(_ message: String) -> String {
        unusablePrefix + message
    }

    /// The detail of a handshake the server ended over the client's certificate.
    static func clientCertificateRefused(_ message: String) -> String {
        refusedPrefix + message
    }

    private static let unusablePrefix = "the client certificate could not be used: "
    private static let refusedPrefix = "the server refused this client's certificate, or asked for one and got none: "

    /// Whether the failure is about this client's certificate rather than the server's: the
    /// advice differs.
    var concernsClientCertificate: Bool {
        guard case .handshakeFailed(let detail) = self else { return false }
        return detail.hasPrefix(Self.unusablePrefix) || detail.hasPrefix(Self.refusedPrefix)
    }

    /// Whether a message is about TLS or certificates at all.
    static func looksLikeTLS(_ message: String) -> Bool {
        let lowered = message.lowercased()
        return ["ssl", "tls", "certificate"].contains { lowered.contains($0) }
    }

    /// Classifies a TLS failure by its OpenSSL/libcurl message, for example
    /// "SSL certificate problem: self-signed certificate" (untrusted),
    /// "SSL certificate problem: certificate has expired" (expired) or
    /// "SSL: no alternative certificate subject name matches target host name '…'" (wrong host).
    init(classifying message: String) {
        let lowered = message.lowercased()
        if Self.isClientCertificateAlert(message) {
            self = .handshakeFailed(Self.clientCertificateRefused(message))
        } else if lowered.contains("expired") || lowered.contains("not yet valid") {
            self = .expiredCertificate(message)
        } else if lowered.contains("subject name") || lowered.contains("hostname") || lowered.contains("host name")
            || lowered.contains("doesn't match") || lowered.contains("does not match target host")
        {
            self = .hostnameMismatch(message)
        } else if lowered.contains("self-signed") || lowered.contains("self signed") || lowered.contains("issuer")
            || lowered.contains("unknown ca") || lowered.contains("verify") || lowered.contains("untrusted")
        {
            self = .untrustedCertificate(message)
        } else {
            self = .handshakeFailed(message)
        }
    }
}

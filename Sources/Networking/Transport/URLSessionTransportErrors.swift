import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Maps URLSession's errors to ``TransportError``.
///
/// FoundationNetworking on Linux reports every TLS problem as `NSURLErrorUnknown` (-1) with
/// libcurl's message, so TLS failures are classified by that message there.
enum URLSessionTransportErrors {
    static func map(_ error: any Error) -> TransportError {
        let nsError = error as NSError
        let message = nsError.localizedDescription
        guard nsError.domain == NSURLErrorDomain else { return .network(.other(message)) }
        switch nsError.code {
        case NSURLErrorCancelled: return .cancelled
        case NSURLErrorTimedOut: return .timedOut
        case NSURLErrorCannotConnectToHost: return .network(.connectionRefused)
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed: return .network(.hostNotFound)
        case NSURLErrorNetworkConnectionLost: return .network(.connectionLost)
        case NSURLErrorNotConnectedToInternet: return .network(.notConnected)
        case NSURLErrorBadServerResponse, NSURLErrorCannotParseResponse, NSURLErrorZeroByteResource:
            return .invalidResponse(message)
        case NSURLErrorDataLengthExceedsMaximum: return .invalidRequest(message)
        case NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateNotYetValid:
            return .tls(.expiredCertificate(message))
        case NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot:
            return .tls(.untrustedCertificate(message))
        case NSURLErrorSecureConnectionFailed, NSURLErrorClientCertificateRejected, NSURLErrorClientCertificateRequired:
            return .tls(tlsFailure(message))
        default:
            if looksLikeTLS(message) { return .tls(tlsFailure(message)) }
            if looksLikeLostConnection(message) { return .network(.connectionLost) }
            return .network(.other(message))
        }
    }

    /// libcurl's words for a connection that ended before the response was complete.
    static func looksLikeLostConnection(_ message: String) -> Bool {
        let lowered = message.lowercased()
        return ["transfer closed", "connection reset", "recv failure", "send failure", "empty reply", "partial file"]
            .contains { lowered.contains($0) }
    }

    static func looksLikeTLS(_ message: String) -> Bool {
        let lowered = message.lowercased()
        return ["ssl", "tls", "certificate"].contains { lowered.contains($0) }
    }

    /// Classifies a TLS failure by the OpenSSL/libcurl message.
    static func tlsFailure(_ message: String) -> TLSFailure {
        let lowered = message.lowercased()
        if lowered.contains("expired") || lowered.contains("not yet valid") { return .expiredCertificate(message) }
        if lowered.contains("subject name") || lowered.contains("hostname") || lowered.contains("host name")
            || lowered.contains("doesn't match") || lowered.contains("does not match target host")
        {
            return .hostnameMismatch(message)
        }
        if lowered.contains("self-signed") || lowered.contains("self signed") || lowered.contains("issuer")
            || lowered.contains("unknown ca") || lowered.contains("verify") || lowered.contains("untrusted")
        {
            return .untrustedCertificate(message)
        }
        return .handshakeFailed(message)
    }
}

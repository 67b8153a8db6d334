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
            return .tls(TLSFailure(classifying: message))
        default:
            return TLSFailure.looksLikeTLS(message) ? .tls(TLSFailure(classifying: message)) : .network(.other(message))
        }
    }
}

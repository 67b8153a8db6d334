import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Maps URLSession's errors to ``TransportError``.
///
/// FoundationNetworking on Linux reports every TLS problem as `NSURLErrorUnknown` (-1) with
/// libcurl's message, so TLS failures are classified by that message there.
enum URLSessionTransportErrors {
    /// Whether the request is a `GET` with a body, which URLSession on Apple platforms refuses.
    private static func carriesBodyURLSessionRefuses(_ request: TransportRequest) -> Bool {
        request.method == .get && request.body.map { $0.inMemoryData?.isEmpty != true } == true
    }

    static func map(_ error: any Error, sending request: TransportRequest? = nil) -> TransportError {
        let nsError = error as NSError
        let message = nsError.localizedDescription
        guard nsError.domain == NSURLErrorDomain else { return .network(.other(message)) }
        switch nsError.code {
        case NSURLErrorCancelled: return .cancelled
        case NSURLErrorTimedOut: return .timedOut
        case NSURLErrorCannotConnectToHost: return .network(.connectionRefused)
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed: return .network(.hostNotFound)
        case NSURLErrorNetworkConnectionLost: return .network(.connectionLost)
        // No network for this app now: mobile data off or roaming, a phone call on (older
        // networks), as well as no connection at all.
        case NSURLErrorNotConnectedToInternet, NSURLErrorDataNotAllowed, NSURLErrorInternationalRoamingOff, NSURLErrorCallIsActive:
            return .network(.notConnected)
        // Never sent, and sending again cannot help: not network failures.
        case NSURLErrorAppTransportSecurityRequiresSecureConnection:
            return .invalidRequest("App Transport Security blocks plain http to this host (\(message))")
        case NSURLErrorBadURL: return .invalidRequest(message)
        // The body's file went away or cannot be read (as `LibcurlTransport` reports it).
        case NSURLErrorFileDoesNotExist, NSURLErrorFileIsDirectory, NSURLErrorNoPermissionsToReadFile:
            return .invalidRequest("the body's file cannot be read (\(message))")
        case NSURLErrorCannotDecodeContentData, NSURLErrorCannotDecodeRawData:
            return .invalidResponse("the response body cannot be decoded (\(message))")
        case NSURLErrorBadServerResponse, NSURLErrorCannotParseResponse, NSURLErrorZeroByteResource:
            return libcurlFailure(message) ?? .invalidResponse(message)
        case NSURLErrorUnsupportedURL:
            return libcurlFailure(message) ?? .invalidRequest(message)
        // URLSession on Apple platforms refuses a GET with a body with this code, before sending.
        case NSURLErrorDataLengthExceedsMaximum where request.map(carriesBodyURLSessionRefuses) == true:
            return .invalidRequest(
                "URLSession does not send a \(request?.method.rawValue ?? "GET") with a body (\(message)): send the body with another method, or its parameters in the query"
            )
        case NSURLErrorDataLengthExceedsMaximum: return .invalidResponse("the response is larger than URLSession accepts (\(message))")
        case NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateNotYetValid:
            return .tls(.expiredCertificate(message))
        case NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot:
            return .tls(.untrustedCertificate(message))
        case NSURLErrorClientCertificateRejected, NSURLErrorClientCertificateRequired:
            return .tls(.handshakeFailed(TLSFailure.clientCertificateRefused(message)))
        case NSURLErrorSecureConnectionFailed:
            return .tls(TLSFailure(classifying: message))
        default:
            if let failure = libcurlFailure(message) { return failure }
            return TLSFailure.looksLikeTLS(message) ? .tls(TLSFailure(classifying: message)) : .network(.other(message))
        }
    }

    /// What libcurl meant, when FoundationNetworking on Linux passes its message on under a
    /// vague code: an empty reply (-1011) or a body cut short (-1) is a lost connection, and a
    /// reply that is not HTTP (-1002) is an invalid response, as ``LibcurlTransport`` reports them.
    static func libcurlFailure(_ message: String) -> TransportError? {
        let lowered = message.lowercased()
        // The server answered, badly: broken chunked framing, or a head too large for libcurl.
        if lowered.contains("chunked-encoding") {
            return .invalidResponse("the chunked transfer encoding of the body is malformed (\(message))")
        }
        if lowered.contains("too large response headers") || lowered.contains("out of memory") {
            return .invalidResponse("the response head is too large (\(message))")
        }
        if ["empty reply from server", "transfer closed with", "connection reset", "recv failure", "send failure"].contains(
            where: lowered.contains)
        {
            return .network(.connectionLost)
        }
        if ["http/0.9", "unsupported http version", "weird server reply"].contains(where: lowered.contains) {
            return .invalidResponse(message)
        }
        return nil
    }
}

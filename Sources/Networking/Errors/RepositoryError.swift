/// Every way a repository call can fail.
///
/// Cases that happen after a request was sent carry an ``ErrorContext`` (the request's method and
/// URL, and the response's status, headers and body when there is one); decoding failures carry
/// a ``DecodingFailure`` with the same context and the coding path.
///
/// | Case | When |
/// |---|---|
/// | ``invalidConfiguration(reason:)`` | a ``NetworkingConfiguration`` value is rejected when made (every request fails with it once a setting has been changed to an invalid value), or a route, route table or certificate file is rejected |
/// | ``invalidURL(reason:)`` | the path cannot form a URL under the base URL |
/// | ``invalidRequest(reason:request:)`` | parameters or body cannot be encoded, or the method cannot carry them |
/// | ``unauthenticatedSession(_:)`` | nobody is logged in (no network touched, context `nil`), or the server answered 401 to a call that needs the session |
/// | ``authenticationFailed(_:)`` | the server answered 401 to a call that needs no session (a wrong password at login) |
/// | ``sessionRefreshFailed(_:_:)`` | the session's token had to be refreshed and the refresh failed |
/// | ``requestError(_:)`` | the server answered with a status outside 200..<300 that no custom error matched |
/// | ``customError(name:error:context:)`` | a status (and API code) the repository declared a custom error for |
/// | ``noNetworkConnection(_:_:)`` | connection refused, host not found, connection lost, offline |
/// | ``timeout(_:)`` | no complete response within the timeout (or a blocking call's wait) |
/// | ``pollingExhausted(attempts:context:)`` | polling still got 202 after its last try |
/// | ``tlsError(_:_:)`` | the certificate is untrusted, expired or for another host, or the handshake failed |
/// | ``pinningFailed(host:context:)`` | the server's key matches none of the pins |
/// | ``pinningUnsupported(transport:context:)`` | pins, a certificate authority file or a client certificate asked of a transport that cannot provide them |
/// | ``cancelled(_:)`` | the calling task was cancelled |
/// | ``invalidResponse(reason:context:)`` | the answer cannot be used: not valid HTTP (malformed or oversize head, broken framing or encoding), or not what the call reads (the reason says) |
/// | ``responseTooLarge(limit:context:)`` | the body is larger than the transport accepts |
/// | ``downloadFailed(_:_:)`` | a download to a file could not be written, was cut short, failed its checksum, or went past its `maximumSize` |
/// | ``jsonError(_:)`` | the body is not valid JSON |
/// | ``decodeError(_:)`` | the JSON does not have the shape of the model |
public enum RepositoryError: Error, Sendable {
    /// A configuration value was rejected: thrown when the configuration is made, and by every
    /// request once a setting has been changed to an invalid value; also a rejected route, route
    /// table or certificate file.
    case invalidConfiguration(reason: String)
    /// The path cannot form a valid URL under the configuration's base URL.
    case invalidURL(reason: String)
    /// The request cannot be built as asked (unencodable parameters, a body on `GET`, …).
    case invalidRequest(reason: String, request: RequestSummary?)
    /// The request needs a session and nobody is logged in, or not the user it was made for
    /// (``SessionIdentityKey``; context `nil`, nothing was sent), or
    /// the server answered 401 to it (the session is expired when the request was signed with it),
    /// or a retry was not sent because the session its earlier attempts were signed in has ended
    /// (a context without a response, whose ``ErrorContext/attempts`` counts those sent).
    case unauthenticatedSession(ErrorContext?)
    /// The server answered 401 to a call that needs no session: the credentials it carried (a
    /// password at login, an API key) were not accepted. The session is left alone.
    case authenticationFailed(ErrorContext)
    /// The session's token had to be refreshed and the refresh failed; every request waiting for
    /// that refresh fails with this error. The session ends only when the refresh was rejected
    /// (400, 401 or 403), or could not reach the server with
    /// ``RefreshPolicy/expiresSessionWhenUnreachable`` set; any other failure (a 503, a TLS
    /// error, an answer that does not decode) keeps it for the next try. The context names the
    /// call that waited; it holds the server's 401 when that answer started the refresh, and no
    /// response when the call was held back before sending (its token known to be expired).
    case sessionRefreshFailed(RefreshFailure, ErrorContext?)
    /// The server answered with a non-2xx status that no custom error matched.
    case requestError(ErrorContext)
    /// The server's answer matched a custom error declared for the repository or the call.
    case customError(name: String, error: any CustomRepositoryErrorType, context: ErrorContext)
    /// The request did not reach a server: refused, unresolvable host, lost connection, offline,
    /// or a proxy that would not pass it on.
    case noNetworkConnection(NetworkFailure, ErrorContext)
    /// No complete response arrived within the timeout (or a blocking call's `maximumWait`). A
    /// blocking call whose wait ran out between attempts carries the last answer in its context:
    /// during a retry's wait (a 503, a 429) the server was reached, so it is not a connectivity
    /// failure; during a token refresh after a 401 it is, as a refresh that ran out of time is.
    case timeout(ErrorContext)
    /// Polling still got 202 Accepted after its last try: `attempts` polls were made, and the
    /// context holds the last 202 response and how many times that last poll was sent (more
    /// than once when the retry policy sent it again).
    case pollingExhausted(attempts: Int, context: ErrorContext)
    /// The TLS handshake failed for a reason other than pinning.
    case tlsError(TLSFailure, ErrorContext)
    /// The server's public key matches none of the pinned keys; nothing was sent to it.
    case pinningFailed(host: String, context: ErrorContext)
    /// The request asks for TLS the transport in use cannot provide: pins, a certificate
    /// authority file or a client certificate (all of them over URLSession on Linux); `transport`
    /// names it and says why. Nothing was sent.
    case pinningUnsupported(transport: String, context: ErrorContext)
    /// The calling task was cancelled. The context names the request — one never sent, with
    /// ``ErrorContext/attempts`` 0, when the task was cancelled before the call; it is `nil` when
    /// there is no request to name (the endpoint does not form one, or a wait that is not a
    /// request, such as for an offline outcome).
    case cancelled(ErrorContext?)
    /// The answer cannot be used, as the reason says: not valid HTTP (a malformed or oversize
    /// response head, broken chunked framing, a body that does not decode with its content
    /// encoding), or not what the call reads (an event stream of another type, a streamed body
    /// cut after it began, a batch item that never ran).
    case invalidResponse(reason: String, context: ErrorContext)
    /// The response body is larger than the transport accepts (`limit` bytes); the transfer was stopped.
    case responseTooLarge(limit: Int, context: ErrorContext)
    /// A download to a file failed: the destination was in use or a hidden file unusable (before
    /// anything was sent), or, after the server answered, the file could not be written, the body
    /// ended early, the checksum did not match, or it went past its `maximumSize` (see ``DownloadFailure``).
    case downloadFailed(DownloadFailure, ErrorContext)
    /// The body is not valid JSON.
    case jsonError(DecodingFailure)
    /// The JSON does not match the model.
    case decodeError(DecodingFailure)
}

extension RepositoryError {
    /// The request and response behind the error, when it happened after a request was built.
    public var context: ErrorContext? {
        switch self {
        case .invalidConfiguration, .invalidURL: nil
        case .invalidRequest(_, let request): request.map { ErrorContext(request: $0) }
        case .unauthenticatedSession(let context), .cancelled(let context), .sessionRefreshFailed(_, let context): context
        case .requestError(let context), .timeout(let context), .authenticationFailed(let context): context
        case .pollingExhausted(_, let context), .responseTooLarge(_, let context), .downloadFailed(_, let context): context
        case .customError(_, _, let context), .pinningFailed(_, let context): context
        case .noNetworkConnection(_, let context), .tlsError(_, let context): context
        case .pinningUnsupported(_, let context), .invalidResponse(_, let context): context
        case .jsonError(let failure), .decodeError(let failure): failure.context
        }
    }

    /// The response's status code, when the server answered.
    public var statusCode: Int? { context?.statusCode }

    /// The error with its context's attempt count set: `attempts` made, of which `sent` reached
    /// the transport. A cancellation without a response, and an error whose context says it was
    /// not sent (attempts 0, as the session step's are: a refresh that failed before a retry),
    /// count only those sent, 0 when none went out. Any other error counts every attempt (an
    /// interceptor that answers instead of the transport, a stub, sends nothing).
    func attempted(_ attempts: Int, sent: Int) -> RepositoryError {
        var attempts = attempts
        if let context, context.response == nil {
            let cancelled = if case .cancelled = self { true } else { false }
            if cancelled || context.attempts == 0 { attempts = min(attempts, sent) }
        }
        guard attempts != (context?.attempts ?? 1) else { return self }
        func stamped(_ context: ErrorContext) -> ErrorContext {
            var context = context
            context.attempts = attempts
            return context
        }
        switch self {
        case .invalidConfiguration, .invalidURL, .invalidRequest, .unauthenticatedSession(nil), .cancelled(nil),
            .sessionRefreshFailed(_, nil):
            return self
        case .unauthenticatedSession(let context?): return .unauthenticatedSession(stamped(context))
        case .cancelled(let context?): return .cancelled(stamped(context))
        case .sessionRefreshFailed(let failure, let context?): return .sessionRefreshFailed(failure, stamped(context))
        case .requestError(let context): return .requestError(stamped(context))
        case .timeout(let context): return .timeout(stamped(context))
        case .authenticationFailed(let context): return .authenticationFailed(stamped(context))
        case .pollingExhausted(let count, let context): return .pollingExhausted(attempts: count, context: stamped(context))
        case .responseTooLarge(let limit, let context): return .responseTooLarge(limit: limit, context: stamped(context))
        case .downloadFailed(let failure, let context): return .downloadFailed(failure, stamped(context))
        case .customError(let name, let error, let context): return .customError(name: name, error: error, context: stamped(context))
        case .noNetworkConnection(let failure, let context): return .noNetworkConnection(failure, stamped(context))
        case .tlsError(let failure, let context): return .tlsError(failure, stamped(context))
        case .pinningFailed(let host, let context): return .pinningFailed(host: host, context: stamped(context))
        case .pinningUnsupported(let transport, let context):
            return .pinningUnsupported(transport: transport, context: stamped(context))
        case .invalidResponse(let reason, let context): return .invalidResponse(reason: reason, context: stamped(context))
        case .jsonError(var failure):
            failure.context = stamped(failure.context)
            return .jsonError(failure)
        case .decodeError(var failure):
            failure.context = stamped(failure.context)
            return .decodeError(failure)
        }
    }

    /// The custom error as the caller's type, when this is a ``customError(name:error:context:)`` of that type.
    public func customError<E: CustomRepositoryErrorType>(as type: E.Type = E.self) -> E? {
        if case .customError(_, let error, _) = self { return error as? E }
        return nil
    }

    /// Whether the failure means the network could not be reached or gave out (refused,
    /// unresolvable, offline, a connection lost before the response was complete, or a timeout):
    /// the failures worth trying again later. A server that answered — even with garbage, an
    /// oversize head or a 5xx — is not a connectivity failure; a proxy that refused to open the
    /// tunnel, and an answer whose body stopped coming (a timeout), are. So is a token refresh
    /// that failed for one of these reasons (an expired token on a device offline) or ran out of
    /// time (``RefreshFailure/timedOut(after:)``): the session is kept (unless
    /// ``RefreshPolicy/expiresSessionWhenUnreachable``), and the call is worth trying again later
    /// like any other. A blocking call whose wait ran out during a retry's wait, with the server's
    /// last answer in its context, is not (one that ran out during a refresh after a 401 is).
    public var isConnectivityFailure: Bool {
        switch self {
        case .noNetworkConnection: true
        // With an answer in its context, a blocking call's wait ran out between attempts: the server
        // was reached, unless the wait was for a token refresh (after a 401).
        case .timeout(let context): context.response == nil || context.statusCode == 401
        case .sessionRefreshFailed(.refresherFailed(let cause), _): cause.isConnectivityFailure
        case .sessionRefreshFailed(.timedOut, _): true
        default: false
        }
    }
}

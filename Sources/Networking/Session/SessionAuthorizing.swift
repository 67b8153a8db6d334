import Foundation

/// What a repository needs from a session: the `Authorization` to sign requests with, and what
/// to do when the server rejects it.
///
/// ``SessionManager`` conforms, with single-flight token refresh; conform your own type to keep
/// sessions elsewhere.
public protocol SessionAuthorizing: Sendable {
    /// The authorization for a request that needs the session, or `nil` when nobody is logged in.
    /// An implementation may refresh a credential known to be expired first; ``SessionManager``
    /// also answers `nil` when the session the call started in ended while it waited for that
    /// refresh, rather than sign the request with the next session's credential.
    ///
    /// - Throws: ``RepositoryError/sessionRefreshFailed(_:_:)`` when a needed refresh failed, or
    ///   ``RepositoryError/cancelled(_:)`` when the task was cancelled while waiting.
    func authorize() async throws(RepositoryError) -> SessionAuthorization?

    /// The authorization for another attempt of a call already signed in session `sessionID`
    /// (see ``SessionAuthorization/sessionID``) — an automatic retry, for example — or `nil` when
    /// that session has ended: a call is never sent with the credential of a later session
    /// (another user's), however long its retries wait.
    ///
    /// The default asks ``authorize()`` and answers `nil` when it signs in another session;
    /// ``SessionManager`` answers `nil` without touching the later session.
    ///
    /// - Throws: as ``authorize()``.
    func authorize(inSession sessionID: Int) async throws(RepositoryError) -> SessionAuthorization?

    /// Tells the session that the server answered 401 to a request signed with `authorization`,
    /// and returns the authorization to replay the request with once, or `nil` to give up (the
    /// session has ended).
    ///
    /// A 401 for an authorization older than the current one of the same session is replayed with
    /// the current one; a 401 for the current one is refreshed (once for all requests failing
    /// together) or ends the session. An authorization of a session that has ended (see
    /// ``SessionAuthorization/sessionID``) is never replayed with a later session's credential:
    /// the answer is `nil`.
    func authorizationRejected(_ authorization: SessionAuthorization) async throws(RepositoryError) -> SessionAuthorization?

    /// Tells the session that a request replayed with `authorization` was answered 401 again: the
    /// credential is not accepted even when fresh, so the session should end if `authorization`
    /// is still the current one. A request is replayed at most once, so this ends refresh loops.
    func replayRejected(_ authorization: SessionAuthorization) async

    /// A stable name for whose session this is, or `nil` when nobody is logged in: what features
    /// that keep data per user (a response cache, an offline queue) key it by, so that switching
    /// users never shows one user's data to another. Default `nil`.
    var sessionIdentity: String? { get }
}

extension SessionAuthorizing {
    /// No identity unless the session says so.
    public var sessionIdentity: String? { nil }

    /// ``authorize()``, when it signs in session `sessionID`; `nil` otherwise.
    public func authorize(inSession sessionID: Int) async throws(RepositoryError) -> SessionAuthorization? {
        guard let authorization = try await authorize(), authorization.sessionID == sessionID else { return nil }
        return authorization
    }
}

/// Signs requests that need a session with its `Authorization`, fails them before the network
/// when nobody is logged in, and on a 401 asks the session what to replay with — once.
///
/// The configuration's default headers win over the session: when they hold an `Authorization`
/// field, the session's is not set.
///
/// The credential goes only to the configuration's own host and its
/// ``NetworkingConfiguration/sessionHosts``: a call to any other host (an absolute route path, a
/// redirect target excepted — transports drop `Authorization` across origins themselves) is sent
/// without it, so a token never leaks to a third party. When the API is `https`, the credential
/// goes over `https` only: a call that needs the session and goes to one of those hosts over
/// plain `http` fails with ``RepositoryError/invalidRequest(reason:request:)`` before anything
/// is sent.
struct SessionInterceptor: Interceptor {
    let session: any SessionAuthorizing
    let defaultHeadersAuthorize: Bool
    /// The hosts (lower-cased) the session's credential may be sent to.
    let hosts: Set<String>
    /// Whether the credential may go over `https` only (the API is `https`).
    let httpsOnly: Bool

    /// Whether the request goes to a host the session's credential is for.
    private func isForSession(_ url: URL) -> Bool { hosts.contains(NetworkingConfiguration.comparableHost(url.host ?? "")) }

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        guard context.requiresSession, isForSession(request.url) else { return try await next(request) }
        if httpsOnly, request.url.scheme?.lowercased() != "https" {
            throw .invalidRequest(
                reason: "the session's credential goes over https only, and this call needs it but goes over http",
                request: request.summary)
        }
        // Nothing is sent while the session decides: a failure there names the call, unsent.
        let errorContext = ErrorContext(request: request.summary, attempts: 0)
        // Every attempt of a call (retries, an outer interceptor's repeats) is signed in the
        // session its first attempt was signed in, or not at all.
        let signedIn = context.record.sessionID
        let authorize = { () async throws(RepositoryError) in
            if let signedIn { try await session.authorize(inSession: signedIn) } else { try await session.authorize() }
        }
        guard let authorization = try await withRequest(errorContext, authorize) else {
            // A retry or a replay whose session ended after an earlier attempt went out in it:
            // the call names itself, and its count says what was sent.
            guard signedIn != nil else { throw .unauthenticatedSession(nil) }
            var ended = errorContext
            ended.sessionEnded = true
            throw .unauthenticatedSession(ended)
        }
        // A call made for one user (an offline queue's) is never signed for another: the
        // authorization names whose session signed it (read with the credential, so a switch
        // of users meanwhile cannot slip in between), or else the session's current user.
        let identity = authorization.sessionIdentity ?? session.sessionIdentity
        if let user = context.options[SessionIdentityKey.self], identity != user {
            throw .unauthenticatedSession(nil)
        }
        context.record.signed(in: authorization.sessionID, as: identity)
        let response = try await next(signed(request, with: authorization, record: context.record))
        // A request the session did not sign, or a 401 from another origin a redirect led to
        // (without the credential), tells nothing about the session's credential.
        guard response.statusCode == 401, !defaultHeadersAuthorize, response.isFromOrigin(of: request.url) else { return response }
        let reject = { () async throws(RepositoryError) in try await session.authorizationRejected(authorization) }
        // A refresh that fails now fails a call the server answered: its error keeps that 401.
        guard let replay = try await withRequest(ErrorContext(request: request.summary, response: response), reject) else {
            return response
        }
        // A streamed body has been read: the call cannot be replayed. The session has refreshed
        // for the next call, so this one fails without reading as a logout.
        if request.body?.isStreamed == true {
            throw .invalidRequest(
                reason:
                    "the server answered 401 to the session's token after the call's streamed body was sent, which cannot be sent again; the token has been refreshed, send the call again",
                request: request.summary)
        }
        let replayed = try await next(signed(request, with: replay, record: context.record))
        if replayed.statusCode == 401, replayed.isFromOrigin(of: request.url) { await session.replayRejected(replay) }
        return replayed
    }

    private func signed(_ request: TransportRequest, with authorization: SessionAuthorization, record: CallRecord) -> TransportRequest {
        guard !defaultHeadersAuthorize else { return request }
        record.credentialVersion = authorization.version
        var signed = request
        signed.headers["Authorization"] = authorization.headerValue
        return signed
    }

    /// Gives errors from the session the request they held up.
    private func withRequest<T>(_ context: ErrorContext, _ operation: () async throws(RepositoryError) -> T)
        async throws(RepositoryError) -> T
    {
        do {
            return try await operation()
        } catch .sessionRefreshFailed(let failure, nil) {
            throw .sessionRefreshFailed(failure, context)
        } catch .cancelled(nil) {
            throw .cancelled(context)
        }
    }
}

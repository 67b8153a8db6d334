/// What a repository needs from a session: the `Authorization` value to sign requests with, and a
/// way to say that the server rejected it.
///
/// ``SessionManager`` conforms; conform your own type to keep sessions elsewhere.
public protocol SessionAuthorizing: Sendable {
    /// The `Authorization` header value for the current session, or `nil` when nobody is logged in.
    func authorizationHeader() async -> String?

    /// Tells the session that the server answered 401 to a request signed with `authorization`.
    ///
    /// An implementation should end the session only if `authorization` is still the current
    /// one, so that a late 401 for an old token does not log out a newer session.
    func authorizationRejected(_ authorization: String) async
}

/// Signs requests that need a session with its `Authorization`, fails them before the network
/// when nobody is logged in, and tells the session about 401 answers.
///
/// The configuration's default headers win over the session: when they hold an `Authorization`
/// field, the session's is not set.
struct SessionInterceptor: Interceptor {
    let session: any SessionAuthorizing
    let defaultHeadersAuthorize: Bool

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        guard context.requiresSession else { return try await next(request) }
        guard let authorization = await session.authorizationHeader() else {
            throw .unauthenticatedSession(nil)
        }
        var signed = request
        if !defaultHeadersAuthorize { signed.headers["Authorization"] = authorization }
        let response = try await next(signed)
        if response.statusCode == 401 { await session.authorizationRejected(authorization) }
        return response
    }
}

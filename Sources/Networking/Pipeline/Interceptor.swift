/// A step around the transport: sees every request on its way out and every response on its
/// way back, and may change either, answer by itself, or fail the call.
///
/// Interceptors form an ordered chain: the first one given is the outermost — it sees the request
/// first and the response last. Each calls `next` to pass the request on (zero, one or several
/// times, for example to replay it).
///
/// ```swift
/// struct RequestIDInterceptor: Interceptor {
///     func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
///         async throws(RepositoryError) -> TransportResponse {
///         var request = request
///         request.headers["X-Request-ID"] = UUID().uuidString
///         return try await next(request)
///     }
/// }
/// ```
public protocol Interceptor: Sendable {
    /// Handles one request, calling `next` to pass it on towards the transport.
    ///
    /// - Throws: a ``RepositoryError``, which ends the call with that error.
    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
}

/// The rest of the chain after an interceptor, ending at the transport.
public typealias InterceptorNext = @Sendable (TransportRequest) async throws(RepositoryError) -> TransportResponse

/// What an interceptor may want to know about the call a request belongs to.
public struct RequestContext: Sendable {
    /// Whether the call needs a logged-in session (`false` for login and sign-up).
    public let requiresSession: Bool

    /// Creates a context.
    public init(requiresSession: Bool) {
        self.requiresSession = requiresSession
    }
}

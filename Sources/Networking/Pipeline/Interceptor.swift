import Foundation
import Synchronization

/// A step around the transport: sees every request on its way out and every response on its
/// way back, and may change either, answer by itself, or fail the call.
///
/// Interceptors form an ordered chain; the first is the outermost — it sees the request first and
/// the response last. Each calls `next` to pass the request on (zero, one or several times, for
/// example to replay it). A repository's chain is, outermost first:
///
/// 1. retry (``NetworkingConfiguration/retryPolicy``) — repeats what is inside it;
/// 2. the session (signing, refresh and replay on 401), when the repository has a session manager;
/// 3. the configuration's ``NetworkingConfiguration/interceptors``, then the repository's own;
/// 4. logging (``NetworkingConfiguration/logging``) — sees each attempt as it goes on the wire;
/// 5. the transport.
///
/// ```swift
/// struct RequestIDInterceptor: Interceptor {
///     func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
///         async throws(RepositoryError) -> TransportResponse {
///         var request = request
///         request.headers["X-Request-ID"] = context.id.uuidString
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
    /// Identifies the call across its attempts and replays, for logs and tracing.
    public let id: UUID

    let attemptCounter: AttemptCounter

    /// Creates a context for a new call.
    public init(requiresSession: Bool) {
        self.requiresSession = requiresSession
        id = UUID()
        attemptCounter = AttemptCounter()
    }

    /// How many times the call has been sent so far (1 for the first attempt).
    public var attempt: Int { attemptCounter.value }
}

/// The attempt number of one call, written by the retry step and read when the call ends.
final class AttemptCounter: Sendable {
    private let count = Mutex(1)

    var value: Int {
        get { count.withLock { $0 } }
        set { count.withLock { $0 = newValue } }
    }
}

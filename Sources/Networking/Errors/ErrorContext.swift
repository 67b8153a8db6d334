/// The request that failed and, when the server answered, its response.
public struct ErrorContext: Sendable, Hashable {
    /// The method and URL of the failed request.
    public let request: RequestSummary
    /// What the server sent, or `nil` when no response arrived.
    public let response: TransportResponse?
    /// How many times the request was sent, retries included (1 when it was not retried; 0 when
    /// it was never sent, as for a call whose task was cancelled before it started or while an
    /// interceptor held its first request). A retry that ended on its way to the transport (cancelled,
    /// or its token refresh failed) is not counted, and the session's replay after a 401 is part
    /// of the attempt it replays (see ``RequestContext/attempt``).
    public internal(set) var attempts: Int
    /// Set by the session step for a retry or replay it did not send because the session its
    /// earlier attempts were signed in has ended; only the description reads it (not part of
    /// equality or hashing).
    var sessionEnded = false

    /// Creates a context.
    public init(request: RequestSummary, response: TransportResponse? = nil, attempts: Int = 1) {
        self.request = request
        self.response = response
        self.attempts = attempts
    }

    /// The response's status code, when there is a response.
    public var statusCode: Int? { response?.statusCode }

    /// Whether two contexts name the same request, response and attempts.
    public static func == (lhs: ErrorContext, rhs: ErrorContext) -> Bool {
        lhs.request == rhs.request && lhs.response == rhs.response && lhs.attempts == rhs.attempts
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(request)
        hasher.combine(response)
        hasher.combine(attempts)
    }
}

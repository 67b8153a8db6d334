/// The request that failed and, when the server answered, its response.
public struct ErrorContext: Sendable, Hashable {
    /// The method and URL of the failed request.
    public let request: RequestSummary
    /// What the server sent, or `nil` when no response arrived.
    public let response: TransportResponse?
    /// How many times the request was sent, retries included (1 when it was not retried; 0 when
    /// it was never sent, as for a call whose task was cancelled before it started or while an
    /// interceptor held its first request). A retry that ended on its way to the transport (cancelled,
    /// or its token refresh failed) is not counted.
    public internal(set) var attempts: Int

    /// Creates a context.
    public init(request: RequestSummary, response: TransportResponse? = nil, attempts: Int = 1) {
        self.request = request
        self.response = response
        self.attempts = attempts
    }

    /// The response's status code, when there is a response.
    public var statusCode: Int? { response?.statusCode }
}

/// The request that failed and, when the server answered, its response.
public struct ErrorContext: Sendable, Hashable {
    /// The method and URL of the failed request.
    public let request: RequestSummary
    /// What the server sent, or `nil` when no response arrived.
    public let response: TransportResponse?

    /// Creates a context.
    public init(request: RequestSummary, response: TransportResponse? = nil) {
        self.request = request
        self.response = response
    }

    /// The response's status code, when there is a response.
    public var statusCode: Int? { response?.statusCode }
}

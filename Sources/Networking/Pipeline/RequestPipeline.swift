/// The interceptor chain around a transport, and the translation of transport failures into
/// ``RepositoryError`` values that carry the request.
struct RequestPipeline: Sendable {
    let transport: any Transport
    let interceptors: [any Interceptor]

    func send(_ request: TransportRequest, context: RequestContext) async throws(RepositoryError) -> TransportResponse {
        try await send(request, context: context, from: 0)
    }

    private func send(_ request: TransportRequest, context: RequestContext, from index: Int)
        async throws(RepositoryError) -> TransportResponse
    {
        guard index < interceptors.count else { return try await sendOverTransport(request) }
        return try await interceptors[index].intercept(request, context: context) {
            (request) async throws(RepositoryError) -> TransportResponse in
            try await self.send(request, context: context, from: index + 1)
        }
    }

    private func sendOverTransport(_ request: TransportRequest) async throws(RepositoryError) -> TransportResponse {
        if Task.isCancelled { throw .cancelled(ErrorContext(request: request.summary)) }
        do {
            return try await transport.send(request)
        } catch {
            throw RepositoryError(error, request: request.summary)
        }
    }
}

extension RepositoryError {
    /// The repository error for a transport failure of this request.
    init(_ error: TransportError, request: RequestSummary) {
        let context = ErrorContext(request: request)
        switch error {
        case .network(let failure): self = .noNetworkConnection(failure, context)
        case .timedOut: self = .timeout(context)
        case .cancelled: self = .cancelled(context)
        case .tls(let failure): self = .tlsError(failure, context)
        case .pinMismatch(let host): self = .pinningFailed(host: host, context: context)
        case .pinningUnsupported(let transport): self = .pinningUnsupported(transport: transport, context: context)
        case .responseTooLarge(let limit): self = .responseTooLarge(limit: limit, context: context)
        case .invalidResponse(let reason): self = .invalidResponse(reason: reason, context: context)
        case .invalidRequest(let reason): self = .invalidRequest(reason: reason, request: request)
        }
    }
}

import Foundation

extension AbstractRepository {
    /// Sends the endpoint and reads its `text/event-stream` answer as events while it arrives;
    /// see ``ServerSentEvents``.
    ///
    /// The request asks for `text/event-stream` (unless the endpoint sets its own `Accept`) with
    /// `Cache-Control: no-store`, and has no timeout unless the endpoint sets one. A reconnection
    /// (``Endpoint/reconnecting(after:maximumAttempts:)``) goes through the interceptors like the
    /// first request, so it carries the session's current token.
    public func performRequest(_ endpoint: Endpoint<ServerSentEvents>) async -> Result<ServerSentEvents, RepositoryError> {
        var streaming = endpoint.retyped(as: RepositoryResponse<ResponseChunks>.self)
        if !streaming.headers.contains("Accept") { streaming.headers["Accept"] = "text/event-stream" }
        streaming.headers["Cache-Control"] = "no-store"
        if streaming.timeout == nil { streaming.timeout = .infinity }
        let request = streaming
        let open: @Sendable (String?) async -> Result<RepositoryResponse<ResponseChunks>, RepositoryError> = { lastEventID in
            var request = request
            if let lastEventID { request.headers["Last-Event-ID"] = lastEventID }
            return await self.performRequest(request)
        }
        switch await open(nil) {
        case .failure(let error):
            return .failure(error)
        case .success(let response):
            return ServerSentEvents.stream(of: response).map { chunks in
                ServerSentEvents(
                    first: chunks, request: response.request, reconnection: endpoint.options[ServerSentEventsReconnection.self],
                    clock: configuration.clock
                ) { lastEventID in
                    await open(lastEventID).flatMap(ServerSentEvents.stream(of:))
                }
            }
        }
    }
}

extension ServerSentEvents {
    /// The body of an accepted answer to read as events; `nil` for a 204 (no events, and no
    /// reconnection). Any other type than `text/event-stream` fails, as the specification says.
    static func stream(of response: RepositoryResponse<ResponseChunks>) -> Result<ResponseChunks?, RepositoryError> {
        if response.statusCode == 204 {
            response.value.cancel()
            return .success(nil)
        }
        let type = response.headers["Content-Type"]
        let mediaType = type?.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "text/event-stream" else {
            response.value.cancel()
            return .failure(
                .invalidResponse(
                    reason: "expected a text/event-stream answer, got \(type.map { "\"\($0)\"" } ?? "none")",
                    context: ErrorContext(
                        request: response.request,
                        response: TransportResponse(statusCode: response.statusCode, headers: response.headers, url: response.url))))
        }
        return .success(response.value)
    }
}

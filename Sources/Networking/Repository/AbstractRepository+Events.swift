import Foundation

extension AbstractRepository {
    /// Sends the endpoint and reads its `text/event-stream` answer as events while it arrives;
    /// see ``ServerSentEvents``.
    ///
    /// The request asks for `text/event-stream` (unless the endpoint sets its own `Accept`) with
    /// `Cache-Control: no-store`. Its timeout (the endpoint's, else its route's, else the
    /// configuration's) is an idle
    /// timeout: it bounds the wait for the answer from the request's sending (a retry's wait
    /// counts; its sending starts the wait over; while a body goes out, each byte sent does) and
    /// each silence of the body, not the stream.
    /// The configuration's ``NetworkingConfiguration/idleTimeout`` does not apply; the endpoint's
    /// own ``Endpoint/idleTimeout``, when set, also bounds each silence (the shorter one wins).
    /// Steps before the sending are not timed: an interceptor or a token refresher that never
    /// returns holds this call as it would any other. A reconnection
    /// (``Endpoint/reconnecting(after:maximumAttempts:maximumDelay:backsOff:onConnectionChange:)``) goes through the
    /// interceptors like the first request, so it carries the session's current token — of the
    /// session the first request was signed in: after a logout the stream ends with
    /// ``RepositoryError/unauthenticatedSession(_:)``, even when someone (the same user, too) has
    /// logged in since. It is one attempt of the stream's count: the configuration's retry policy
    /// does not repeat it (an endpoint's own policy, ``Endpoint/retrying(_:)``, does).
    public func performRequest(_ endpoint: Endpoint<ServerSentEvents>) async -> Result<ServerSentEvents, RepositoryError> {
        let reconnection = endpoint.options[ServerSentEventsReconnection.self]
        // A named route first, so its URL, timeout and headers are the stream's; then what the
        // call would refuse (a bad URL or timeout), it refuses before the timeout changes.
        var streaming: Endpoint<RepositoryResponse<ResponseChunks>>
        let summary: RequestSummary
        do {
            streaming = try configuration.routes.resolve(
                endpoint.retyped(as: RepositoryResponse<ResponseChunks>.self), in: configuration)
            summary = try builder.build(streaming).summary
        } catch {
            return .failure(error)
        }
        if reconnection != nil, streaming.requestBody?.isStreamed == true {
            return .failure(
                .invalidRequest(reason: "an event stream that reconnects cannot send a streamed body twice", request: summary))
        }
        if !streaming.headers.contains("Accept") { streaming.headers["Accept"] = "text/event-stream" }
        streaming.headers["Cache-Control"] = "no-store"
        streaming.protocolHeaders.formUnion(["Accept", "Cache-Control", "Last-Event-ID"])
        let timeout = streaming.timeout ?? configuration.timeout
        let idleTimeout = timeout.isFinite ? max(Duration.clampedSeconds(timeout), .milliseconds(1)) : nil
        // The transport's timeout would bound the whole stream: the idle timeout replaces it.
        streaming.timeout = .infinity
        // One call across its connections: a reconnection is signed in the session the first
        // request was, or fails (a logout and another login meanwhile must not bring the next
        // user's events into this stream).
        let record = CallRecord()
        let request = streaming.with(CallRecordOption.self, record)
        let open: ServerSentEvents.Connect = { lastEventID, wire in
            // A reconnection sends the stream's own last event ID, or none (an empty `id:` resets it).
            var reconnection = request.with(WireActivityOption.self, wire).with(CallRecordOption.self, record.continuing())
            // One reconnection is one attempt of the stream's own count: the configuration's retry
            // policy does not repeat it (an endpoint's own policy still does).
            if reconnection.retryPolicy == nil { reconnection.retryPolicy = .never }
            reconnection.headers["Last-Event-ID"] = lastEventID
            return await self.performRequest(reconnection).flatMap(ServerSentEvents.stream(of:))
        }
        let wire = WireActivity(countsUpload: true)
        let first = await ServerSentEvents.within(idleTimeout, request: summary, wire: wire) {
            await self.performRequest(request.with(WireActivityOption.self, wire)).flatMap { response in
                ServerSentEvents.stream(of: response).map { (chunks: $0, request: response.request) }
            }
        }
        return first.map { first in
            ServerSentEvents(
                first: first.chunks, request: first.request, reconnection: reconnection, idleTimeout: idleTimeout,
                startingEventID: request.headers["Last-Event-ID"] ?? "",
                healthyConnection: endpoint.options[ServerSentEventsHealthyConnection.self], clock: configuration.clock,
                random: configuration.retryPolicy.random, onConnectionChange: endpoint.options[ServerSentEventsConnectionHandler.self],
                connect: open)
        }
    }
}

extension ServerSentEvents {
    /// The body of an accepted answer to read as events; `nil` for a 204 (no events, and no
    /// reconnection). Another status than 200 (a 202, a 206) or another type than
    /// `text/event-stream` fails, as the specification says.
    static func stream(of response: RepositoryResponse<ResponseChunks>) -> Result<ResponseChunks?, RepositoryError> {
        if response.statusCode == 204 {
            response.value.cancel()
            return .success(nil)
        }
        let type = response.headers["Content-Type"]
        let mediaType = type?.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased()
        let problem: String? =
            if response.statusCode != 200 {
                "expected a 200 answer to an event stream's request, got \(response.statusCode)"
            } else if mediaType != "text/event-stream" {
                "expected a text/event-stream answer, got \(type.map { "\"\($0)\"" } ?? "none")"
            } else {
                nil
            }
        if let problem {
            response.value.cancel()
            return .failure(
                .invalidResponse(
                    reason: problem,
                    context: ErrorContext(
                        request: response.request,
                        response: TransportResponse(statusCode: response.statusCode, headers: response.headers, url: response.url))))
        }
        return .success(response.value)
    }
}

import Foundation

/// The interceptor chain around a transport, and the translation of transport failures into
/// ``RepositoryError`` values that carry the request.
struct RequestPipeline: Sendable {
    let transport: any Transport
    let interceptors: [any Interceptor]
    /// The configuration's ``NetworkingConfiguration/secretFields`` with the built-in names,
    /// which every call's context carries.
    let secretNames: Redaction
    /// The configuration's ``NetworkingConfiguration/defaultHeaders``, which every call's
    /// context carries.
    let defaultHeaders: HTTPHeaders
    /// The option keys some interceptor of the chain acts on.
    let handledOptions: Set<ObjectIdentifier>

    /// Where the retry step is when the configuration sends every call once: a call without a
    /// policy of its own (``RetryPolicyKey``) passes over it.
    private let idleRetryIndex: Int?

    init(transport: any Transport, interceptors: [any Interceptor], secretFields: Set<String> = [], defaultHeaders: HTTPHeaders = [:]) {
        self.transport = transport
        self.interceptors = interceptors
        secretNames = Redaction(secretFields: secretFields)
        self.defaultHeaders = defaultHeaders
        handledOptions = Set(interceptors.flatMap { $0.handledOptions.map { ObjectIdentifier($0) } })
        idleRetryIndex = interceptors.firstIndex { ($0 as? RetryInterceptor).map { $0.policy.maximumAttempts <= 1 } ?? false }
    }

    /// Why the chain cannot honour the call's options, or `nil`: an option that must be handled
    /// and that no interceptor handles.
    func unhandledOption(in options: RequestOptions, name: String?) -> String? {
        guard let missing = options.requiredKeys.first(where: { !handledOptions.contains($0.id) }) else { return nil }
        let call = name.map { "\"\($0)\" " } ?? ""
        return "the call \(call)asks for \(missing.name), but no interceptor of this repository handles it: \(missing.handler)"
    }

    func send(_ request: TransportRequest, context: RequestContext) async throws(RepositoryError) -> TransportResponse {
        try await send(request, context: context.runBy(secretNames: secretNames, defaultHeaders: defaultHeaders), from: 0)
    }

    private func send(_ request: TransportRequest, context: RequestContext, from index: Int)
        async throws(RepositoryError) -> TransportResponse
    {
        guard index < interceptors.count else { return try await sendOverTransport(request, record: context.record) }
        if index == idleRetryIndex, !context.options.contains(RetryPolicyKey.self) {
            return try await send(request, context: context, from: index + 1)
        }
        return try await interceptors[index].intercept(request, context: context) {
            (request) async throws(RepositoryError) -> TransportResponse in
            try await self.send(request, context: context, from: index + 1)
        }
    }

    private func sendOverTransport(_ request: TransportRequest, record: CallRecord) async throws(RepositoryError)
        -> TransportResponse
    {
        if Task.isCancelled { throw .cancelled(ErrorContext(request: request.summary)) }
        record.noteSent()
        var sent = request
        // An event stream's idle timeout counts from here: the request goes on the wire, and
        // from its body's last byte out while one is sent.
        if let wire = (request.responseBodySink as? ChunkSink)?.wire {
            wire.sent()
            if wire.countsUpload, request.body != nil {
                let progress = request.progress
                sent.progress = { report in
                    wire.sending(report.bytesSent)
                    progress?(report)
                }
            }
        }
        do {
            // A transport that does not stream never sees the sink: one that wraps a streaming
            // transport without saying so would have the body streamed to it, then fed again
            // from its empty response (a download's file emptied after the fact).
            if !transport.streamsBodies { sent.responseBodySink = nil }
            var response = try await transport.send(sent)
            response.requestHeaders = request.headers
            guard let sink = request.responseBodySink, !transport.streamsBodies else { return response }
            return try Self.feed(response, to: sink)
        } catch {
            throw RepositoryError(error, request: request.summary)
        }
    }

    /// Hands the body of an answer no transport streamed (an interceptor made it: a stub, a
    /// mock) to the sink, as a transport would have.
    static func feedAnswer(_ response: TransportResponse, to sink: any ResponseBodySink, request: RequestSummary)
        throws(RepositoryError)
    {
        do throws(TransportError) {
            _ = try feed(response, to: sink)
        } catch {
            throw RepositoryError(error, request: request)
        }
    }

    /// Hands a collected body to the sink, for transports that do not stream.
    static func feed(_ response: TransportResponse, to sink: any ResponseBodySink) throws(TransportError) -> TransportResponse {
        let head = ResponseHead(statusCode: response.statusCode, headers: response.headers, url: response.url)
        guard sink.begin(head, canPause: false, resume: {}) else { return response }
        var streamed = response
        streamed.body = Data()
        let chunk = 64 * 1024
        var offset = 0
        while offset < response.body.count {
            let end = min(offset + chunk, response.body.count)
            let status = response.body[(response.body.startIndex + offset)..<(response.body.startIndex + end)]
                .withUnsafeBytes { sink.receive($0) }
            if let error = status.failureWithoutPause { throw error }
            offset = end
        }
        return streamed
    }
}

extension RepositoryError {
    /// The repository error for a transport failure of this request, sent `attempts` times (0
    /// for a failure before it was sent: its body could not be read).
    init(_ error: TransportError, request: RequestSummary, attempts: Int = 1) {
        let context = ErrorContext(request: request, attempts: attempts)
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

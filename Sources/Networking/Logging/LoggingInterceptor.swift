import Foundation

/// Logs each attempt as it goes on the wire and comes back, at the configured level, with
/// credentials redacted (see ``LogLevel`` for what each level writes).
struct LoggingInterceptor: Interceptor {
    let configuration: LoggingConfiguration
    let redaction: Redaction
    let clock: NetworkingClock

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        let level = configuration.level
        guard level > .off else { return try await next(request) }
        let summary = "\(request.method) \(redaction.url(request.url))"
        if level >= .info {
            var message = "→ \(summary)"
            if level >= .debug { message += details(headers: request.headers, body: request.body) }
            log(.info, message, request)
        }
        let start = clock.now()
        let response: TransportResponse
        do {
            response = try await next(request)
        } catch {
            let duration = clock.now().timeIntervalSince(start)
            log(.error, "✗ \(summary) [\(Self.format(duration))]: \(error)", request, duration: duration)
            throw error
        }
        let duration = clock.now().timeIntervalSince(start)
        let line = "\(response.statusCode) \(summary) [\(Self.format(duration))]"
        if !response.isSuccess, level == .error {
            log(.error, "✗ \(line)", request, status: response.statusCode, duration: duration)
        } else if level >= .info {
            var message = "← \(line)"
            if level >= .debug { message += details(headers: response.headers, body: response.body) }
            log(response.isSuccess ? .info : .error, message, request, status: response.statusCode, duration: duration)
        }
        return response
    }

    private func log(_ level: LogLevel, _ message: String, _ request: TransportRequest, status: Int? = nil, duration: TimeInterval? = nil) {
        configuration.logger.log(
            LogRecord(
                level: level, message: message,
                request: RequestSummary(method: request.method, url: URL(string: redaction.url(request.url)) ?? request.url),
                statusCode: status, duration: duration))
    }

    private func details(headers: HTTPHeaders, body: Data?) -> String {
        var text = ""
        for field in headers { text += "\n    \(field.name): \(redaction.headerValue(name: field.name, value: field.value))" }
        if let body, !body.isEmpty {
            let excerpt = redaction.bodyExcerpt(body, limit: configuration.bodyLimit, pretty: true)
            text += "\n    " + excerpt.replacingOccurrences(of: "\n", with: "\n    ")
        }
        return text
    }

    static func format(_ seconds: TimeInterval) -> String {
        String(format: "%.4f s", seconds)
    }
}

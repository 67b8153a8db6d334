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
        // Redacted once per attempt, for every line and record of it.
        let redactedURL = redaction.url(request.url)
        let summary = "\(request.method) \(redactedURL)"
        let loggedRequest = RequestSummary(method: request.method, url: Self.loggedURL(redactedURL, of: request.url))
        if level >= .info {
            var message = "→ \(summary)"
            if level >= .debug {
                message += details(headers: request.headers, body: request.body?.inMemoryData)
                if let body = request.body, body.inMemoryData == nil { message += "\n    <body: \(body)>" }
            }
            log(.info, message, loggedRequest)
        }
        let start = clock.now()
        let response: TransportResponse
        do {
            response = try await next(request)
        } catch {
            let duration = clock.now().timeIntervalSince(start)
            // The error's own description redacts with the built-in names only; the configured
            // secret fields apply to it here too.
            let reason = redaction.redactText(String(describing: error))
            log(.error, "✗ \(summary) [\(Self.format(duration))]: \(reason)", loggedRequest, duration: duration)
            throw error
        }
        let duration = clock.now().timeIntervalSince(start)
        let line = "\(response.statusCode) \(summary) [\(Self.format(duration))]"
        if !response.isSuccess, level == .error {
            log(.error, "✗ \(line)", loggedRequest, status: response.statusCode, duration: duration)
        } else if level >= .info {
            var message = "← \(line)"
            if level >= .debug { message += details(headers: response.headers, body: response.body) }
            log(response.isSuccess ? .info : .error, message, loggedRequest, status: response.statusCode, duration: duration)
        }
        return response
    }

    /// The redacted text as the record's URL; never the request's own URL, which still holds
    /// what was redacted: failing that, its origin alone.
    static func loggedURL(_ redacted: String, of url: URL) -> URL {
        if let parsed = URL(string: redacted) { return parsed }
        var origin = URLComponents()
        origin.scheme = url.scheme
        origin.host = url.host
        origin.port = url.port
        return origin.url ?? URL(fileURLWithPath: "/")
    }

    private func log(_ level: LogLevel, _ message: String, _ request: RequestSummary, status: Int? = nil, duration: TimeInterval? = nil) {
        configuration.logger.log(
            LogRecord(level: level, message: message, request: request, statusCode: status, duration: duration))
    }

    private func details(headers: HTTPHeaders, body: Data?) -> String {
        var text = ""
        for field in headers { text += "\n    \(field.name): \(redaction.headerValue(name: field.name, value: field.value))" }
        if let body, Self.isBinary(body) {
            text += "\n    <\(body.count) bytes, binary>"
        } else if let body, !body.isEmpty {
            let excerpt = redaction.bodyExcerpt(body, limit: configuration.bodyLimit, pretty: true)
            text += "\n    " + excerpt.replacingOccurrences(of: "\n", with: "\n    ")
        }
        return text
    }

    /// Whether a body is not text (an image, protobuf): a NUL, or bytes that are not UTF-8, in its
    /// first kilobyte. Logged as text it would be a screen of replacement characters.
    static func isBinary(_ body: Data) -> Bool {
        let head = body.prefix(1024)
        if head.contains(0) { return true }
        // Valid UTF-8, but for a character the cut at 1 KiB may have split.
        let cut = head.count < body.count ? 3 : 0
        return !(0...cut).contains { String(data: head.dropLast($0), encoding: .utf8) != nil }
    }

    static func format(_ seconds: TimeInterval) -> String {
        String(format: "%.4f s", seconds)
    }
}

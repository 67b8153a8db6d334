import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

/// The documented order of the chain: retry → session → configuration's → repository's → logging → transport.
@Suite("Interceptor chain order")
struct InterceptorChainTests {
    /// Appends its name on the way out and on the way back.
    struct Tracing: Interceptor {
        let name: String
        let trace: Trace

        func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
            async throws(RepositoryError) -> TransportResponse
        {
            trace.append("\(name)>")
            var request = request
            request.headers.add(name: "X-Trace", value: name)
            let response = try await next(request)
            trace.append("<\(name)")
            return response
        }
    }

    final class Trace: Sendable {
        private let entries = Mutex<[String]>([])
        var all: [String] { entries.withLock { $0 } }
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    }

    struct User: Codable, Sendable {}

    @Test("configuration interceptors run before repository interceptors, inside the session step and retries")
    func order() async throws {
        let trace = Trace()
        let logger = RecordingLogger()
        let clock = TestClock()
        let attempts = Mutex(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "items") { request throws(TransportError) in
                let attempt = attempts.withLock {
                    $0 += 1
                    return $0
                }
                trace.append(
                    "transport \(request.headers.values(for: "X-Trace").joined(separator: ",")) \(request.headers["Authorization"] ?? "-")")
                return TransportResponse(statusCode: attempt == 1 ? 503 : 200, body: Data("[]".utf8))
            }
        ])
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.clock = clock.networkingClock
        configuration.retryPolicy = RetryPolicy(random: { 0 })
        configuration.interceptors = [Tracing(name: "config-1", trace: trace), Tracing(name: "config-2", trace: trace)]
        configuration.logging = LoggingConfiguration(level: .info, logger: logger)
        let session = SessionManager<User>()
        try session.login(user: User(), token: "t")
        let repository = AbstractRepository(
            configuration: configuration, sessionManager: session, transport: transport,
            interceptors: [Tracing(name: "repository", trace: trace)])

        let items: [Int] = try await repository.performRequest(.get("items")).get()

        #expect(items.isEmpty)
        #expect(
            trace.all == [
                "config-1>", "config-2>", "repository>", "transport config-1,config-2,repository Bearer t",
                "<repository", "<config-2", "<config-1",
                "config-1>", "config-2>", "repository>", "transport config-1,config-2,repository Bearer t",
                "<repository", "<config-2", "<config-1",
            ])
        // Logging is innermost: it saw both attempts.
        #expect(logger.records.filter { $0.message.hasPrefix("→") }.count == 2)
        #expect(clock.sleeps.count == 1)
    }
}

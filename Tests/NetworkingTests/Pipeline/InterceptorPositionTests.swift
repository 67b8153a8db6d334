import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

/// Records, in one shared log, when it sees the request go out and the response come back,
/// whether the request carried `Authorization` and the wire stamp, and marks the response.
private struct PositionRecorder: Interceptor {
    let label: String
    let position: InterceptorPosition
    let log: Recorder<String>
    /// A header this interceptor adds to the request, when set.
    var stamp: String?

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        let auth = request.headers["Authorization"] ?? "none"
        let wire = request.headers.values(for: "X-Wire-Stamp").joined(separator: ",")
        log.record("\(label) → auth=\(auth) wire=\(wire.isEmpty ? "none" : wire)")
        var request = request
        if let stamp { request.headers.add(name: "X-Wire-Stamp", value: stamp) }
        var response = try await next(request)
        log.record("\(label) ← \(response.statusCode)")
        response.headers.add(name: "X-Back", value: label)
        return response
    }
}

/// A logger writing the first line of each record into the shared log, and keeping every record.
private final class OrderLogger: NetworkLogging {
    let log: Recorder<String>
    private let stored = Mutex<[LogRecord]>([])

    init(log: Recorder<String>) { self.log = log }

    var records: [LogRecord] { stored.withLock { $0 } }

    func log(_ record: LogRecord) {
        stored.withLock { $0.append(record) }
        let first = record.message.split(separator: "\n").first.map(String.init) ?? ""
        log.record("logger \(first.hasPrefix("→") ? "→" : "←") \(record.statusCode.map(String.init) ?? "")")
    }
}

/// Answers 503 the first time and 200 afterwards, counting its calls.
private final class FailOnceRoute: Sendable {
    private let calls = Mutex(0)

    var count: Int { calls.withLock { $0 } }

    var route: StubTransport.Route {
        StubTransport.Route(.get, "books/1") { request throws(TransportError) in
            let call = self.calls.withLock { calls -> Int in
                calls += 1
                return calls
            }
            return TransportResponse(
                statusCode: call == 1 ? 503 : 200, headers: ["Content-Type": "application/json"],
                body: Data(#"{"id": 1, "title": "Dune", "genre": "fiction"}"#.utf8), url: request.url)
        }
    }
}

/// Feature settings, as interceptors built on the seams would define them.
private enum TraceSampling: RequestOptionKey {
    static let defaultValue = false
}

private enum CacheLifetime: RequestOptionKey {
    static let defaultValue: TimeInterval = 0
}

/// Records what an interceptor learns about the call from its context.
private struct ContextRecorder: Interceptor {
    struct Seen: Sendable {
        let id: UUID
        let attempt: Int
        let name: String?
        let sampling: Bool
        let lifetime: TimeInterval
        let setsSampling: Bool
        let optionsEmpty: Bool
        let hasSession: Bool
        let sessionToken: String?
    }

    let position: InterceptorPosition
    let seen: Recorder<Seen>

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        seen.record(
            Seen(
                id: context.id, attempt: context.attempt, name: context.name, sampling: context.options[TraceSampling.self],
                lifetime: context.options[CacheLifetime.self], setsSampling: context.options.contains(TraceSampling.self),
                optionsEmpty: context.options.isEmpty, hasSession: context.session != nil,
                sessionToken: (context.session as? SessionManager<User>)?.sessionToken))
        return try await next(request)
    }
}

@Suite("Interceptor positions")
struct InterceptorPositionTests {
    /// Two interceptors at each position (the configuration's and the repository's, given out of
    /// order), a retry policy that retries a 503 once, a session, and debug logging.
    private func chain(log: Recorder<String>, logger: OrderLogger) throws -> (TestRepository, StubTransport, FailOnceRoute) {
        let route = FailOnceRoute()
        let transport = StubTransport(routes: [route.route])
        let session = SessionManager<User>()
        try session.login(user: ann, token: "t1")
        var configuration = try makeConfiguration()
        configuration.clock = TestClock().networkingClock
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 2, random: { 0 })
        configuration.logging = LoggingConfiguration(level: .debug, logger: logger)
        configuration.interceptors = [
            PositionRecorder(label: "config-wire", position: .nextToWire, log: log, stamp: "config"),
            PositionRecorder(label: "config-after", position: .afterSigning, log: log),
            PositionRecorder(label: "config-before", position: .beforeSigning, log: log),
            PositionRecorder(label: "config-outside", position: .outsideRetries, log: log),
        ]
        let repository = TestRepository(
            configuration: configuration, sessionManager: session, transport: transport,
            interceptors: [
                PositionRecorder(label: "repo-before", position: .beforeSigning, log: log),
                PositionRecorder(label: "repo-wire", position: .nextToWire, log: log, stamp: "repo"),
                PositionRecorder(label: "repo-outside", position: .outsideRetries, log: log),
                PositionRecorder(label: "repo-after", position: .afterSigning, log: log),
            ])
        return (repository, transport, route)
    }

    @Test("The documented order, out and back, across a retry: outside once, signing between before and after, logging before the wire")
    func documentedOrder() async throws {
        // Given
        let log = Recorder<String>()
        let logger = OrderLogger(log: log)
        let (repository, transport, route) = try chain(log: log, logger: logger)
        // When
        let book: Book = try await repository.performRequest(.get("books/1")).get()
        // Then
        #expect(book.title == "Dune")
        #expect(route.count == 2)
        let attempt = { (status: Int) -> [String] in
            [
                "config-before → auth=none wire=none",
                "repo-before → auth=none wire=none",
                "config-after → auth=Bearer t1 wire=none",
                "repo-after → auth=Bearer t1 wire=none",
                "logger → ",
                "config-wire → auth=Bearer t1 wire=none",
                "repo-wire → auth=Bearer t1 wire=config",
                "repo-wire ← \(status)",
                "config-wire ← \(status)",
                "logger ← \(status)",
                "repo-after ← \(status)",
                "config-after ← \(status)",
                "repo-before ← \(status)",
                "config-before ← \(status)",
            ]
        }
        let expected =
            ["config-outside → auth=none wire=none", "repo-outside → auth=none wire=none"]
            + attempt(503) + attempt(200)
            + ["repo-outside ← 200", "config-outside ← 200"]
        #expect(log.all == expected)
        // The transport got both stamps, in the order of the interceptors next to the wire.
        #expect(transport.requests.map { $0.headers.values(for: "X-Wire-Stamp") } == [["config", "repo"], ["config", "repo"]])
    }

    @Test("Logging shows the signed request but not what nextToWire adds, and the response as nextToWire left it")
    func loggingSeesWhatItShould() async throws {
        // Given
        let log = Recorder<String>()
        let logger = OrderLogger(log: log)
        let (repository, _, _) = try chain(log: log, logger: logger)
        // When
        let raw = try await repository.performRequest(Endpoint<TransportResponse>.get("books/1")).get()
        // Then
        let requests = logger.records.filter { $0.message.hasPrefix("→") }
        let responses = logger.records.filter { $0.message.hasPrefix("←") }
        #expect(requests.count == 2)
        #expect(responses.count == 2)
        for record in requests {
            #expect(record.message.contains("Authorization"), "logging runs after signing: \(record.message)")
            #expect(!record.message.contains("Bearer t1"), "the token is redacted: \(record.message)")
            #expect(!record.message.contains("X-Wire-Stamp"), "nextToWire runs after logging: \(record.message)")
        }
        for record in responses {
            #expect(record.message.contains("X-Back: repo-wire"))
            #expect(record.message.contains("X-Back: config-wire"))
            #expect(!record.message.contains("X-Back: repo-after"), "afterSigning sees the response after logging")
        }
        #expect(
            raw.headers.values(for: "X-Back") == [
                "repo-wire", "config-wire", "repo-after", "config-after", "repo-before", "config-before", "repo-outside",
                "config-outside",
            ])
    }

    @Test("A call that needs no session is never signed, at any position")
    func unsignedCall() async throws {
        // Given
        let log = Recorder<String>()
        let logger = OrderLogger(log: log)
        let (repository, _, _) = try chain(log: log, logger: logger)
        // When
        _ = try await repository.performRequest(Endpoint<Book>.get("books/1").withoutSession()).get()
        // Then
        #expect(log.all.filter { $0.contains("auth=Bearer") }.isEmpty)
    }

    @Test("Without retries, session or logging, the positions still keep their relative order")
    func minimalChain() async throws {
        // Given
        let log = Recorder<String>()
        let transport = StubTransport(routes: [.json(.get, "books", "[]")])
        var configuration = try makeConfiguration()
        configuration.interceptors = [PositionRecorder(label: "wire", position: .nextToWire, log: log)]
        let repository = TestRepository(
            configuration: configuration, transport: transport,
            interceptors: [
                PositionRecorder(label: "after", position: .afterSigning, log: log),
                PositionRecorder(label: "outside", position: .outsideRetries, log: log),
                PositionRecorder(label: "before", position: .beforeSigning, log: log),
            ])
        // When
        try await repository.performRequest(Endpoint<Void>.get("books")).get()
        // Then
        #expect(log.all.filter { $0.contains("→") }.map { String($0.prefix { $0 != " " }) } == ["outside", "before", "after", "wire"])
    }

    @Test("A step outside the retries reads the call's attempts from its context, whether it ends with an answer or an error")
    func outsideRetriesSeesTheAttempts() async throws {
        struct AttemptsRecorder: Interceptor {
            let seen: Recorder<Int>
            var position: InterceptorPosition { .outsideRetries }
            func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
                async throws(RepositoryError) -> TransportResponse
            {
                do {
                    let response = try await next(request)
                    seen.record(context.attempt)
                    return response
                } catch {
                    seen.record(context.attempt)
                    throw error
                }
            }
        }
        let seen = Recorder<Int>()
        let lost = Mutex(0)
        let transport = StubTransport(routes: [
            SequenceRoute(statuses: [503, 503, 200]).route(.get, "books/1"),
            StubTransport.Route(.get, "books/2") { _ throws(TransportError) in
                lost.withLock { $0 += 1 }
                throw .network(.connectionLost)
            },
        ])
        var configuration = try makeConfiguration()
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, baseDelay: 0, random: { 0 })
        let repository = TestRepository(configuration: configuration, transport: transport, interceptors: [AttemptsRecorder(seen: seen)])
        _ = try await repository.performRequest(Endpoint<Book>.get("books/1")).get()
        let failure = await repository.performRequest(Endpoint<Book>.get("books/2")).failure
        #expect(seen.all == [3, 3])
        #expect(failure?.context?.attempts == 3 && lost.withLock { $0 } == 3)
    }

    @Test("The default position is afterSigning, and positions are ordered outermost first")
    func defaults() {
        struct Plain: Interceptor {
            func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
                async throws(RepositoryError) -> TransportResponse
            { try await next(request) }
        }
        #expect(Plain().position == .afterSigning)
        #expect(InterceptorPosition.allCases == [.outsideRetries, .beforeSigning, .afterSigning, .nextToWire])
        #expect(InterceptorPosition.allCases.sorted() == InterceptorPosition.allCases)
    }
}

@Suite("RequestContext: name, options and session")
struct RequestContextTests {
    @Test("An interceptor reads the endpoint's name and options, and the repository's session")
    func nameOptionsSession() async throws {
        // Given
        let seen = Recorder<ContextRecorder.Seen>()
        let session = SessionManager<User>()
        try session.login(user: ann, token: "t9")
        let transport = StubTransport(routes: [.json(.get, "books/1", #"{"id": 1, "title": "Dune", "genre": "fiction"}"#)])
        let repository = TestRepository(
            configuration: try makeConfiguration(), sessionManager: session, transport: transport,
            interceptors: [ContextRecorder(position: .beforeSigning, seen: seen)])
        var endpoint = Endpoint<Book>.get("books/1").with(TraceSampling.self, true).with(CacheLifetime.self, 60)
        endpoint.name = "getBook"
        // When
        _ = try await repository.performRequest(endpoint).get()
        // Then
        let context = try #require(seen.all.first)
        #expect(context.name == "getBook")
        #expect(context.sampling == true)
        #expect(context.lifetime == 60)
        #expect(context.setsSampling)
        #expect(!context.optionsEmpty)
        #expect(context.hasSession)
        #expect(context.sessionToken == "t9")
    }

    @Test("Options nobody set read as their defaults; no session means none in the context")
    func defaults() async throws {
        // Given
        let seen = Recorder<ContextRecorder.Seen>()
        let transport = StubTransport(routes: [.json(.get, "books/1", #"{"id": 1, "title": "Dune", "genre": "fiction"}"#)])
        let repository = TestRepository(
            configuration: try makeConfiguration(), transport: transport,
            interceptors: [ContextRecorder(position: .afterSigning, seen: seen)])
        // When
        _ = try await repository.performRequest(Endpoint<Book>.get("books/1")).get()
        // Then
        let context = try #require(seen.all.first)
        #expect(context.name == nil)
        #expect(context.sampling == false)
        #expect(context.lifetime == 0)
        #expect(!context.setsSampling)
        #expect(context.optionsEmpty)
        #expect(!context.hasSession)
    }

    @Test("An option set to its default value is still set")
    func setToDefault() {
        // Given
        var options = RequestOptions()
        // When
        options[TraceSampling.self] = false
        // Then
        #expect(options.contains(TraceSampling.self))
        #expect(!options.isEmpty)
        #expect(!options.contains(CacheLifetime.self))
    }

    @Test("Name and options survive the RepositoryResponse, raw and polling forms; the id is kept across retries")
    func survivesForms() async throws {
        // Given
        let seen = Recorder<ContextRecorder.Seen>()
        let route = FailOnceRoute()
        let transport = StubTransport(routes: [route.route])
        var configuration = try makeConfiguration()
        configuration.clock = TestClock().networkingClock
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 2, random: { 0 })
        let repository = TestRepository(
            configuration: configuration, transport: transport, interceptors: [ContextRecorder(position: .beforeSigning, seen: seen)])
        var wrapped = Endpoint<RepositoryResponse<Book>>.get("books/1").with(CacheLifetime.self, 5)
        wrapped.name = "wrapped"
        var raw = Endpoint<TransportResponse>.get("books/1").with(CacheLifetime.self, 6)
        raw.name = "raw"
        var polled = Endpoint<Book>.get("books/1").with(CacheLifetime.self, 7)
        polled.name = "polled"
        // When
        _ = try await repository.performRequest(wrapped).get()
        _ = try await repository.performRequest(raw).get()
        _ = try await repository.performPollingRequest(polled).get()
        // Then: the first call was retried once (503, then 200)
        let all = seen.all
        #expect(all.map(\.name) == ["wrapped", "wrapped", "raw", "polled"])
        #expect(all.map(\.lifetime) == [5, 5, 6, 7])
        #expect(all.map(\.attempt) == [1, 2, 1, 1])
        #expect(all[0].id == all[1].id)
        #expect(all[1].id != all[2].id)
    }
}

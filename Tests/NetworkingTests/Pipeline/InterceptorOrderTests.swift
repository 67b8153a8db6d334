import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// Logs when it sees the request and the response, and tags the request on its way out.
private struct LoggingInterceptor: Interceptor {
    let name: String
    let log: Recorder<String>

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        log.record("\(name) out auth=\(request.headers["Authorization"] ?? "none") session=\(context.requiresSession)")
        var tagged = request
        tagged.headers.add(name: "X-Chain", value: name)
        var response = try await next(tagged)
        log.record("\(name) back \(response.statusCode)")
        response.headers.add(name: "X-Seen-By", value: name)
        return response
    }
}

/// Sends the request again once when the first answer is a 503.
private struct RetryOnceInterceptor: Interceptor {
    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        let first = try await next(request)
        return first.statusCode == 503 ? try await next(request) : first
    }
}

/// Answers by itself or fails, without reaching the transport.
private struct ShortCircuitInterceptor: Interceptor {
    let outcome: Result<TransportResponse, RepositoryError>

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        try outcome.get()
    }
}

@Suite("Interceptor chain semantics")
struct InterceptorOrderTests {
    @Test("The first interceptor given is the outermost; the session's step is outside them all")
    func order() async throws {
        // Given
        let log = Recorder<String>()
        let session = SessionManager<User>()
        try session.login(user: User(id: 1, name: "Ann"), token: "t1")
        let transport = StubTransport(routes: [.json(.get, "books", "[]")])
        let repository = TestRepository(
            configuration: try makeConfiguration(), sessionManager: session, transport: transport,
            interceptors: [LoggingInterceptor(name: "outer", log: log), LoggingInterceptor(name: "inner", log: log)])
        // When
        let raw = try await repository.performRawRequest(.get("books")).get()
        // Then
        #expect(
            log.all == [
                "outer out auth=Bearer t1 session=true", "inner out auth=Bearer t1 session=true", "inner back 200",
                "outer back 200",
            ])
        #expect(transport.requests.first?.headers.values(for: "X-Chain") == ["outer", "inner"])
        #expect(raw.headers.values(for: "X-Seen-By") == ["inner", "outer"])
    }

    @Test("Interceptors are told when a call needs no session")
    func authenticationContext() async throws {
        // Given
        let log = Recorder<String>()
        let transport = StubTransport(routes: [.status(.post, "login", 204)])
        let repository = TestRepository(
            configuration: try makeConfiguration(), sessionManager: SessionManager<User>(), transport: transport,
            interceptors: [LoggingInterceptor(name: "only", log: log)])
        // When
        try await repository.performAuthenticationRequest(Endpoint<Void>.post("login")).get()
        // Then
        #expect(log.all.first == "only out auth=none session=false")
    }

    @Test("An interceptor may send the request again; status validation sees its final answer")
    func replay() async throws {
        // Given
        let statuses = SequenceRoute(statuses: [503, 200])
        let transport = StubTransport(routes: [statuses.route(.get, "books/1")])
        let repository = TestRepository(
            configuration: try makeConfiguration(), transport: transport, interceptors: [RetryOnceInterceptor()])
        // When
        let book: Book = try await repository.performRequest(.get("books/1")).get()
        // Then
        #expect(book.id == 1)
        #expect(statuses.count == 2)
        #expect(transport.requests.count == 2)
        #expect(transport.requests[0] == transport.requests[1])
    }

    @Test("An interceptor may answer or fail by itself, and the transport sees nothing")
    func shortCircuit() async throws {
        // Given
        let transport = StubTransport(routes: [])
        let cached = TransportResponse(statusCode: 200, body: Data(#"{"id": 5, "title": "Cached", "genre": "history"}"#.utf8))
        let answering = TestRepository(
            configuration: try makeConfiguration(), transport: transport,
            interceptors: [ShortCircuitInterceptor(outcome: .success(cached))])
        let failing = TestRepository(
            configuration: try makeConfiguration(), transport: transport,
            interceptors: [ShortCircuitInterceptor(outcome: .failure(.cancelled(nil)))])
        // When
        let book: Book = try await answering.performRequest(.get("books/5")).get()
        let failure = await failing.performRequest(Endpoint<Book>.get("books/5")).failure
        // Then
        #expect(book.title == "Cached")
        guard case .cancelled(nil) = failure else {
            Issue.record("expected the interceptor's error, got \(String(describing: failure))")
            return
        }
        #expect(transport.requests.isEmpty)
    }
}

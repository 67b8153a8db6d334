import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

/// Holds one attempt until its task is cancelled, then fails it as cancelled.
private struct HoldsAttempt: Interceptor {
    let attempt: Int
    let waiting: AsyncStream<Void>.Continuation

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        guard context.attempt == attempt else { return try await next(request) }
        waiting.yield()
        try? await Task.sleep(for: .seconds(60))
        throw .cancelled(ErrorContext(request: request.summary))
    }
}

/// Fails the `number`-th request it sees before it reaches the transport, marked unsent.
private final class FailsRequest: Interceptor, Sendable {
    let number: Int
    private let seen = Mutex(0)

    init(number: Int) { self.number = number }

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        let count = seen.withLock { count in
            count += 1
            return count
        }
        guard count != number else { throw .noNetworkConnection(.notConnected, ErrorContext(request: request.summary, attempts: 0)) }
        return try await next(request)
    }
}

/// Answers every request with a 503 itself: the transport never sees one.
private struct Answers503: Interceptor {
    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        TransportResponse(statusCode: 503)
    }
}

/// A streaming transport that answers only when released, whatever cancellation says.
private final class DeafTransport: Transport {
    private let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)
    let (sent, sentSignal) = AsyncStream.makeStream(of: Void.self)

    var streamsBodies: Bool { true }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        await withCheckedContinuation { continuation in
            waiting.withLock { $0 = continuation }
            sentSignal.yield()
        }
        throw .network(.connectionLost)
    }

    func release() { waiting.withLock { $0.take() }?.resume() }
}

@Suite("Transport failures and cancellation")
struct TransportErrorMappingTests {
    private static let url = URL(string: "http://api.test/api/v1/books?page=1")!

    /// Whether `error` is the repository error a transport's `failure` must become.
    private static func isMapping(_ error: RepositoryError, of failure: TransportError) -> Bool {
        switch (failure, error) {
        case (.network(let sent), .noNetworkConnection(let received, _)): sent == received
        case (.timedOut, .timeout(let context)): context.response == nil
        case (.cancelled, .cancelled(let context)): context != nil
        case (.tls(let sent), .tlsError(let received, _)): sent == received
        case (.pinMismatch(let sent), .pinningFailed(let received, _)): sent == received
        case (.pinningUnsupported(let sent), .pinningUnsupported(let received, _)): sent == received
        case (.responseTooLarge(let sent), .responseTooLarge(let received, _)): sent == received
        case (.invalidResponse(let sent), .invalidResponse(let received, _)): sent == received
        case (.invalidRequest(let sent), .invalidRequest(let received, _)): sent == received
        default: false
        }
    }

    @Test(
        "Each transport failure becomes its own repository error carrying the request",
        arguments: [
            TransportError.network(.connectionRefused), .network(.hostNotFound), .network(.connectionLost),
            .network(.notConnected), .network(.other("reset by peer")), .timedOut, .cancelled,
            .tls(.untrustedCertificate("self-signed")), .tls(.expiredCertificate("expired")),
            .tls(.hostnameMismatch("other.test")), .tls(.handshakeFailed("alert")), .pinMismatch(host: "api.test"),
            .pinningUnsupported(transport: "URLSessionTransport"), .responseTooLarge(limit: 1024),
            .invalidResponse("garbage status line"), .invalidRequest("body on GET refused"),
        ])
    func mapping(failure: TransportError) async throws {
        // Given a transport that fails this way
        let transport = StubTransport(routes: [.failure(.get, "books", failure)])
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        // When
        let result = await repository.performRequest(Endpoint<[Book]>.get("books", parameters: ["page": 1]))
        // Then
        let error = try #require(result.failure)
        #expect(Self.isMapping(error, of: failure), "\(failure) became \(error)")
        #expect(error.context?.request == RequestSummary(method: .get, url: Self.url))
        #expect(error.context?.response == nil)
        #expect(error.description.contains("GET \(Self.url.absoluteString)"), "\(error.description)")
    }

    @Test("Connectivity failures are the ones worth retrying later")
    func connectivity() async throws {
        // Given
        let summary = RequestSummary(method: .get, url: Self.url)
        let context = ErrorContext(request: summary)
        // Then
        #expect(RepositoryError.noNetworkConnection(.connectionRefused, context).isConnectivityFailure)
        #expect(RepositoryError.timeout(context).isConnectivityFailure)
        #expect(RepositoryError.noNetworkConnection(.connectionLost, context).isConnectivityFailure)
        let answered = ErrorContext(request: summary, response: TransportResponse(statusCode: 202))
        #expect(!RepositoryError.pollingExhausted(attempts: 3, context: answered).isConnectivityFailure)
        #expect(!RepositoryError.invalidResponse(reason: "bad chunk", context: context).isConnectivityFailure)
        #expect(!RepositoryError.responseTooLarge(limit: 10, context: context).isConnectivityFailure)
        #expect(!RepositoryError.authenticationFailed(answered).isConnectivityFailure)
        #expect(!RepositoryError.tlsError(.handshakeFailed("x"), context).isConnectivityFailure)
        #expect(!RepositoryError.cancelled(context).isConnectivityFailure)
    }

    @Test("Cancelling the calling task while the transport waits ends the call with cancelled")
    func cancellationInFlight() async throws {
        // Given a route that signals it started, then waits until it is cancelled
        let (started, signal) = AsyncStream.makeStream(of: Void.self)
        let route = StubTransport.Route(.get, "slow") { request throws(TransportError) in
            signal.yield()
            for _ in 0..<3000 {
                do { try await Task.sleep(for: .milliseconds(10)) } catch { throw .cancelled }
            }
            return TransportResponse(statusCode: 200, url: request.url)
        }
        let transport = StubTransport(routes: [route])
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        let call = Task { await repository.performRequest(Endpoint<Void>.get("slow")) }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        // When
        call.cancel()
        let result = await call.value
        // Then
        guard case .cancelled(let context?) = result.failure else {
            Issue.record("expected cancelled with context, got \(result)")
            return
        }
        #expect(context.request.url.path == "/api/v1/slow")
        #expect(transport.requests.count == 1)
    }

    @Test("A call made by an already cancelled task sends nothing")
    func cancelledBeforeSending() async throws {
        // Given
        let transport = StubTransport(routes: [.status(.get, "books", 200)])
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        // When
        let result = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await repository.performRequest(Endpoint<Void>.get("books"))
        }.value
        // Then
        guard case .cancelled(let context?) = result.failure else {
            Issue.record("expected cancelled naming the request, got \(result)")
            return
        }
        #expect(context.request.method == .get)
        #expect(context.request.url.path.hasSuffix("/books"))
        #expect(context.response == nil)
        #expect(context.attempts == 0)
        #expect(RepositoryError.cancelled(context).description.hasSuffix("was cancelled before it was sent."))
        #expect(transport.requests.isEmpty)
    }

    @Test(
        "A call cancelled in an interceptor's wait counts only the attempts that reached the transport",
        arguments: [(waitsOn: 1, sent: 0), (waitsOn: 2, sent: 1)])
    func cancelledOnTheWayCountsSentAttempts(waitsOn: Int, sent: Int) async throws {
        // Given: a 503 retried once, and an interceptor that holds attempt `waitsOn` until cancelled
        let transport = StubTransport(routes: [.status(.get, "books", 503)])
        var configuration = try makeConfiguration()
        configuration.clock = TestClock().networkingClock
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 2, random: { 0 })
        let (waiting, signal) = AsyncStream.makeStream(of: Void.self)
        configuration.interceptors = [HoldsAttempt(attempt: waitsOn, waiting: signal)]
        let repository = TestRepository(configuration: configuration, transport: transport)
        // When
        let call = Task { await repository.performRequest(Endpoint<Void>.get("books")) }
        for await _ in waiting { break }
        call.cancel()
        let result = await call.value
        // Then
        guard case .cancelled(let context?) = result.failure else {
            Issue.record("expected cancelled naming the request, got \(result)")
            return
        }
        #expect(context.attempts == sent)
        #expect(transport.requests.count == sent)
        #expect(RepositoryError.cancelled(context).description.hasSuffix("before it was sent.") == (sent == 0))
    }

    @Test(
        "A second poll that fails before it is sent counts the call's first, which went out (never 'not sent'), not the earlier poll's retries"
    )
    func secondPollCountsItsOwnAttempts() async throws {
        // Given: a job the server keeps accepting (202), and a second poll that never reaches the transport
        let transport = StubTransport(routes: [.status(.get, "jobs/1", 202)])
        var configuration = try makeConfiguration()
        configuration.clock = TestClock().networkingClock
        configuration.interceptors = [FailsRequest(number: 2)]
        let repository = TestRepository(configuration: configuration, transport: transport)
        // When
        let result = await repository.performPollingRequest(Endpoint<Void>.get("jobs/1"))
        // Then
        guard case .noNetworkConnection(.notConnected, let context)? = result.failure else {
            Issue.record("expected the interceptor's error, got \(result)")
            return
        }
        #expect(transport.requests.count == 1)
        #expect(context.attempts == 1)
    }

    @Test("An interceptor that answers instead of the transport makes attempts all the same: each is counted")
    func answersWithoutTransportCount() async throws {
        let transport = StubTransport(routes: [])
        var configuration = try makeConfiguration()
        configuration.clock = TestClock().networkingClock
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, random: { 0 })
        configuration.interceptors = [Answers503()]
        let repository = TestRepository(configuration: configuration, transport: transport)
        let result = await repository.performRequest(Endpoint<Void>.get("books"))
        guard case .requestError(let context)? = result.failure else {
            Issue.record("expected the 503, got \(result)")
            return
        }
        #expect(transport.requests.isEmpty)
        #expect(context.attempts == 3)
        #expect(result.failure?.description.contains("after 3 attempts") == true)
    }

    @Test("Cancelling a streamed call ends it at once, before its head, even when the transport does not heed cancellation")
    func streamedCallCancelledBeforeItsHead() async throws {
        // Given
        let transport = DeafTransport()
        defer { transport.release() }
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        // When
        let call = Task { await repository.performRequest(Endpoint<ResponseChunks>.get("stream")) }
        for await _ in transport.sent { break }
        call.cancel()
        // Then
        guard let result = await call.value(within: .seconds(60)) else {
            Issue.record("the call hung after its task was cancelled")
            return
        }
        guard case .cancelled(let context?) = result.failure else {
            Issue.record("expected cancelled naming the request, got \(result)")
            return
        }
        #expect(context.request.url.path.hasSuffix("/stream"))
        #expect(context.attempts == 1, "the transport had it")
    }

    @Test("A request no route matches fails loudly, naming it")
    func unmatchedRoute() async throws {
        let transport = StubTransport(routes: [.status(.get, "books", 200)])
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        let result = await repository.performRequest(Endpoint<Void>.post("books"))
        guard case .invalidRequest(let reason, _) = result.failure else {
            Issue.record("expected invalidRequest, got \(result)")
            return
        }
        #expect(reason.contains("no route for POST http://api.test/api/v1/books"))
    }
}

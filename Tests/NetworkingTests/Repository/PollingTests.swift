import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

@Suite("Polling")
struct PollingTests {
    private func repository(
        _ route: SequenceRoute, method: HTTPMethod = .get, path: String = "reports/1", maximumPollingRetries: Int? = nil
    ) throws -> (TestRepository, StubTransport) {
        let transport = StubTransport(routes: [route.route(method, path)])
        let configuration = try makeConfiguration(secondsBetweenPolls: 0.01, maximumPollingRetries: maximumPollingRetries)
        return (TestRepository(configuration: configuration, transport: transport), transport)
    }

    @Test("202, 202, 200 succeeds with the final body after exactly three requests")
    func eventuallyReady() async throws {
        // Given
        let route = SequenceRoute(statuses: [202, 202, 200])
        let (repository, transport) = try repository(route)
        // When
        let book: Book = try await repository.performPollingRequest(.get("reports/1")).get()
        // Then
        #expect(book.title == "Dune")
        #expect(route.count == 3)
        #expect(transport.requests.count == 3)
    }

    @Test("Always 202 fails with pollingExhausted holding the last 202 after 1 + maximumPollingRetries requests")
    func runsOutOfTries() async throws {
        // Given
        let route = SequenceRoute(statuses: [202])
        let (repository, transport) = try repository(route, maximumPollingRetries: 2)
        // When
        let result = await repository.performPollingRequest(Endpoint<Book>.get("reports/1"))
        // Then
        guard case .pollingExhausted(let attempts, let context) = result.failure else {
            Issue.record("expected pollingExhausted, got \(result)")
            return
        }
        #expect(attempts == 3)
        #expect(context.response?.statusCode == 202)
        #expect(context.request.url.path == "/api/v1/reports/1")
        #expect(transport.requests.count == 3)
        #expect(result.failure?.isConnectivityFailure == false)
        #expect(result.failure?.description.contains("still pending (status 202) after 3 polling tries") == true)
    }

    @Test("With no retries allowed, one 202 ends polling")
    func noRetries() async throws {
        let (repository, transport) = try repository(SequenceRoute(statuses: [202, 200]), maximumPollingRetries: 0)
        let result = await repository.performPollingRequest(Endpoint<Book>.get("reports/1"))
        guard case .pollingExhausted(attempts: 1, _) = result.failure else {
            Issue.record("expected pollingExhausted after 1 attempt, got \(result)")
            return
        }
        #expect(transport.requests.count == 1)
    }

    @Test("Every try sends the same parameters and headers (a POST the retry policy may send again)")
    func identicalTries() async throws {
        // Given
        let session = SessionManager<User>()
        try session.login(user: User(id: 1, name: "Ann"), token: "t1")
        let route = SequenceRoute(statuses: [202, 202, 202, 200])
        let transport = StubTransport(routes: [route.route(.post, "exports")])
        let repository = TestRepository(
            configuration: try makeConfiguration(secondsBetweenPolls: 0.01), sessionManager: session, transport: transport)
        // When
        let endpoint = Endpoint<Book>.post(
            "exports", parameters: ["format": "csv", "filter": ["genre": "fiction"]], headers: ["X-Trace": "t-1"]
        ).retrying(RetryPolicy(retryableMethods: [.get, .post]))
        _ = try await repository.performPollingRequest(endpoint).get()
        // Then
        let requests = transport.requests
        #expect(requests.count == 4)
        #expect(Set(requests).count == 1)
        #expect(try jsonBody(of: requests[0]) == ["format": "csv", "filter": ["genre": "fiction"]])
        #expect(requests[0].headers["X-Trace"] == "t-1")
        #expect(requests[0].headers["Authorization"] == "Bearer t1")
    }

    @Test("A POST or PATCH the retry policy would not send again is refused before anything is sent, unless polls cannot follow")
    func writesAreRefused() async throws {
        // Given
        let route = SequenceRoute(statuses: [202, 200])
        let transport = StubTransport(routes: [route.route(.post, "exports"), route.route(.patch, "exports")])
        let repository = TestRepository(configuration: try makeConfiguration(secondsBetweenPolls: 0.01), transport: transport)
        // When
        let post = await repository.performPollingRequest(Endpoint<Book>.post("exports").withoutSession())
        let patch = await repository.performPollingRequest(Endpoint<Void>(.patch, "exports").withoutSession())
        // Then
        for result in [post.map { _ in () }, patch] {
            guard case .invalidRequest(let reason, let request)? = result.failure else {
                Issue.record("expected invalidRequest, got \(result)")
                continue
            }
            #expect(reason.contains("retryableMethods"))
            #expect(request?.url.path.hasSuffix("/exports") == true)
        }
        #expect(transport.requests.isEmpty)
        // When: no poll may follow
        let once = TestRepository(
            configuration: try makeConfiguration(secondsBetweenPolls: 0.01, maximumPollingRetries: 0), transport: transport)
        let single = await once.performPollingRequest(Endpoint<Void>(.patch, "exports").withoutSession())
        // Then: it is sent, and a 202 is the end of it
        #expect(single.failure.map { if case .pollingExhausted = $0 { true } else { false } } == true)
        #expect(transport.requests.count == 1)
    }

    @Test("Another failure status while polling ends it at once")
    func errorWhilePolling() async throws {
        let route = SequenceRoute(statuses: [202, 500, 200])
        let (repository, transport) = try repository(route)
        let result = await repository.performPollingRequest(Endpoint<Book>.get("reports/1"))
        guard case .requestError(let context) = result.failure else {
            Issue.record("expected requestError, got \(result)")
            return
        }
        #expect(context.statusCode == 500)
        #expect(transport.requests.count == 2)
    }

    @Test("A Void polling request ignores the final body; a first non-202 answer is not polled")
    func voidPolling() async throws {
        let ready = SequenceRoute(statuses: [202, 204])
        let immediate = SequenceRoute(statuses: [200])
        let (readyRepository, _) = try repository(ready, method: .delete)
        let (immediateRepository, _) = try repository(immediate, method: .delete)
        try await readyRepository.performPollingRequest(Endpoint<Void>.delete("reports/1")).get()
        try await immediateRepository.performPollingRequest(Endpoint<Void>.delete("reports/1")).get()
        #expect(ready.count == 2)
        #expect(immediate.count == 1)
    }

    @Test("A 202's longer Retry-After is waited for, up to the retry policy's longest; a shorter one is not")
    func retryAfter() async throws {
        // Given: a job that asks for 5 s, then 1 s, then a year, then is ready
        let asks = ["5", "1", "31536000"]
        let count = Mutex(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "reports/1") { request throws(TransportError) in
                let index = count.withLock { count in
                    defer { count += 1 }
                    return count
                }
                guard index < asks.count else {
                    return TransportResponse(
                        statusCode: 200, body: Data(#"{"id": 1, "title": "Dune", "genre": "fiction"}"#.utf8), url: request.url)
                }
                return TransportResponse(statusCode: 202, headers: ["Retry-After": asks[index]], url: request.url)
            }
        ])
        let clock = TestClock()
        var configuration = try makeConfiguration(secondsBetweenPolls: 2)
        configuration.clock = clock.networkingClock
        let repository = TestRepository(configuration: configuration, transport: transport)
        // When
        let book: Book = try await repository.performPollingRequest(.get("reports/1")).get()
        // Then: 5 s, the configured 2 s (not 1 s), and the default longest Retry-After, 60 s
        #expect(book.title == "Dune")
        #expect(clock.sleeps == [.seconds(5), .seconds(2), .seconds(60)])
    }

    @Test(
        "A 202's Retry-After is bounded by the endpoint's own policy when it has one, else by the configuration's",
        arguments: [(endpointLongest: Double?.none, waited: 10.0), (endpointLongest: 100, waited: 100), (endpointLongest: 3, waited: 3)])
    func retryAfterBoundedByEndpointPolicy(endpointLongest: Double?, waited: Double) async throws {
        // Given: a job that asks for a year once, then is ready; the configuration waits at most 10 s
        let count = Mutex(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "reports/1") { request throws(TransportError) in
                let first = count.withLock { count in
                    defer { count += 1 }
                    return count == 0
                }
                guard first else { return TransportResponse(statusCode: 204, url: request.url) }
                return TransportResponse(statusCode: 202, headers: ["Retry-After": "31536000"], url: request.url)
            }
        ])
        let clock = TestClock()
        var configuration = try makeConfiguration(secondsBetweenPolls: 1)
        configuration.clock = clock.networkingClock
        configuration.retryPolicy = RetryPolicy(maximumRetryAfter: 10)
        let repository = TestRepository(configuration: configuration, transport: transport)
        var endpoint = Endpoint<Void>.get("reports/1")
        if let endpointLongest { endpoint = endpoint.retrying(RetryPolicy(maximumRetryAfter: endpointLongest)) }
        // When
        try await repository.performPollingRequest(endpoint).get()
        // Then
        #expect(clock.sleeps == [.seconds(waited)])
    }

    @Test(
        "With an infinite maximumRetryAfter a year is waited, but 10^12 s or more ends the polls at once; with a finite one, such a wait is cut to it"
    )
    func retryAfterPastAnyWait() async throws {
        let asks = Mutex(["31536000", "99999999999999999999", "9223372036854775807", "99999999999999999999"])
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "reports/1") { request throws(TransportError) in
                guard let ask = asks.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
                    return TransportResponse(statusCode: 204, url: request.url)
                }
                return TransportResponse(statusCode: 202, headers: ["Retry-After": ask], url: request.url)
            }
        ])
        let clock = TestClock()
        var configuration = try makeConfiguration(secondsBetweenPolls: 1)
        configuration.clock = clock.networkingClock
        let repository = TestRepository(configuration: configuration, transport: transport)
        let result = await repository.performPollingRequest(
            Endpoint<Void>.get("reports/1").retrying(RetryPolicy(maximumRetryAfter: .infinity)))
        guard case .pollingExhausted(attempts: 2, let context) = result.failure else {
            Issue.record("expected pollingExhausted after 2 tries, got \(result)")
            return
        }
        #expect(context.response?.headers["Retry-After"] == "99999999999999999999")
        #expect(clock.sleeps == [.seconds(31_536_000)])
        let cut = await repository.performPollingRequest(
            Endpoint<Void>.get("reports/1").retrying(RetryPolicy(maximumRetryAfter: .infinity)))
        guard case .pollingExhausted(attempts: 1, _) = cut.failure else {
            Issue.record("expected pollingExhausted after 1 try, got \(cut)")
            return
        }
        // The configuration's limit (60 s) cuts it, and polling goes on
        let limited = await repository.performPollingRequest(Endpoint<Void>.get("reports/1"))
        #expect(clock.sleeps.suffix(1) == [.seconds(60)])
        #expect(limited.failure == nil)
    }

    @Test("Cancelling the calling task stops polling with cancelled")
    func cancellation() async throws {
        // Given a job that never finishes, and the first try seen
        let (seen, signal) = AsyncStream.makeStream(of: Void.self)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "reports/1") { request throws(TransportError) in
                signal.yield()
                return TransportResponse(statusCode: 202, url: request.url)
            }
        ])
        let repository = TestRepository(
            configuration: try makeConfiguration(secondsBetweenPolls: 0.01, maximumPollingRetries: 100_000),
            transport: transport)
        let call = Task { await repository.performPollingRequest(Endpoint<Book>.get("reports/1")) }
        var iterator = seen.makeAsyncIterator()
        _ = await iterator.next()
        // When
        call.cancel()
        let result = await call.value
        // Then
        guard case .cancelled = result.failure else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
        #expect(transport.requests.count < 100_000)
    }
}

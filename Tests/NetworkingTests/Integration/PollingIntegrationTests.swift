import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

/// 202 polling against the test API's `/poll/<key>` counters.
@Suite("Polling end to end")
struct PollingIntegrationTests {
    struct Status: Decodable, Sendable {
        let status: String
        let attempts: Int
    }

    struct Record: Decodable, Sendable {
        struct Request: Decodable, Sendable {
            let method: String
            let args: [String: [String]]
            let headers: [String: String]
        }

        let attempts: Int
        let requests: [Request]
    }

    @Test("an absurd poll interval is a long wait, never a crash")
    func hugeInterval() async throws {
        let servers = try TestServers.require()
        let clock = TestClock(start: Date())
        var configuration = try TestServers.configuration(servers.apiURL, secondsBetweenPolls: 1e300, maximumPollingRetries: 1)
        configuration.clock = clock.networkingClock
        let repository = TestAPI.Repository(configuration: configuration)
        let status: Status = try await repository.performPollingRequest(
            Endpoint(.get, "poll/\(UUID().uuidString)", parameters: ["ready_after": 1]).withoutSession()
        ).get()
        #expect(status.attempts == 2)
        #expect(clock.sleeps == [.seconds(1_000_000_000_000)])
    }

    @Test("a logout and another login between polls fail the call: no poll is signed in the other session")
    func sessionChangesBetweenPolls() async throws {
        let key = UUID().uuidString
        let servers = try TestServers.require()
        let betweenPolls = Mutex<(@Sendable () async -> Void)?>(nil)
        var configuration = try TestServers.configuration(servers.apiURL, secondsBetweenPolls: 0.01, maximumPollingRetries: 3)
        configuration.clock = NetworkingClock(
            now: { Date() },
            sleep: { _ in
                let action = betweenPolls.withLock { $0 }
                await action?()
            })
        let (repository, session, login) = try await TestAPI.loggedIn(configuration: configuration)
        betweenPolls.withLock { action in
            action = {
                try? session.logout()
                guard let other = try? await repository.login().get() else { return }
                try? session.login(user: other.user, credential: Credential(accessToken: other.token, refreshToken: other.refreshToken))
            }
        }
        let result: Result<Status, RepositoryError> = await repository.performPollingRequest(
            Endpoint(.get, "poll/\(key)", parameters: ["ready_after": 1]))
        guard case .unauthenticatedSession? = result.failure else {
            Issue.record("expected .unauthenticatedSession, got \(String(describing: result))")
            return
        }
        let record: Record = try await repository.performRequest(Endpoint<Record>.get("test/poll/\(key)").withoutSession()).get()
        #expect(record.attempts == 1)
        #expect(record.requests.first?.headers["Authorization"] == "Bearer \(login.token)")
    }

    @Test("each poll is a request of its own: an id from its context (an Idempotency-Key, a request id) differs per poll")
    func eachPollHasItsOwnID() async throws {
        let key = UUID().uuidString
        let servers = try TestServers.require()
        let repository = TestAPI.Repository(
            configuration: try TestServers.configuration(servers.apiURL, secondsBetweenPolls: 0.01), interceptors: [RequestID()])
        let status: Status = try await repository.performPollingRequest(
            Endpoint(.get, "poll/\(key)", parameters: ["ready_after": 2]).withoutSession()
        ).get()
        #expect(status.attempts == 3)
        let record: Record = try await repository.performRequest(Endpoint<Record>.get("test/poll/\(key)").withoutSession()).get()
        let ids = record.requests.compactMap { request in request.headers.first { $0.key.lowercased() == "x-request-id" }?.value }
        #expect(ids.count == 3)
        #expect(Set(ids).count == 3)
    }

    @Test("202, 202, then 200: succeeds after exactly three requests, parameters and headers kept")
    func becomesReady() async throws {
        let key = UUID().uuidString
        let servers = try TestServers.require()
        let repository = TestAPI.Repository(
            configuration: try TestServers.configuration(servers.apiURL, secondsBetweenPolls: 0.05, maximumPollingRetries: 5))
        let started = ContinuousClock.now
        let status: Status = try await repository.performPollingRequest(
            Endpoint(.get, "poll/\(key)", parameters: ["ready_after": 2, "filter": "a b"], headers: ["X-Trace": "t-1"]).withoutSession()
        ).get()
        let elapsed = ContinuousClock.now - started
        #expect(status.status == "done")
        #expect(status.attempts == 3)
        let record: Record = try await repository.performRequest(Endpoint<Record>.get("test/poll/\(key)").withoutSession()).get()
        #expect(record.attempts == 3)
        for request in record.requests {
            #expect(request.args["ready_after"] == ["2"])
            #expect(request.args["filter"] == ["a b"])
            #expect(request.headers.first { $0.key.lowercased() == "x-trace" }?.value == "t-1")
        }
        // Two waits of 50 ms happened before the re-sends.
        #expect(elapsed >= .milliseconds(100))
    }

    @Test("always 202: .pollingExhausted with the last 202 after exactly 1 + maximumPollingRetries requests")
    func exhausted() async throws {
        let key = UUID().uuidString
        let servers = try TestServers.require()
        let repository = TestAPI.Repository(
            configuration: try TestServers.configuration(servers.apiURL, secondsBetweenPolls: 0.01, maximumPollingRetries: 3))
        let result: Result<Status, RepositoryError> = await repository.performPollingRequest(
            Endpoint(.post, "poll/\(key)", parameters: ["ready_after": 100], encoding: .query).withoutSession()
                .retrying(RetryPolicy(retryableMethods: [.post])))
        guard case .pollingExhausted(let attempts, let context)? = result.failure else {
            Issue.record("expected .pollingExhausted, got \(String(describing: result.failure))")
            return
        }
        #expect(attempts == 4)
        #expect(context.statusCode == 202)
        #expect(context.response?.json?["attempts"] == 4)
        let record: Record = try await repository.performRequest(Endpoint<Record>.get("test/poll/\(key)").withoutSession()).get()
        #expect(record.attempts == 4)
        #expect(record.requests.allSatisfy { $0.method == "POST" })
    }

    @Test("a streamed body (read once) is refused before the first poll: the server never sees the job")
    func streamedBodyRefused() async throws {
        let key = UUID().uuidString
        let servers = try TestServers.require()
        let repository = TestAPI.Repository(configuration: try TestServers.configuration(servers.apiURL, secondsBetweenPolls: 0.01))
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("job".utf8))
            continuation.finish()
        }
        let result = await repository.performPollingRequest(
            Endpoint<Void>.upload(.post, "poll/\(key)", body: .stream(chunks), query: ["ready_after": 1]).withoutSession()
                .retrying(RetryPolicy(retryableMethods: [.post])))
        guard case .invalidRequest(let reason, _)? = result.failure else {
            Issue.record("expected .invalidRequest, got \(String(describing: result.failure))")
            return
        }
        #expect(reason.contains("stream"))
        let record: Record = try await repository.performRequest(Endpoint<Record>.get("test/poll/\(key)").withoutSession()).get()
        #expect(record.attempts == 0)
    }

    @Test("a Void polling request ends on the first non-202")
    func voidPolling() async throws {
        let key = UUID().uuidString
        let servers = try TestServers.require()
        let repository = TestAPI.Repository(configuration: try TestServers.configuration(servers.apiURL, secondsBetweenPolls: 0.01))
        let result = await repository.performPollingRequest(
            Endpoint<Void>(.get, "poll/\(key)", parameters: ["ready_after": 1]).withoutSession())
        #expect(throws: Never.self) { try result.get() }
    }
}

/// Names each request by its context's id, as a server that deduplicates by request id sees it.
private struct RequestID: Interceptor {
    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        var request = request
        request.headers["X-Request-ID"] = context.id.uuidString
        return try await next(request)
    }
}

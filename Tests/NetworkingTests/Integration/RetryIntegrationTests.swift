import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// Retries against the test API's `/flaky/<key>` (fails N times, then answers 200) and `/drop`.
/// The clock is a `TestClock`: waits are recorded, not slept.
@Suite("Retry end to end")
struct RetryIntegrationTests {
    struct Flaky: Decodable, Sendable {
        let attempts: Int
    }

    func repository(_ policy: RetryPolicy = RetryPolicy(random: { 1 }), clock: TestClock) throws -> TestAPI.Repository {
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL, timeout: 20)
        configuration.retryPolicy = policy
        configuration.clock = clock.networkingClock
        return TestAPI.Repository(configuration: configuration)
    }

    func attempts(_ key: String, _ repository: TestAPI.Repository) async throws -> Int {
        let history: Flaky = try await repository.performAuthenticationRequest(.get("test/flaky/\(key)")).get()
        return history.attempts
    }

    @Test("two 503s then 200: a GET succeeds on the third attempt, after exponential waits")
    func recovers() async throws {
        let clock = TestClock(start: Date())
        let repository = try repository(clock: clock)
        let key = UUID().uuidString
        let result: Flaky = try await repository.performAuthenticationRequest(
            .get("flaky/\(key)", parameters: ["failures": 2, "status": 503])
        ).get()
        #expect(result.attempts == 3)
        #expect(try await attempts(key, repository) == 3)
        #expect(clock.sleeps == [.milliseconds(500), .milliseconds(1000)])
    }

    @Test("a model that does not match the answer of a retried call fails with the retries counted")
    func decodingFailureAfterRetries() async throws {
        struct Named: Decodable, Sendable { let name: String }
        let repository = try repository(clock: TestClock(start: Date()))
        let result: Result<Named, RepositoryError> = await repository.performAuthenticationRequest(
            .get("flaky/\(UUID().uuidString)", parameters: ["failures": 1, "status": 503]))
        guard case .decodeError(let failure)? = result.failure else {
            Issue.record("expected decodeError, got \(result)")
            return
        }
        #expect(failure.context.attempts == 2)
        #expect(result.failure?.context?.attempts == 2)
    }

    @Test("a retry that comes after a logout and another login is never sent with the next user's token")
    func retryAcrossSessions() async throws {
        // Given: a logged-in session, and an account switch just before the second attempt
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL, timeout: 20)
        configuration.retryPolicy = RetryPolicy(random: { 1 })
        configuration.clock = TestClock(start: Date()).networkingClock
        let anonymous = TestAPI.Repository(configuration: configuration)
        let login = try await anonymous.login().get()
        let session = SessionManager<TestAPI.User>()
        try session.login(user: login.user, token: login.token)
        let repository = TestAPI.Repository(
            configuration: configuration, sessionManager: session,
            interceptors: [AccountSwitch(session: session, next: login.user)])
        // When: the first attempt is answered 503
        let key = UUID().uuidString
        let result: Result<Flaky, RepositoryError> = await repository.performRequest(
            .get("flaky/\(key)", parameters: ["failures": 1, "status": 503]))
        // Then: the retry was not sent (even for the same user: it is another session)
        guard case .unauthenticatedSession? = result.failure else {
            Issue.record("expected unauthenticatedSession, got \(result)")
            return
        }
        #expect(try await attempts(key, anonymous) == 1)
        #expect(session.sessionToken == "bob-token")
    }

    @Test("Retry-After in seconds is honoured, for 503 and 429")
    func retryAfterSeconds() async throws {
        for status in [503, 429] {
            let clock = TestClock(start: Date())
            let repository = try repository(clock: clock)
            let result: Flaky = try await repository.performAuthenticationRequest(
                .get("flaky/\(UUID().uuidString)", parameters: ["failures": 2, "status": status, "retry_after": 7])
            ).get()
            #expect(result.attempts == 3)
            #expect(clock.sleeps == [.seconds(7), .seconds(7)])
        }
    }

    @Test("a server's absurd Retry-After, with no limit configured, stops the retries (the 503 comes back at once), never a crash")
    func hugeRetryAfter() async throws {
        let clock = TestClock(start: Date())
        var policy = RetryPolicy(random: { 1 })
        policy.maximumRetryAfter = .infinity
        let repository = try repository(policy, clock: clock)
        let result = await repository.performAuthenticationRequest(
            Endpoint<Flaky>.get("flaky/\(UUID().uuidString)", parameters: ["failures": 1, "retry_after": "9000000000000000000"]))
        #expect(result.failure?.statusCode == 503 && result.failure?.context?.attempts == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test(
        "Retry-After as an HTTP date is honoured, counted from the response's Date: a device clock ten minutes off waits the same",
        arguments: [0.0, 600.0, -600.0])
    func retryAfterDate(skew: TimeInterval) async throws {
        let clock = TestClock(start: Date() + skew)
        let repository = try repository(clock: clock)
        let result: Flaky = try await repository.performAuthenticationRequest(
            .get("flaky/\(UUID().uuidString)", parameters: ["failures": 1, "retry_after_date": 20])
        ).get()
        #expect(result.attempts == 2)
        let wait = try #require(clock.sleeps.first)
        #expect(wait >= .seconds(18) && wait <= .seconds(21), "\(wait)")
    }

    @Test("retries run out: the last 503 is returned, saying how many attempts were made")
    func exhausted() async throws {
        let clock = TestClock(start: Date())
        let repository = try repository(clock: clock)
        let key = UUID().uuidString
        let result = await repository.performAuthenticationRequest(
            Endpoint<Void>.get("flaky/\(key)", parameters: ["failures": 10, "status": 502]))
        guard case .requestError(let context)? = result.failure else {
            Issue.record("expected .requestError, got \(String(describing: result.failure))")
            return
        }
        #expect(context.attempts == 3)
        #expect(context.statusCode == 502)
        #expect(context.response?.json?["attempt"] == 3)
        #expect(result.failure?.localizedDescription.contains("after 3 attempts") == true)
        #expect(try await attempts(key, repository) == 3)
    }

    @Test("POST is not retried by default, and is when opted in")
    func postOptIn() async throws {
        let clock = TestClock(start: Date())
        let defaultPolicy = try repository(clock: clock)
        let key = UUID().uuidString
        let once = await defaultPolicy.performAuthenticationRequest(
            Endpoint<Void>(.post, "flaky/\(key)", query: ["failures": 1]))
        #expect(once.failure?.context?.attempts == 1)
        #expect(try await attempts(key, defaultPolicy) == 1)

        var policy = RetryPolicy(random: { 1 })
        policy.retryableMethods.insert(.post)
        let optedIn = try repository(policy, clock: clock)
        let retried = await optedIn.performAuthenticationRequest(
            Endpoint<Void>(.post, "flaky/\(UUID().uuidString)", query: ["failures": 1]))
        #expect(throws: Never.self) { try retried.get() }
    }

    @Test("a connection dropped mid-body is retried, then reported with the attempt count")
    func droppedConnection() async throws {
        let clock = TestClock(start: Date())
        let repository = try repository(clock: clock)
        let result = await repository.performAuthenticationRequest(Endpoint<Void>.get("drop"))
        guard case .noNetworkConnection(.connectionLost, let context)? = result.failure else {
            Issue.record("expected connection lost, got \(String(describing: result.failure))")
            return
        }
        #expect(context.attempts == 3)
        #expect(clock.sleeps.count == 2)
    }

    @Test("a 404 is not retried")
    func notRetried() async throws {
        let clock = TestClock(start: Date())
        let repository = try repository(clock: clock)
        let result = await repository.performAuthenticationRequest(Endpoint<Void>.get("status/404"))
        #expect(result.failure?.context?.attempts == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test("cancelling during a backoff wait ends the call at once with .cancelled")
    func cancelDuringBackoff() async throws {
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL)
        configuration.retryPolicy = .default
        let repository = TestAPI.Repository(configuration: configuration)
        let key = UUID().uuidString
        let task = Task {
            await repository.performAuthenticationRequest(
                Endpoint<Void>.get("flaky/\(key)", parameters: ["failures": 5, "retry_after": 30]))
        }
        // Cancel once the first attempt was answered, during the 30-second wait.
        while try await attempts(key, repository) == 0 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(100))
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let result = await task.value
        // Half the 30-second wait, however busy the machine.
        #expect(ContinuousClock.now - cancelledAt < .seconds(15))
        guard case .cancelled(let context?)? = result.failure else {
            Issue.record("expected .cancelled, got \(String(describing: result.failure))")
            return
        }
        #expect(context.statusCode == 503)
    }

    @Test("a blocking call whose wait runs out during a retry's wait is a timeout carrying the last answer, not a connectivity failure")
    func blockingWaitEndsBetweenAttempts() async throws {
        let servers = try TestServers.require()
        // A busy machine may keep the first answer past the wait (the start of a whole test run
        // can hold every task up for half a minute): then the wait ran out before an answer (a
        // plain timeout), and the scenario is tried again.
        for _ in 0..<8 {
            // The retry's wait lasts until the test moves the clock: it outlasts the blocking wait.
            let clock = TestClock(start: Date(), mode: .manual)
            var configuration = try TestServers.configuration(servers.apiURL)
            configuration.retryPolicy = .default
            configuration.clock = clock.networkingClock
            let repository = TestAPI.Repository(configuration: configuration)
            let result = await onPlainThread {
                repository.performBlockingRequest(
                    Endpoint<Void>.get("flaky/\(UUID().uuidString)", parameters: ["failures": 5, "retry_after": 1]).withoutSession(),
                    maximumWait: 8)
            }
            // (The first answer may also come just after the wait ran out, before `sleeps` is read.)
            guard !clock.sleeps.isEmpty, result.failure?.context?.response != nil else { continue }
            guard case .timeout(let context)? = result.failure else {
                Issue.record("expected .timeout, got \(result)")
                return
            }
            #expect(context.statusCode == 503)
            #expect(result.failure?.isConnectivityFailure == false)
            let description = result.failure?.description ?? ""
            #expect(description.contains("ran out of time waiting to try again: its last answer was status 503"), "\(description)")
            #expect(!description.contains("before a complete response arrived"), "\(description)")
            // A transport's timeout, with no answer, is still a connectivity failure.
            #expect(RepositoryError.timeout(ErrorContext(request: context.request)).isConnectivityFailure)
            return
        }
        Issue.record("the first answer never came within the blocking wait")
    }

    // MARK: - A policy of the endpoint's own

    @Test("an endpoint's own policy retries under a configuration that never does, with its own waits")
    func endpointPolicyUnderNever() async throws {
        let clock = TestClock(start: Date())
        let repository = try repository(.never, clock: clock)
        let key = UUID().uuidString
        let result: Flaky = try await repository.performAuthenticationRequest(
            Endpoint<Flaky>.get("flaky/\(key)", parameters: ["failures": 2]).retrying(
                RetryPolicy(baseDelay: 0.25, random: { 1 }))
        ).get()
        #expect(result.attempts == 3)
        #expect(clock.sleeps == [.milliseconds(250), .milliseconds(500)])
        // The configuration's policy still applies to the other calls.
        let other = await repository.performAuthenticationRequest(
            Endpoint<Void>.get("flaky/\(UUID().uuidString)", parameters: ["failures": 1]))
        #expect(other.failure?.context?.attempts == 1)
    }

    @Test("an endpoint sent with .never fails at its first 503 under a configuration that retries")
    func endpointNever() async throws {
        let clock = TestClock(start: Date())
        let repository = try repository(clock: clock)
        let key = UUID().uuidString
        let result = await repository.performAuthenticationRequest(
            Endpoint<Void>.get("flaky/\(key)", parameters: ["failures": 1]).retrying(.never))
        guard case .requestError(let context)? = result.failure else {
            Issue.record("expected the 503, got \(result)")
            return
        }
        #expect(context.statusCode == 503)
        #expect(context.attempts == 1)
        #expect(clock.sleeps.isEmpty)
        #expect(try await attempts(key, repository) == 1)
    }

    @Test("an endpoint's unusable policy fails the call before anything is sent")
    func endpointPolicyUnusable() async throws {
        let repository = try repository(.never, clock: TestClock(start: Date()))
        let key = UUID().uuidString
        for policy in [RetryPolicy(maximumAttempts: 0), RetryPolicy(baseDelay: -1)] {
            let result = await repository.performAuthenticationRequest(
                Endpoint<Void>.get("flaky/\(key)").retrying(policy))
            guard case .invalidRequest(let reason, _)? = result.failure else {
                Issue.record("expected invalidRequest, got \(result)")
                continue
            }
            #expect(reason.hasPrefix("the call's retryPolicy: "))
        }
        #expect(try await attempts(key, repository) == 0)
    }

    @Test("a request sent through the seam retries under the policy in its context's options")
    func seamPolicy() async throws {
        let clock = TestClock(start: Date())
        let repository = try repository(.never, clock: clock)
        let key = UUID().uuidString
        let request = try repository.makeRequest(for: Endpoint<Void>.get("flaky/\(key)", parameters: ["failures": 1]))
        var options = RequestOptions()
        options[RetryPolicyKey.self] = RetryPolicy(random: { 0 })
        let response = try await repository.send(request, context: RequestContext(requiresSession: false, options: options)).get()
        #expect(response.statusCode == 200)
        #expect(try await attempts(key, repository) == 2)
    }

    @Test("a route file's retry key: an object retries a POST with its own waits, false never retries, and a call's own policy wins")
    func routeFilePolicy() async throws {
        let clock = TestClock(start: Date())
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL, timeout: 20)
        configuration.retryPolicy = RetryPolicy(random: { 1 })
        configuration.clock = clock.networkingClock
        configuration.routes = try RouteTable(
            json: Data(
                #"""
                {
                  "note": { "method": "POST", "path": "flaky/:key?failures=2",
                            "retry": { "retryableMethods": ["POST"], "baseDelay": 0.25, "maximumDelay": 0.25 } },
                  "fast": { "path": "flaky/:key?failures=1", "retry": false }
                }
                """#.utf8))
        let repository = TestAPI.Repository(configuration: configuration)
        let key = UUID().uuidString
        let note: Flaky = try await repository.performAuthenticationRequest(.route("note", pathVariables: ["key": key])).get()
        #expect(note.attempts == 3)
        #expect(clock.sleeps.count == 2 && clock.sleeps.allSatisfy { $0 <= .milliseconds(250) }, "\(clock.sleeps)")
        let fastKey = UUID().uuidString
        let fast = await repository.performAuthenticationRequest(Endpoint<Void>.route("fast", pathVariables: ["key": fastKey]))
        #expect(fast.failure?.statusCode == 503)
        #expect(try await attempts(fastKey, repository) == 1)
        let ownKey = UUID().uuidString
        let own = await repository.performAuthenticationRequest(
            Endpoint<Void>.route("fast", pathVariables: ["key": ownKey]).retrying(RetryPolicy(random: { 0 })))
        #expect(own.failure == nil)
        #expect(try await attempts(ownKey, repository) == 2)
    }

    // MARK: - Connections that could not be opened

    @Test("with retriesConnectionFailures, a GET to a server that is down is sent again after the wait, and succeeds once it is back")
    func serverComingBack() async throws {
        let servers = try TestServers.require()
        let api = try #require(URLComponents(string: servers.apiURL))
        let proxy = try OutageProxy(upstreamPort: api.port ?? 0)
        proxy.goDown()
        let clock = TestClock(start: Date())
        var configuration = try TestServers.configuration("http://127.0.0.1:\(proxy.port)\(api.path)", timeout: 20)
        configuration.retryPolicy = RetryPolicy(retriesConnectionFailures: true, random: { 1 })
        configuration.clock = clock.networkingClock
        // The server comes back during the first wait.
        let repository = TestAPI.Repository(configuration: configuration, interceptors: [Restart(proxy: proxy)])
        let key = UUID().uuidString
        let result: Flaky = try await repository.performAuthenticationRequest(
            .get("flaky/\(key)", parameters: ["failures": 0])
        ).get()
        #expect(result.attempts == 1)
        #expect(clock.sleeps == [.milliseconds(500)])

        // A POST is not retried (its method is not retryable), nor anything by default.
        proxy.goDown()
        let post = await repository.performAuthenticationRequest(Endpoint<Void>(.post, "flaky/\(key)"))
        #expect(post.failure?.context?.attempts == 1)
        let strict = RetryPolicy(random: { 1 })
        let refused = await repository.performAuthenticationRequest(Endpoint<Void>.get("flaky/\(key)").retrying(strict))
        guard case .noNetworkConnection(.connectionRefused, let context)? = refused.failure else {
            Issue.record("expected a refused connection, got \(refused)")
            return
        }
        #expect(context.attempts == 1)
        #expect(clock.sleeps.count == 1)
        #expect(try await attempts(key, repository) == 1)
    }

    @Test("with retriesConnectionFailures, an unknown host is tried as many times as the policy allows, and says so")
    func unknownHostRetried() async throws {
        let clock = TestClock(start: Date())
        var configuration = try NetworkingConfiguration(baseURL: "http://does-not-exist.invalid/api/v1")
        configuration.timeout = 10
        configuration.retryPolicy = RetryPolicy(retriesConnectionFailures: true, random: { 0 })
        configuration.clock = clock.networkingClock
        let result = await TestAPI.Repository(configuration: configuration).performRequest(Endpoint<Void>.get("health"))
        guard case .noNetworkConnection(.hostNotFound, let context)? = result.failure else {
            Issue.record("expected host not found, got \(result)")
            return
        }
        #expect(context.attempts == 3)
        #expect(clock.sleeps.count == 2)
    }
}

/// Brings a proxy that is down back up before the second attempt: a server restarting while the
/// client waits to try again.
private struct Restart: Interceptor {
    let proxy: OutageProxy
    var position: InterceptorPosition { .beforeSigning }

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        if context.attempt == 2, !proxy.isUp {
            do { try proxy.comeUp() } catch { throw .invalidRequest(reason: "\(error)", request: request.summary) }
        }
        return try await next(request)
    }
}

import Foundation
import Networking
import Synchronization
import Testing

/// Token refresh and replay against the test API's `/auth/refresh` (which counts its calls).
/// Serialized, so that the refresh counter changes only because of the test that reads it.
@Suite("Token refresh end to end", .serialized)
struct RefreshIntegrationTests {
    /// A logged-in session whose manager refreshes through the test API.
    func refreshingSession(
        refresher: (any TokenRefresher)? = nil, window: RefreshWindow = RefreshWindow(), timeout: TimeInterval = 60
    ) async throws -> (TestAPI.Repository, SessionManager<TestAPI.User>, TestAPI.Login) {
        let servers = try TestServers.require()
        let configuration = try TestServers.configuration(servers.apiURL)
        let anonymous = TestAPI.Repository(configuration: configuration)
        let session = SessionManager<TestAPI.User>(
            refresher: refresher ?? anonymous, refreshPolicy: RefreshPolicy(window: window, timeout: timeout))
        let login = try await anonymous.login().get()
        try session.login(user: login.user, credential: Credential(accessToken: login.token, refreshToken: login.refreshToken))
        return (TestAPI.Repository(configuration: configuration, sessionManager: session), session, login)
    }

    func fetchConcurrently(_ repository: TestAPI.Repository, count: Int) async -> [Result<TestAPI.User, RepositoryError>] {
        await withTaskGroup(of: Result<TestAPI.User, RepositoryError>.self) { group in
            for _ in 0..<count { group.addTask { await repository.fetchCurrentUser() } }
            var results: [Result<TestAPI.User, RepositoryError>] = []
            for await result in group { results.append(result) }
            return results
        }
    }

    @Test("50 concurrent requests with a token the server expired: 1 refresh, 50 successes")
    func fiftyConcurrent401s() async throws {
        // Given a session whose token the server no longer accepts
        let (repository, session, login) = try await refreshingSession()
        _ = await repository.expire(token: login.token)
        let before = try await repository.counters().refreshCalls
        // When 50 requests run at once
        let results = await fetchConcurrently(repository, count: 50)
        // Then one refresh served them all, and every request succeeded after its replay
        let after = try await repository.counters().refreshCalls
        #expect(after - before == 1)
        #expect(results.filter { (try? $0.get()) == login.user }.count == 50)
        #expect(session.isLoggedIn)
        #expect(session.sessionToken != login.token)
    }

    @Test("a credential known to be expired is refreshed once before sending")
    func knownExpired() async throws {
        let (repository, session, login) = try await refreshingSession()
        try session.update(
            credential: Credential(
                accessToken: login.token, refreshToken: login.refreshToken, expiresAt: Date().addingTimeInterval(-60)))
        let before = try await repository.counters().refreshCalls
        let results = await fetchConcurrently(repository, count: 20)
        #expect(try await repository.counters().refreshCalls - before == 1)
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        #expect(session.credential?.expiresAt == nil)
    }

    @Test("a refresh the server rejects fails every waiter clearly and expires the session")
    func refreshRejected() async throws {
        // A slow refresh, so that every request's 401 arrives while it runs.
        let servers = try TestServers.require()
        let slow = SlowRefresher(repository: TestAPI.Repository(configuration: try TestServers.configuration(servers.apiURL)), delay: 0.5)
        let (repository, session, login) = try await refreshingSession(refresher: slow)
        try session.update(credential: Credential(accessToken: login.token, refreshToken: "not-a-refresh-token"))
        _ = await repository.expire(token: login.token)
        let events = session.events()
        let before = try await repository.counters().refreshCalls
        let results = await fetchConcurrently(repository, count: 10)
        #expect(try await repository.counters().refreshCalls - before == 1)
        for result in results {
            // On a busy machine a call may start only after the refresh was rejected: the session
            // is over by then, and it is not sent.
            if case .unauthenticatedSession(nil)? = result.failure { continue }
            guard case .sessionRefreshFailed(.refresherFailed(let cause), let context?)? = result.failure else {
                Issue.record("expected .sessionRefreshFailed, got \(String(describing: result.failure))")
                continue
            }
            #expect(cause.statusCode == 401)
            #expect(context.request.url.path.hasSuffix("users/me"))
            // The call's own 401, which started the refresh, is kept; a call that came while the
            // refresh ran waited for it unsent.
            #expect(context.statusCode == 401 || context.response == nil, "\(context)")
        }
        #expect(!session.isLoggedIn)
        var sawExpired = false
        for await event in events {
            if case .expired = event {
                sawExpired = true
                break
            }
        }
        #expect(sawExpired)
        // The next call fails at once, without a network round trip.
        guard case .unauthenticatedSession(nil)? = await repository.fetchCurrentUser().failure else {
            Issue.record("expected .unauthenticatedSession(nil)")
            return
        }
    }

    @Test("a refreshed token the server rejects too ends the session after one refresh and one replay")
    func replayRejected() async throws {
        let calls = Mutex(0)
        let bogus = ClosureRefresher { _ in
            calls.withLock { $0 += 1 }
            return .success(Credential(accessToken: "rejected-\(UUID())", refreshToken: "r"))
        }
        let (repository, session, login) = try await refreshingSession(refresher: bogus)
        _ = await repository.expire(token: login.token)
        let result = await repository.fetchCurrentUser()
        guard case .unauthenticatedSession(let context?)? = result.failure else {
            Issue.record("expected .unauthenticatedSession, got \(String(describing: result.failure))")
            return
        }
        #expect(context.statusCode == 401)
        #expect(calls.withLock { $0 } == 1)
        #expect(!session.isLoggedIn)
    }

    @Test("a refresher that keeps returning tokens the server has expired: refreshed, sent, replayed once, then the session ends")
    func refreshLoop() async throws {
        let calls = Mutex(0)
        let (repository, session, login) = try await refreshingSession(
            refresher: ClosureRefresher { credential in
                calls.withLock { $0 += 1 }
                return .success(Credential(accessToken: credential.accessToken, refreshToken: "r", expiresAt: .distantPast))
            },
            window: RefreshWindow(maximumRefreshes: 3, interval: 60))
        _ = await repository.expire(token: login.token)
        try session.update(credential: Credential(accessToken: login.token, refreshToken: "r", expiresAt: .distantPast))
        let result = await repository.fetchCurrentUser()
        // One refresh before sending (the token was known to be expired), one after the 401; the
        // replay's 401 ends the session. A token that arrives expired is sent, not refreshed again.
        guard case .unauthenticatedSession(let context?)? = result.failure else {
            Issue.record("expected .unauthenticatedSession, got \(String(describing: result.failure))")
            return
        }
        #expect(context.statusCode == 401)
        #expect(context.request.url.path.hasSuffix("users/me"))
        #expect(calls.withLock { $0 } == 2)
        #expect(!session.isLoggedIn)
    }

    @Test("a refresh endpoint answering 503: one refresh per cool-down, every request fails with the 503, the session stays")
    func refreshCoolDown() async throws {
        let servers = try TestServers.require()
        let configuration = try TestServers.configuration(servers.apiURL)
        let anonymous = TestAPI.Repository(configuration: configuration)
        // Down (its refresh endpoint answers 503) until told otherwise; then the test API's refresh.
        let state = Mutex((down: true, calls: 0))
        let refresher = ClosureRefresher { credential in
            let down = state.withLock { state in
                state.calls += 1
                return state.down
            }
            guard down else { return await anonymous.refreshCredential(credential) }
            let refreshed: Result<TestAPI.Login, RepositoryError> = await anonymous.performAuthenticationRequest(.post("status/503"))
            return refreshed.map { Credential(accessToken: $0.token, refreshToken: $0.refreshToken) }
        }
        let session = SessionManager<TestAPI.User>(refresher: refresher, refreshPolicy: RefreshPolicy(failureCoolDown: 60))
        let login = try await anonymous.login().get()
        let credential = Credential(accessToken: login.token, refreshToken: login.refreshToken)
        try session.login(user: login.user, credential: credential)
        let repository = TestAPI.Repository(configuration: configuration, sessionManager: session)
        _ = await repository.expire(token: login.token)
        // When: four requests in a row are answered 401 within the cool-down
        for attempt in 1...4 {
            guard case .sessionRefreshFailed(.refresherFailed(let cause), let context?)? = await repository.fetchCurrentUser().failure
            else {
                Issue.record("attempt \(attempt): expected the refresh's 503")
                continue
            }
            #expect(cause.statusCode == 503)
            #expect(context.statusCode == 401)
        }
        // Then: the refresh endpoint was called once, and the session is kept
        #expect(state.withLock { $0.calls } == 1)
        #expect(session.isLoggedIn)
        // When: the endpoint is back and the app hands the credential in again (ending the cool-down)
        state.withLock { $0.down = false }
        try session.update(credential: credential)
        // Then: the next 401 refreshes at once, and the request succeeds
        #expect((try? await repository.fetchCurrentUser().get()) == login.user)
        #expect(state.withLock { $0.calls } == 2)
    }

    @Test("a refresh slower than the refresh timeout fails its waiters, keeps the session, and its late token is still taken")
    func refreshTimeout() async throws {
        let servers = try TestServers.require()
        let slow = SlowRefresher(repository: TestAPI.Repository(configuration: try TestServers.configuration(servers.apiURL)), delay: 1.5)
        let (repository, session, login) = try await refreshingSession(refresher: slow, timeout: 0.3)
        _ = await repository.expire(token: login.token)
        // When: the refresh takes 1.5 s, the waiters 0.3 s at most
        let started = ContinuousClock.now
        let results = await fetchConcurrently(repository, count: 3)
        // Then
        #expect(ContinuousClock.now - started < .seconds(1.4))
        for result in results {
            guard case .sessionRefreshFailed(.timedOut(after: 0.3), _)? = result.failure else {
                Issue.record("expected a refresh timeout, got \(result)")
                continue
            }
            #expect(result.failure?.isConnectivityFailure == true)
        }
        #expect(session.isLoggedIn)
        // The refresh's answer, when it comes, is taken: the server has used up the old refresh token.
        let deadline = ContinuousClock.now + .seconds(10)
        while session.sessionToken == login.token, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(session.sessionToken != login.token)
        #expect((try? await repository.fetchCurrentUser().get()) == login.user)
    }

    @Test("cancelling a request that waits for a refresh ends it at once; the others still succeed")
    func cancelWhileWaiting() async throws {
        let servers = try TestServers.require()
        let slow = SlowRefresher(
            repository: TestAPI.Repository(configuration: try TestServers.configuration(servers.apiURL, timeout: 60)), delay: 20)
        let (repository, _, login) = try await refreshingSession(refresher: slow)
        _ = await repository.expire(token: login.token)
        let waiting = Task { await repository.fetchCurrentUser() }
        let others = Task { await fetchConcurrently(repository, count: 5) }
        try await Task.sleep(for: .milliseconds(300))
        let cancelledAt = ContinuousClock.now
        waiting.cancel()
        let cancelled = await waiting.value
        // Before the 20 s refresh ends (the others, waiting for it, are still waiting).
        #expect(ContinuousClock.now - cancelledAt < .seconds(19))
        guard case .cancelled? = cancelled.failure else {
            Issue.record("expected .cancelled, got \(String(describing: cancelled.failure))")
            return
        }
        #expect(await others.value.allSatisfy { (try? $0.get()) == login.user })
    }
}

/// A refresher made of a closure.
struct ClosureRefresher: TokenRefresher {
    let refresh: @Sendable (Credential) async -> Result<Credential, RepositoryError>

    func refreshCredential(_ credential: Credential) async -> Result<Credential, RepositoryError> {
        await refresh(credential)
    }
}

/// Refreshes through the test API after a server-side delay.
struct SlowRefresher: TokenRefresher {
    let repository: TestAPI.Repository
    let delay: Double

    func refreshCredential(_ credential: Credential) async -> Result<Credential, RepositoryError> {
        let refreshed: Result<TestAPI.Login, RepositoryError> = await repository.performAuthenticationRequest(
            Endpoint(.post, "auth/refresh", parameters: ["refresh_token": credential.refreshToken ?? ""], query: ["delay": delay]))
        return refreshed.map { Credential(accessToken: $0.token, refreshToken: $0.refreshToken) }
    }
}

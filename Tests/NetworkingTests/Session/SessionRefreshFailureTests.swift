import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

/// Refresh failures the server did not reject: each must keep the session.
private let failuresThatKeepTheSession: [RepositoryError] = [
    .noNetworkConnection(.notConnected, refreshContext()),
    .timeout(refreshContext()),
    .requestError(refreshContext(status: 503)),
    .requestError(refreshContext(status: 500)),
    .requestError(refreshContext(status: 429)),
    .tlsError(.untrustedCertificate("issued by a captive portal"), refreshContext()),
    .jsonError(
        DecodingFailure(
            kind: .malformedJSON, entityType: "Credential", context: refreshContext(status: 200), codingPath: "",
            reason: "not JSON", bodyExcerpt: "<html>Sign in to the Wi-Fi</html>")),
    .invalidResponse(reason: "not HTTP", context: refreshContext()),
    .cancelled(refreshContext()),
]

/// Refresh failures that are the server rejecting the refresh: each must end the session.
private let refreshRejections: [RepositoryError] = [
    .requestError(refreshContext(status: 400)),
    .requestError(refreshContext(status: 401)),
    .requestError(refreshContext(status: 403)),
    .authenticationFailed(refreshContext(status: 401)),
    .unauthenticatedSession(refreshContext(status: 401)),
    // A refresher that says so without a response (an SDK's own check of its refresh token).
    .unauthenticatedSession(nil),
]

/// Waits, polling every 5 ms for 10 seconds at most, until `condition` holds (what a refresher
/// running in its own task has done by then).
private func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
}

/// A credential whose access token expired a minute ago.
private let expiredCredential = Credential(accessToken: "t1", refreshToken: "r1", expiresAt: Date().addingTimeInterval(-60))

@Suite("SessionManager after a failed refresh", .timeLimit(.minutes(1)))
struct SessionRefreshFailureTests {
    @Test(
        "Offline with an expired token: 8 failed refreshes in a row (no cool-down: no server was reached) leave the session and the store alone"
    )
    func offlineWithExpiredToken() async throws {
        // Given: an expired token, and a refresher that cannot reach the server
        let store = ScriptedCredentialStore()
        let (refresher, calls) = countingRefresher { _ in .failure(.noNetworkConnection(.notConnected, refreshContext())) }
        let clock = TestClock(start: Date())
        let manager = SessionManager<User>(store: store, refresher: refresher, clock: clock.networkingClock)
        try manager.login(user: ann, credential: expiredCredential)
        // When: more requests than the default window (5 refreshes per 30 s) allows refreshes,
        // at the same moment: the device may be back online by the next one
        for attempt in 1...8 {
            let outcome = await authorizing(manager)
            guard case .sessionRefreshFailed(.refresherFailed(.noNetworkConnection), nil)? = outcome.failure else {
                Issue.record("attempt \(attempt): expected the refresher's failure, got \(outcome)")
                continue
            }
        }
        // Then: each one tried a refresh, none ended the session
        manager.waitUntilStored()
        #expect(calls.all.count == 8)
        #expect(manager.isLoggedIn)
        #expect(manager.sessionToken == "t1")
        #expect(store.stored?.credential.accessToken == "t1")
    }

    @Test(
        "A refresh that fails without a rejection fails its waiters, keeps the session and the store, and is not counted",
        arguments: failuresThatKeepTheSession)
    func failureKeepsTheSession(error: RepositoryError) async throws {
        // Given
        let store = ScriptedCredentialStore()
        let (refresher, calls) = countingRefresher { _ in .failure(error) }
        let clock = TestClock(start: Date())
        let manager = SessionManager<User>(store: store, refresher: refresher, clock: clock.networkingClock)
        try manager.login(user: ann, credential: expiredCredential)
        // When: more requests than the window allows refreshes, a cool-down apart
        for attempt in 1...8 {
            let outcome = await authorizing(manager)
            guard case .sessionRefreshFailed(.refresherFailed, nil)? = outcome.failure else {
                Issue.record("attempt \(attempt): expected the refresher's failure, got \(outcome)")
                continue
            }
            clock.advance(by: 1)
        }
        // Then
        manager.waitUntilStored()
        #expect(calls.all.count == 8)
        #expect(manager.isLoggedIn)
        #expect(store.stored?.credential.accessToken == "t1")
    }

    @Test("A refresher that hangs fails its waiters after the timeout; what it returns later is taken, unless replaced meanwhile")
    func hangingRefresher() async throws {
        for replacedMeanwhile in [false, true] {
            // Given: a refresher that returns only when the test says so
            let (released, release) = AsyncStream.makeStream(of: Void.self)
            let returned = Recorder<Int>()
            let refresher = ClosureRefresher { _ in
                for await _ in released { break }
                returned.record(1)
                return .success(Credential(accessToken: "late", refreshToken: "r2"))
            }
            let store = ScriptedCredentialStore()
            let manager = SessionManager<User>(store: store, refresher: refresher, refreshPolicy: RefreshPolicy(timeout: 0.2))
            try manager.login(user: ann, credential: expiredCredential)
            // When
            let outcome = await authorizing(manager)
            // Then: the waiter fails, the session stays
            guard case .sessionRefreshFailed(.timedOut(after: 0.2), nil)? = outcome.failure else {
                Issue.record("expected a refresh timeout, got \(outcome)")
                return
            }
            #expect(
                outcome.failure?.description.contains(
                    "the refresh did not end within 0.2 seconds, and no other refresh of that credential starts until it returns") == true,
                "\(outcome)")
            #expect(manager.isLoggedIn)
            // The cool-down: the next request fails at once with the same error.
            guard case .sessionRefreshFailed(.timedOut, nil)? = await authorizing(manager).failure else {
                Issue.record("expected the cool-down's failure")
                return
            }
            if replacedMeanwhile { try manager.update(credential: Credential(accessToken: "manual", refreshToken: "r3")) }
            // When: the refresher returns after all
            release.yield()
            let expected = replacedMeanwhile ? "manual" : "late"
            try await waitUntil { !returned.all.isEmpty && manager.sessionToken == expected }
            try await Task.sleep(for: .milliseconds(100))
            manager.waitUntilStored()
            // Then: its credential is taken (and stored), but not over one given meanwhile
            #expect(manager.sessionToken == expected)
            #expect(store.stored?.credential.accessToken == expected)
        }
    }

    @Test("While a timed-out refresher has not returned, no other refresh of its token starts; once it fails, the next request refreshes")
    func noSecondRefreshWhileTheFirstHangs() async throws {
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let (refresher, calls) = countingRefresher { _ in .failure(.requestError(refreshContext(status: 503))) }
        let hanging = ClosureRefresher { credential in
            if calls.all.isEmpty {
                for await _ in released { break }
            }
            return await refresher.refreshCredential(credential)
        }
        // No cool-down: only the hanging refresher keeps a second refresh from starting.
        let manager = SessionManager<User>(refresher: hanging, refreshPolicy: RefreshPolicy(failureCoolDown: 0, timeout: 0.2))
        try manager.login(user: ann, credential: expiredCredential)
        guard case .sessionRefreshFailed(.timedOut, nil)? = await authorizing(manager).failure else {
            Issue.record("expected a refresh timeout")
            return
        }
        for _ in 0..<3 {
            guard case .sessionRefreshFailed(.timedOut, nil)? = await authorizing(manager).failure else {
                Issue.record("expected the timeout again, at once")
                return
            }
        }
        #expect(calls.all.isEmpty, "the hanging refresher is the only one called")
        // When: it fails after all
        release.yield()
        try await waitUntil { !calls.all.isEmpty }
        try await Task.sleep(for: .milliseconds(50))
        // Then: the next request refreshes again, and the session stays
        guard case .sessionRefreshFailed(.refresherFailed(let cause), nil)? = await authorizing(manager).failure else {
            Issue.record("expected the second refresh's own failure")
            return
        }
        #expect(cause.statusCode == 503)
        #expect(calls.all.count == 2)
        #expect(manager.isLoggedIn)
    }

    @Test(
        "update(credential:) during a refresh that hangs (no timeout) lets its waiter go on with the new credential; the refresh's result is ignored"
    )
    func updateDuringRefresh() async throws {
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let started = Recorder<Int>()
        let refresher = ClosureRefresher { _ in
            started.record(1)
            for await _ in released { break }
            return .success(Credential(accessToken: "late", refreshToken: "r2"))
        }
        let manager = SessionManager<User>(refresher: refresher, refreshPolicy: RefreshPolicy(timeout: 0))
        try manager.login(user: ann, credential: expiredCredential)
        let waiting = Task { await authorizing(manager) }
        try await waitUntil { !started.all.isEmpty }
        // When: the app puts a credential of its own in place
        try manager.update(credential: Credential(accessToken: "manual", refreshToken: "r3"))
        // Then: the waiter is signed with it at once, and the late result changes nothing
        let outcome = try #require(await waiting.value(within: .seconds(10)), "the waiter still waited for the abandoned refresh")
        #expect(try outcome.get()?.headerValue == "Bearer manual")
        release.yield()
        try await Task.sleep(for: .milliseconds(100))
        #expect(manager.sessionToken == "manual")
    }

    @Test("With expiresSessionWhenUnreachable, a refresh that reached no server ends the session, and so does one that timed out")
    func unreachableEndsTheSession() async throws {
        for timesOut in [false, true] {
            let (released, release) = AsyncStream.makeStream(of: Void.self)
            let refresher = ClosureRefresher { _ in
                if timesOut { for await _ in released { break } }
                return .failure(.noNetworkConnection(.notConnected, refreshContext()))
            }
            let store = ScriptedCredentialStore()
            let manager = SessionManager<User>(
                store: store, refresher: refresher,
                refreshPolicy: RefreshPolicy(expiresSessionWhenUnreachable: true, timeout: timesOut ? 0.2 : 60))
            try manager.login(user: ann, credential: expiredCredential)
            let outcome = await authorizing(manager)
            #expect(outcome.failure?.isConnectivityFailure == true, "\(outcome)")
            manager.waitUntilStored()
            #expect(!manager.isLoggedIn)
            #expect(store.stored == nil)
            release.yield()
        }
    }

    @Test("A timed-out refresher's late rejection ends the session and empties the store")
    func lateRejectionAfterTimeout() async throws {
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let refresher = ClosureRefresher { _ in
            for await _ in released { break }
            return .failure(.requestError(refreshContext(status: 400)))
        }
        let store = ScriptedCredentialStore()
        let manager = SessionManager<User>(store: store, refresher: refresher, refreshPolicy: RefreshPolicy(timeout: 0.2))
        try manager.login(user: ann, credential: expiredCredential)
        guard case .sessionRefreshFailed(.timedOut, nil)? = await authorizing(manager).failure else {
            Issue.record("expected a refresh timeout")
            return
        }
        #expect(manager.isLoggedIn)
        release.yield()
        try await waitUntil { !manager.isLoggedIn }
        manager.waitUntilStored()
        #expect(!manager.isLoggedIn)
        #expect(store.stored == nil)
    }

    @Test("A refresh the server rejects (400, 401, 403) fails its waiter and ends the session", arguments: refreshRejections)
    func rejectionEndsTheSession(error: RepositoryError) async throws {
        // Given
        let store = ScriptedCredentialStore()
        let refresher = ClosureRefresher { _ in .failure(error) }
        let manager = SessionManager<User>(store: store, refresher: refresher)
        try manager.login(user: ann, credential: expiredCredential)
        // When
        let outcome = await authorizing(manager)
        // Then: the waiter fails with the rejection, the session ends, and the next call finds nobody logged in
        guard case .sessionRefreshFailed(.refresherFailed(let cause), nil)? = outcome.failure else {
            Issue.record("expected the refresher's failure, got \(outcome)")
            return
        }
        #expect(cause.statusCode == error.statusCode)
        manager.waitUntilStored()
        #expect(!manager.isLoggedIn)
        #expect(store.stored == nil)
        let next = await authorizing(manager)
        guard case .success(nil) = next else {
            Issue.record("expected no authorization once the session ended, got \(next)")
            return
        }
    }

    @Test(
        "Requests answered 401 whose refresh gets 503 fail with the refresh's error, one refresh per cool-down; the session and the store stay"
    )
    func unavailableRefreshThroughRequests() async throws {
        // Given: a session whose token the server rejects, and a refresh endpoint that is down
        let store = ScriptedCredentialStore()
        let (refresher, calls) = countingRefresher { _ in .failure(.requestError(refreshContext(status: 503))) }
        let clock = TestClock(start: Date())
        let manager = SessionManager<User>(store: store, refresher: refresher, clock: clock.networkingClock)
        try manager.login(user: ann, credential: Credential(accessToken: "t1", refreshToken: "r1"))
        let transport = StubTransport(routes: [.status(.get, "books/1", 401, json: #"{"message": "expired"}"#)])
        let repository = TestRepository(configuration: try makeConfiguration(), sessionManager: manager, transport: transport)
        // When: more requests than the window allows refreshes
        for attempt in 1...8 {
            let result: Result<Book, RepositoryError> = await repository.performRequest(.get("books/1"))
            guard case .sessionRefreshFailed(.refresherFailed(let cause), let context?)? = result.failure else {
                Issue.record("attempt \(attempt): expected the refresh's failure, got \(result)")
                continue
            }
            #expect(cause.statusCode == 503)
            #expect(context.request.url.path.hasSuffix("books/1"))
            #expect(context.statusCode == 401)
            // Four requests within each cool-down (default 1 s).
            if attempt == 4 { clock.advance(by: 1) }
        }
        // Then: one refresh per cool-down, and the session is still there to try again
        manager.waitUntilStored()
        #expect(calls.all.count == 2)
        #expect(transport.requests.count == 8)
        #expect(manager.isLoggedIn)
        #expect(store.stored?.credential.accessToken == "t1")
    }

    @Test("A 401 from another origin a redirect led to neither refreshes nor ends the session")
    func crossOriginUnauthorized() async throws {
        let (refresher, calls) = countingRefresher { credential in .success(credential) }
        let manager = SessionManager<User>(refresher: refresher)
        try manager.login(user: ann, credential: Credential(accessToken: "t1", refreshToken: "r1"))
        let cdn = try #require(URL(string: "https://cdn.other.example/files/1"))
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "books/1") { _ throws(TransportError) in TransportResponse(statusCode: 401, url: cdn) }
        ])
        let repository = TestRepository(configuration: try makeConfiguration(), sessionManager: manager, transport: transport)
        let result: Result<Book, RepositoryError> = await repository.performRequest(.get("books/1"))
        guard case .authenticationFailed? = result.failure else {
            Issue.record("expected .authenticationFailed, got \(result)")
            return
        }
        #expect(calls.all.isEmpty)
        #expect(manager.isLoggedIn)
        #expect(transport.requests.count == 1)
    }

    @Test("A replay answered 401 by another origin (a redirect to a CDN) keeps the session")
    func crossOriginUnauthorizedReplay() async throws {
        let (refresher, calls) = countingRefresher { _ in .success(Credential(accessToken: "t2", refreshToken: "r2")) }
        let manager = SessionManager<User>(refresher: refresher)
        try manager.login(user: ann, credential: Credential(accessToken: "t1", refreshToken: "r1"))
        let cdn = try #require(URL(string: "https://cdn.other.example/files/1"))
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "books/1") { request throws(TransportError) in
                TransportResponse(statusCode: 401, url: request.headers["Authorization"] == "Bearer t1" ? request.url : cdn)
            }
        ])
        let repository = TestRepository(configuration: try makeConfiguration(), sessionManager: manager, transport: transport)
        let result: Result<Book, RepositoryError> = await repository.performRequest(.get("books/1"))
        #expect(result.failure?.statusCode == 401)
        #expect(manager.isLoggedIn)
        #expect(calls.all.count == 1)
        #expect(transport.requests.count == 2)
    }

    @Test("The credential goes only to the API's hosts and sessionHosts; a 401 from a host it never reached keeps the session")
    func hostScoping() async throws {
        let (refresher, calls) = countingRefresher { credential in .success(credential) }
        let manager = SessionManager<User>(refresher: refresher)
        try manager.login(user: ann, credential: Credential(accessToken: "t1", refreshToken: "r1"))
        var configuration = try makeConfiguration()
        // Written as a host may be: upper case, with the root's trailing dot, an IPv6 address in brackets.
        configuration.sessionHosts = ["FILES.api.test.", "[fd00::7]"]
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "report") { request throws(TransportError) in TransportResponse(statusCode: 401, url: request.url) },
            .json(.get, "files/1", "{}"), .json(.get, "books/1", #"{"id": 1, "title": "T"}"#),
        ])
        let repository = TestRepository(configuration: configuration, sessionManager: manager, transport: transport)
        _ = await repository.performRequest(Endpoint<Void>.get("books/1"))
        _ = await repository.performRequest(Endpoint<Void>.get("http://files.api.test/files/1"))
        _ = await repository.performRequest(Endpoint<Void>.get("http://[fd00::7]/files/1"))
        let elsewhere = await repository.performRequest(Endpoint<Void>.get("http://partner.example/report"))
        let sent = transport.requests.map { $0.headers["Authorization"] }
        #expect(transport.requests.count == 4)
        #expect(sent == ["Bearer t1", "Bearer t1", "Bearer t1", nil])
        guard case .authenticationFailed? = elsewhere.failure else {
            Issue.record("expected authenticationFailed for a 401 from a host the session never reached, got \(elsewhere)")
            return
        }
        #expect(manager.isLoggedIn)
        #expect(calls.all.isEmpty)
    }

    @Test("A call with a streamed body is not replayed after a 401: the session refreshes, and the 401 is the answer")
    func streamedBodyIsNotReplayed() async throws {
        let (refresher, calls) = countingRefresher { _ in .success(Credential(accessToken: "t2", refreshToken: "r2")) }
        let manager = SessionManager<User>(refresher: refresher)
        try manager.login(user: ann, credential: Credential(accessToken: "t1", refreshToken: "r1"))
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "uploads") { request throws(TransportError) in
                TransportResponse(statusCode: request.headers["Authorization"] == "Bearer t1" ? 401 : 201, url: request.url)
            }
        ])
        let repository = TestRepository(configuration: try makeConfiguration(), sessionManager: manager, transport: transport)
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("abc".utf8))
            continuation.finish()
        }
        let result = await repository.performRequest(Endpoint<Void>.upload(.post, "uploads", body: .stream(chunks)))
        guard case .invalidRequest(let reason, let request?)? = result.failure else {
            Issue.record("expected invalidRequest (not a logout), got \(result)")
            return
        }
        #expect(reason.contains("send the call again"))
        #expect(request.url.path.hasSuffix("uploads"))
        #expect(transport.requests.count == 1)
        #expect(calls.all.count == 1)
        #expect(manager.isLoggedIn)
        // The next call goes out with the new token.
        _ = await repository.performRequest(Endpoint<Void>.upload(.post, "uploads", body: .data(Data("abc".utf8))))
        #expect(transport.requests.last?.headers["Authorization"] == "Bearer t2")
    }

    @Test(
        "A refresher whose call needs the session it refreshes fails at once instead of waiting for itself; a task it started calls normally later"
    )
    func refresherNeedingTheSession() async throws {
        let holder = Mutex<(repository: TestRepository?, later: Task<Result<Void, RepositoryError>, Never>?, refreshes: Int)>((nil, nil, 0))
        // Opened once the refresh is over (its call has returned).
        let refreshOver = Gate()
        let refresher = ClosureRefresher { credential in
            let (repository, refresh) = holder.withLock { state in
                state.refreshes += 1
                return (state.repository, state.refreshes)
            }
            guard let repository else { return .failure(.invalidRequest(reason: "no repository", request: nil)) }
            if refresh > 1 { return .success(Credential(accessToken: "t2", refreshToken: "r2")) }
            // A task started here inherits the refresh's marker; it calls after the refresh is over.
            let later = Task {
                await refreshOver.wait()
                return await repository.performRequest(Endpoint<Void>.get("books/1"))
            }
            holder.withLock { $0.later = later }
            let refreshed: Result<Void, RepositoryError> = await repository.performRequest(Endpoint<Void>.post("auth/refresh"))
            return refreshed.map { credential }
        }
        // No cool-down: the later call refreshes again at once.
        let manager = SessionManager<User>(refresher: refresher, refreshPolicy: RefreshPolicy(failureCoolDown: 0))
        try manager.login(user: ann, credential: expiredCredential)
        let transport = StubTransport(routes: [.json(.get, "books/1", "{}"), .json(.post, "auth/refresh", "{}")])
        let repository = TestRepository(configuration: try makeConfiguration(), sessionManager: manager, transport: transport)
        holder.withLock { $0.repository = repository }
        let call = Task { await repository.performRequest(Endpoint<Void>.get("books/1")) }
        let result = try #require(await call.value(within: .seconds(60)), "the call waited for the refresh it started")
        guard
            case .sessionRefreshFailed(
                .refresherFailed(.sessionRefreshFailed(.refresherFailed(.invalidRequest(let reason, _)), _?)), let held?)? =
                result.failure
        else {
            Issue.record("expected the refresh to fail with the refresher's refused call, got \(result)")
            return
        }
        #expect(reason.contains("performAuthenticationRequest"))
        #expect(transport.requests.isEmpty)
        // Held back before sending: no response, no attempt.
        #expect(held.response == nil && held.attempts == 0)
        #expect(manager.isLoggedIn)
        refreshOver.open()
        let later = try #require(holder.withLock { $0.later })
        let laterResult = try #require(await later.value(within: .seconds(60)))
        #expect(laterResult.failure == nil, "\(laterResult)")
        #expect(transport.requests.last?.headers["Authorization"] == "Bearer t2")
    }

    @Test("Refreshes that produce a credential still count: 401s to every new token are stopped by the window")
    func windowStillStopsLoops() async throws {
        // Given: a refresher whose every new token the server rejects (expired on arrival, too)
        let (refresher, calls) = countingRefresher { credential in
            .success(Credential(accessToken: credential.accessToken + "+", refreshToken: "r", expiresAt: .distantPast))
        }
        let manager = SessionManager<User>(
            refresher: refresher, refreshPolicy: RefreshPolicy(window: RefreshWindow(maximumRefreshes: 3, interval: 60)))
        try manager.login(user: ann, credential: expiredCredential)
        // When: the expired token is refreshed before sending, then every token sent is answered 401
        var authorization = try #require(try await manager.authorize())
        var outcome: Result<SessionAuthorization?, RepositoryError> = .success(nil)
        for _ in 1...4 {
            outcome = await rejecting(authorization, on: manager)
            guard let replay = try? outcome.get() else { break }
            authorization = replay
        }
        // Then: the refresh before sending (which takes no place in the window), three refreshes
        // after 401s, then the loop is stopped and the session ends
        guard case .sessionRefreshFailed(.excessiveRefresh(let maximum, _), nil)? = outcome.failure else {
            Issue.record("expected an excessive refresh, got \(outcome)")
            return
        }
        #expect(maximum == 3)
        #expect(calls.all.count == 4)
        #expect(!manager.isLoggedIn)
    }

    @Test(
        "Within the cool-down a failed refresh is not tried again, a replay of an older credential still goes, and a new credential ends it"
    )
    func coolDown() async throws {
        // Given: a refresher that fails fast without a rejection, then works
        let answers = Mutex<[Result<Credential, RepositoryError>]>([
            .failure(.requestError(refreshContext(status: 503))), .success(Credential(accessToken: "t4", refreshToken: "r4")),
        ])
        let (refresher, calls) = countingRefresher { _ in answers.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] } }
        let clock = TestClock(start: Date())
        let manager = SessionManager<User>(
            refresher: refresher, refreshPolicy: RefreshPolicy(failureCoolDown: 30), clock: clock.networkingClock)
        try manager.login(user: ann, credential: Credential(accessToken: "t1", refreshToken: "r1"))
        let old = try #require(try await manager.authorize())
        try manager.update(credential: Credential(accessToken: "t2", refreshToken: "r2"))
        let current = try #require(try await manager.authorize())
        // When: a 401 for t2 refreshes (503); 29 s later another 401 for t2, and one for t1
        let failed = await rejecting(current, on: manager)
        clock.advance(by: 29)
        let cooling = await rejecting(current, on: manager)
        let replay = try #require(try await manager.authorizationRejected(old))
        // Then: both 401s for t2 fail with the 503, the refresher was called once, and t1's
        // request is replayed with t2 (another request had replaced its token)
        for outcome in [failed, cooling] {
            guard case .sessionRefreshFailed(.refresherFailed(let cause), nil)? = outcome.failure else {
                Issue.record("expected the refresh's 503, got \(outcome)")
                continue
            }
            #expect(cause.statusCode == 503)
        }
        #expect(replay.headerValue == "Bearer t2")
        #expect(calls.all.count == 1)
        // When: the app gives the session another token, which the server answers 401
        try manager.update(credential: Credential(accessToken: "t3", refreshToken: "r3"))
        let third = try #require(try await manager.authorize())
        let refreshed = try #require(try await manager.authorizationRejected(third))
        // Then: that refreshes at once
        #expect(refreshed.headerValue == "Bearer t4")
        #expect(calls.all.count == 2)
        #expect(manager.isLoggedIn)
    }

    @Test("During a cool-down a token about to expire is still sent; once expired, its requests fail unsent")
    func coolDownWithTokenAboutToExpire() async throws {
        // Given: a token that expires in 25 s (inside the 30 s leeway), and a refresh endpoint that answers 503
        let (refresher, calls) = countingRefresher { _ in .failure(.requestError(refreshContext(status: 503))) }
        let clock = TestClock(start: Date())
        let manager = SessionManager<User>(
            refresher: refresher, refreshPolicy: RefreshPolicy(failureCoolDown: 60), clock: clock.networkingClock)
        try manager.login(
            user: ann, credential: Credential(accessToken: "t1", refreshToken: "r1", expiresAt: clock.now.addingTimeInterval(25)))
        // When: the first request refreshes before sending, which fails
        let first = await authorizing(manager)
        guard case .sessionRefreshFailed(.refresherFailed, nil)? = first.failure else {
            Issue.record("expected the refresh's 503, got \(first)")
            return
        }
        // Then: during the cool-down the token, still good, is sent as it is, without a refresh
        #expect(try await manager.authorize()?.headerValue == "Bearer t1")
        // When: it has expired, still within the cool-down
        clock.advance(by: 26)
        // Then: the request fails with the refresh's error, unsent; the refresher was called once
        guard case .sessionRefreshFailed(.refresherFailed(let cause), nil)? = await authorizing(manager).failure else {
            Issue.record("expected the refresh's 503")
            return
        }
        #expect(cause.statusCode == 503)
        #expect(calls.all.count == 1)
        #expect(manager.isLoggedIn)
    }

    /// A server that rotates refresh tokens: each works once, and answers the next credential.
    final class RotatingServer: Sendable {
        private let current = Mutex(1)
        var refreshes: Int { current.withLock { $0 } - 1 }

        func refresh(_ credential: Credential) -> Result<Credential, RepositoryError> {
            current.withLock { current in
                guard credential.refreshToken == "r\(current)" else {
                    return .failure(.requestError(refreshContext(status: 400)))
                }
                current += 1
                return .success(
                    Credential(accessToken: "t\(current)", refreshToken: "r\(current)", expiresAt: Date().addingTimeInterval(3600)))
            }
        }
    }

    @Test(
        "Two processes on one session file, with refresh tokens that work once: the second takes what the first stored, before refreshing or when its refresh is refused, instead of logging the user out"
    )
    func sharedStoreRotatingTokens() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("session.json")
        let server = RotatingServer()
        // Given: the first run logs in; a second run of the tool restores the same session
        let first = SessionManager<User>(store: FileCredentialStore(fileURL: file), refresher: ClosureRefresher { server.refresh($0) })
        try first.login(user: ann, credential: expiredCredential)
        let second = SessionManager<User>(store: FileCredentialStore(fileURL: file), refresher: ClosureRefresher { server.refresh($0) })
        _ = await second.bootstrap()
        // When the first refreshes (r1 is used up) and the second's token expires too
        #expect(try await first.authorize()?.headerValue == "Bearer t2")
        first.waitUntilStored()
        // Then the second signs with what the first stored, without a refresh of its own
        #expect(try await second.authorize()?.headerValue == "Bearer t2")
        #expect(server.refreshes == 1 && second.isLoggedIn)
        // A third run, restored before the first refreshes again, and refused because the first
        // refreshed while its own refresh was on the way: it takes the stored credential too.
        let third = SessionManager<User>(
            store: FileCredentialStore(fileURL: file),
            refresher: ClosureRefresher { credential in
                // The first run refreshes meanwhile, and stores its new credential.
                let store = FileCredentialStore(fileURL: file)
                if case .success(let refreshed) = server.refresh(Credential(accessToken: "t2", refreshToken: "r2")),
                    var session = (try? store.load()) ?? nil
                {
                    session.credential = refreshed
                    try? store.save(session)
                }
                return server.refresh(credential)
            })
        _ = await third.bootstrap()
        try third.update(credential: Credential(accessToken: "t2", refreshToken: "r2", expiresAt: Date().addingTimeInterval(-60)))
        #expect(try await third.authorize()?.headerValue == "Bearer t3")
        #expect(third.isLoggedIn)
        // Another user's session in the file is never taken, however new
        var annSession = try #require(try FileCredentialStore(fileURL: file).load())
        let other = SessionManager<User>(store: FileCredentialStore(fileURL: file), refresher: ClosureRefresher { server.refresh($0) })
        try other.login(
            user: bob, credential: Credential(accessToken: "b1", refreshToken: "used", expiresAt: Date().addingTimeInterval(-60)))
        annSession.credential = Credential(accessToken: "t9", refreshToken: "r9", expiresAt: Date().addingTimeInterval(7200))
        try FileCredentialStore(fileURL: file).save(annSession)
        #expect(await authorizing(other).failure != nil)
        #expect(!other.isLoggedIn)
        other.waitUntilStored()
        #expect(try FileCredentialStore(fileURL: file).load()?.credential.accessToken == "t9")
        // Nor one older than the credential refreshed (a holder that had not seen a refresh
        // writing its own back): the refresh goes ahead
        let fourth = SessionManager<User>(store: FileCredentialStore(fileURL: file), refresher: ClosureRefresher { server.refresh($0) })
        annSession.credential = Credential(accessToken: "t3", refreshToken: "r3", expiresAt: Date().addingTimeInterval(-60))
        try FileCredentialStore(fileURL: file).save(annSession)
        _ = await fourth.bootstrap()
        annSession.credential = Credential(accessToken: "t0", refreshToken: "r0", expiresAt: Date().addingTimeInterval(-3600))
        try FileCredentialStore(fileURL: file).save(annSession)
        #expect(try await fourth.authorize()?.headerValue == "Bearer t4")
    }

    @Test(
        "A holder whose session expires leaves the store alone when another holder stored since (the race two refreshes at one moment can lose); one that holds its own is emptied"
    )
    func expiringLeavesAnotherHoldersSession() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("session.json")
        let first = SessionManager<User>(store: FileCredentialStore(fileURL: file))
        try first.login(user: ann, credential: Credential(accessToken: "t1", refreshToken: "r1"))
        let second = SessionManager<User>(store: FileCredentialStore(fileURL: file))
        _ = await second.bootstrap()
        // When the first stores a new token and the second's session ends
        try first.update(credential: Credential(accessToken: "t2", refreshToken: "r2"))
        second.expire()
        // Then the first's session is still stored, and the first goes on
        #expect(!second.isLoggedIn && first.isLoggedIn)
        #expect(try FileCredentialStore(fileURL: file).load()?.credential.accessToken == "t2")
        // When the first's own session expires, the store is emptied
        first.expire()
        #expect(try FileCredentialStore(fileURL: file).load() == nil)
        // A logout empties it whoever stored last
        try first.login(user: ann, credential: Credential(accessToken: "t3"))
        let third = SessionManager<User>(store: FileCredentialStore(fileURL: file))
        _ = await third.bootstrap()
        try first.update(credential: Credential(accessToken: "t4"))
        try third.logout()
        #expect(try FileCredentialStore(fileURL: file).load() == nil)
    }
}

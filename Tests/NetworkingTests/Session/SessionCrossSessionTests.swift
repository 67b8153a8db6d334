import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

/// A refresher that holds every refresh until ``release()``, and tells when one has started.
private final class HeldRefresher: TokenRefresher {
    private struct State {
        var released = false
        var held: [CheckedContinuation<Void, Never>] = []
    }

    private let result: Result<Credential, RepositoryError>
    private let state = Mutex(State())
    /// One element for each refresh that has started.
    let started: AsyncStream<Void>
    private let startedContinuation: AsyncStream<Void>.Continuation

    /// A refresher whose refreshes, once released, end with `result`.
    init(result: Result<Credential, RepositoryError>) {
        self.result = result
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        started = stream
        startedContinuation = continuation
    }

    func refreshCredential(_ credential: Credential) async -> Result<Credential, RepositoryError> {
        startedContinuation.yield()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                guard !state.released else { return true }
                state.held.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        return result
    }

    /// Lets every held refresh end, and every later one go through at once.
    func release() {
        let held = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.released = true
            defer { state.held.removeAll() }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }
}

@Suite("SessionManager never signs a request with another session's credential", .timeLimit(.minutes(1)))
struct SessionCrossSessionTests {
    @Test("A 401 to a request of Ann's session, arriving after Bob logged in, is not replayed with Bob's token")
    func rejectionAcrossSessions() async throws {
        let events = try await recordEvents { manager in
            // Given: a request signed in Ann's session, then Ann logs out and Bob logs in
            try manager.login(user: ann, token: "ann-token")
            let annsRequest = try #require(try await manager.authorize())
            try manager.logout()
            try manager.login(user: bob, token: "bob-token")
            // When: the server's 401 to Ann's request arrives
            let replay = try await manager.authorizationRejected(annsRequest)
            // Then: there is nothing to replay it with, and Bob's session is untouched
            #expect(replay == nil)
            #expect(manager.sessionToken == "bob-token")
            let bobsRequest = try #require(try await manager.authorize())
            #expect(bobsRequest.headerValue == "Bearer bob-token")
            #expect(bobsRequest.sessionID != annsRequest.sessionID)
            // And a 401 to a replay of Ann's request does not end Bob's session either
            await manager.replayRejected(annsRequest)
            #expect(manager.isLoggedIn)
        }
        #expect(events == ["loggedIn(Ann)", "loggedOut", "loggedIn(Bob)"])
    }

    @Test(
        "A request waiting for Ann's refresh when Ann logs out and Bob logs in is not signed with Bob's token",
        arguments: [false, true], [false, true])
    func waiterAcrossSessions(answeredUnauthorized: Bool, refreshSucceeds: Bool) async throws {
        // Given: Ann's session, whose refresh is held while her request waits for it
        let store = ScriptedCredentialStore()
        let refreshed: Result<Credential, RepositoryError> =
            refreshSucceeds
            ? .success(Credential(accessToken: "ann-2", refreshToken: "ann-r2"))
            : .failure(.requestError(refreshContext(status: 401)))
        let refresher = HeldRefresher(result: refreshed)
        let manager = SessionManager<User>(store: store, refresher: refresher)
        var started = refresher.started.makeAsyncIterator()
        let signed: SessionAuthorization?
        if answeredUnauthorized {
            // The request was sent, and its 401 starts the refresh.
            try manager.login(user: ann, credential: Credential(accessToken: "ann-1", refreshToken: "ann-r1"))
            signed = try await manager.authorize()
        } else {
            // The token is known to be expired: the refresh starts before the request is sent.
            let expired = Credential(accessToken: "ann-1", refreshToken: "ann-r1", expiresAt: Date().addingTimeInterval(-60))
            try manager.login(user: ann, credential: expired)
            signed = nil
        }
        let annsRequest = Task { () async -> Result<SessionAuthorization?, RepositoryError> in
            if let signed { return await rejecting(signed, on: manager) }
            return await authorizing(manager)
        }
        _ = await started.next()

        // When: Ann logs out and Bob logs in, Bob makes a request, then Ann's refresh ends
        try manager.logout()
        try manager.login(user: bob, credential: Credential(accessToken: "bob-1", refreshToken: "bob-r1"))
        let bobsRequest = Task { await authorizing(manager) }
        refresher.release()
        let annsOutcome = await annsRequest.value
        let bobsOutcome = await bobsRequest.value

        // Then: Ann's request gets no authorization at all
        guard case .success(nil) = annsOutcome else {
            Issue.record("expected no authorization for Ann's request, got \(annsOutcome)")
            return
        }
        // And Bob's session is untouched: in memory, in the store, and on his own request
        manager.waitUntilStored()
        #expect(manager.sessionToken == "bob-1")
        #expect(manager.currentUser == bob)
        #expect(store.stored?.credential.accessToken == "bob-1")
        let bobsHeader = try bobsOutcome.get()?.headerValue
        #expect(bobsHeader == "Bearer bob-1")
    }

    @Test("Bob's requests never wait for a refresh of Ann's session that is still running when he logs in")
    func newSessionDoesNotWaitForOldRefresh() async throws {
        // Given: Ann's request waits for a refresh that is held
        let refresher = HeldRefresher(result: .success(Credential(accessToken: "ann-2", refreshToken: "ann-r2")))
        let manager = SessionManager<User>(refresher: refresher)
        var started = refresher.started.makeAsyncIterator()
        let expired = Credential(accessToken: "ann-1", refreshToken: "ann-r1", expiresAt: Date().addingTimeInterval(-60))
        try manager.login(user: ann, credential: expired)
        let annsRequest = Task { await authorizing(manager) }
        _ = await started.next()
        // When: Ann logs out and Bob logs in
        try manager.logout()
        try manager.login(user: bob, credential: Credential(accessToken: "bob-1", refreshToken: "bob-r1"))
        // Then: Ann's request gets nothing and Bob's is signed, both while Ann's refresh is still held
        let annsOutcome = await annsRequest.value(within: .seconds(60))
        let bobsOutcome = await Task { await authorizing(manager) }.value(within: .seconds(60))
        refresher.release()
        guard case .success(nil)? = annsOutcome else {
            Issue.record("expected no authorization for Ann's request, got \(String(describing: annsOutcome))")
            return
        }
        let bobsHeader = try #require(bobsOutcome).get()?.headerValue
        #expect(bobsHeader == "Bearer bob-1")
    }

    @Test("A call the refresher makes after Ann logged out and Bob logged in is not signed with Bob's token")
    func refresherCallAfterAUserSwitch() async throws {
        let holder = Mutex<SessionManager<User>?>(nil)
        let started = Gate()
        let switched = Gate()
        let refresherCall = Mutex<Result<SessionAuthorization?, RepositoryError>?>(nil)
        let refresher = ClosureRefresher { credential in
            started.open()
            await switched.wait()
            guard let manager = holder.withLock({ $0 }) else { return .failure(.cancelled(nil)) }
            let outcome = await authorizing(manager)
            refresherCall.withLock { $0 = outcome }
            return .success(credential)
        }
        let manager = SessionManager<User>(refresher: refresher)
        holder.withLock { $0 = manager }
        try manager.login(
            user: ann, credential: Credential(accessToken: "ann", refreshToken: "r", expiresAt: Date().addingTimeInterval(-60)))
        // Ann's request starts a refresh, which waits while Ann logs out and Bob logs in
        let annsCall = Task { await authorizing(manager) }
        await started.wait()
        try manager.logout()
        try manager.login(user: bob, credential: Credential(accessToken: "bob"))
        switched.open()
        _ = try #require(await annsCall.value(within: .seconds(60)))
        // Then: the refresher's call belongs to Ann's session, which has ended
        for _ in 0..<1000 where refresherCall.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(10)) }
        let outcome = try #require(refresherCall.withLock { $0 })
        #expect(try outcome.get() == nil)
    }

    @Test("Ann's refreshes do not count against Bob's refresh window")
    func windowStartsAfreshWithEachSession() async throws {
        // Given: a window of two refreshes, both used by Ann's session
        let (refresher, calls) = countingRefresher { credential in
            .success(Credential(accessToken: credential.accessToken + "+", refreshToken: "r"))
        }
        let manager = SessionManager<User>(
            refresher: refresher, refreshPolicy: RefreshPolicy(window: RefreshWindow(maximumRefreshes: 2, interval: 3600)))
        try manager.login(user: ann, credential: Credential(accessToken: "ann", refreshToken: "r"))
        var annsAuthorization = try #require(try await manager.authorize())
        for _ in 1...2 { annsAuthorization = try #require(try await manager.authorizationRejected(annsAuthorization)) }
        #expect(calls.all.count == 2)
        #expect(manager.sessionToken == "ann++")
        // When: Ann logs out, Bob logs in, and his first request is answered 401
        try manager.logout()
        try manager.login(user: bob, credential: Credential(accessToken: "bob", refreshToken: "r"))
        let bobsAuthorization = try #require(try await manager.authorize())
        // Then: Bob's session may refresh; it is not an excessive refresh
        let bobsOutcome = await rejecting(bobsAuthorization, on: manager)
        #expect(calls.all.count == 3)
        #expect(manager.isLoggedIn)
        if case .failure(let error) = bobsOutcome {
            Issue.record("expected Bob's request to be refreshed, got \(error)")
        }
    }
}

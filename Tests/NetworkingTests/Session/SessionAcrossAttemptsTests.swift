import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// Ends Ann's session and starts Bob's when the call reaches attempt `switchAt` — as if the
/// user switched accounts while a retry waited — before the session step signs that attempt.
struct AccountSwitch<User: Codable & Sendable>: Interceptor {
    let session: SessionManager<User>
    let next: User
    var switchAt = 2

    var position: InterceptorPosition { .beforeSigning }

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        if context.attempt == switchAt {
            try? session.logout()
            try? session.login(user: self.next, token: "bob-token")
        }
        return try await next(request)
    }
}

/// Moves the session's clock two hours on before attempt `attempt` is signed: its token has expired.
private struct ExpiresBefore: Interceptor {
    let attempt: Int
    let clock: TestClock

    var position: InterceptorPosition { .beforeSigning }

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        if context.attempt == attempt { clock.advance(by: 7200) }
        return try await next(request)
    }
}

/// Fails attempt `number` before it reaches the transport, as an offline refresh would.
private struct FailsAttempt: Interceptor {
    let number: Int

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        // Marked unsent (attempts 0), as the session step marks a refresh's failure.
        guard context.attempt != number else {
            throw .noNetworkConnection(.notConnected, ErrorContext(request: request.summary, attempts: 0))
        }
        return try await next(request)
    }
}

/// A session kept elsewhere, whose session id the test sets: for the protocol's default
/// `authorize(inSession:)`.
private final class ExternalSession: SessionAuthorizing, @unchecked Sendable {
    var current = SessionAuthorization(headerValue: "Bearer ann-token", version: 0, sessionID: 7)

    func authorize() async throws(RepositoryError) -> SessionAuthorization? { current }
    func authorizationRejected(_ authorization: SessionAuthorization) async throws(RepositoryError) -> SessionAuthorization? { nil }
    func replayRejected(_ authorization: SessionAuthorization) async {}
}

@Suite("A call keeps to the session it was first signed in", .timeLimit(.minutes(1)))
struct SessionAcrossAttemptsTests {
    /// Ann's session, a `books/1` route that fails once with 503, and a retry policy.
    private func annRetrying(interceptors: (SessionManager<User>) -> [any Interceptor] = { _ in [] }) throws
        -> (TestRepository, StubTransport, SessionManager<User>)
    {
        let route = SequenceRoute(statuses: [503, 200])
        let transport = StubTransport(routes: [route.route(.get, "/api/v1/books/1")])
        let session = SessionManager<User>()
        try session.login(user: ann, token: "ann-token")
        var configuration = try makeConfiguration()
        configuration.clock = TestClock().networkingClock
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, random: { 0 })
        let repository = TestRepository(
            configuration: configuration, sessionManager: session, transport: transport, interceptors: interceptors(session))
        return (repository, transport, session)
    }

    @Test("A retry after a 503 that comes after Bob replaced Ann is not sent with Bob's token; it fails as unauthenticated")
    func retryAcrossSessions() async throws {
        // Given: Ann's session, a route that fails once with 503, a retry policy, and a switch to Bob before the retry
        let (repository, transport, session) = try annRetrying { [AccountSwitch(session: $0, next: bob)] }
        // When: the retry comes after the switch
        let result: Result<Book, RepositoryError> = await repository.performRequest(.get("books/1"))
        // Then: only Ann's first attempt went out, and the call failed as unauthenticated, saying so
        guard case .unauthenticatedSession(let context?)? = result.failure else {
            Issue.record("expected unauthenticatedSession with the call's context, got \(result)")
            return
        }
        #expect(context.response == nil && context.attempts == 1)
        #expect(result.failure?.description.contains("was not sent again after 1 attempt: the session it was signed in has ended") == true)
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer ann-token"])
        #expect(session.sessionToken == "bob-token")
    }

    @Test("A retry that fails before it is sent (its session's refresh could not reach the server) is not counted as an attempt")
    func retryFailingBeforeSending() async throws {
        // Given: the retry ends in an interceptor before the transport, with no response
        let (repository, transport, _) = try annRetrying { _ in [FailsAttempt(number: 2)] }
        // When
        let result: Result<Book, RepositoryError> = await repository.performRequest(.get("books/1"))
        // Then: one request went out, and the error says so
        guard case .noNetworkConnection(.notConnected, let context)? = result.failure else {
            Issue.record("expected the interceptor's error, got \(result)")
            return
        }
        #expect(transport.requests.count == 1)
        #expect(context.attempts == 1)
        #expect(result.failure?.description.contains("attempts") == false)
    }

    /// Ann's session with `refresher`, a `books/1` route answering `statuses` in turn, a retry
    /// policy, and a token that has expired by the time attempt 2 is signed.
    private func expiringBeforeRetry(refresher: ClosureRefresher, statuses: [Int]) throws -> (TestRepository, StubTransport) {
        let sessionClock = TestClock(start: Date())
        let session = SessionManager<User>(refresher: refresher, clock: sessionClock.networkingClock)
        try session.login(
            user: ann, credential: Credential(accessToken: "ann-token", refreshToken: "r1", expiresAt: Date().addingTimeInterval(3600)))
        let route = SequenceRoute(statuses: statuses)
        let transport = StubTransport(routes: [route.route(.get, "/api/v1/books/1")])
        var configuration = try makeConfiguration()
        configuration.clock = TestClock().networkingClock
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, random: { 0 })
        let repository = TestRepository(
            configuration: configuration, sessionManager: session, transport: transport,
            interceptors: [ExpiresBefore(attempt: 2, clock: sessionClock)])
        return (repository, transport)
    }

    @Test("A retry whose token has expired and whose refresh fails is not sent: the error counts the one attempt that was")
    func retryWhoseRefreshFails() async throws {
        // Given: Ann's token expires as the 503's retry comes, and the auth server is down
        let (refresher, refreshes) = countingRefresher { _ in .failure(.requestError(refreshContext(status: 503))) }
        let (repository, transport) = try expiringBeforeRetry(refresher: refresher, statuses: [503, 200])
        // When
        let result: Result<Book, RepositoryError> = await repository.performRequest(.get("books/1"))
        // Then
        guard case .sessionRefreshFailed(.refresherFailed, let context?)? = result.failure else {
            Issue.record("expected the refresh's failure, got \(result)")
            return
        }
        #expect(refreshes.all.count == 1)
        #expect(transport.requests.count == 1)
        #expect(context.attempts == 1)
        #expect(result.failure?.description.contains("was not sent again after 1 attempt: the session could not be refreshed") == true)
    }

    @Test("An attempt replayed after a 401 counts once: a retry whose refresh then fails reports one attempt, not two")
    func replayCountsOnce() async throws {
        // Given: a 401 whose refresh works and whose replay gets a 503; the retry's token has
        // expired by then, and its refresh fails
        let (refresher, refreshes) = countingRefresher { credential in
            credential.accessToken == "ann-token"
                ? .success(Credential(accessToken: "ann-2", refreshToken: "r2", expiresAt: Date().addingTimeInterval(3600)))
                : .failure(.requestError(refreshContext(status: 503)))
        }
        let (repository, transport) = try expiringBeforeRetry(refresher: refresher, statuses: [401, 503, 200])
        // When
        let result: Result<Book, RepositoryError> = await repository.performRequest(.get("books/1"))
        // Then: two requests went out, both of the first attempt
        guard case .sessionRefreshFailed(.refresherFailed, let context?)? = result.failure else {
            Issue.record("expected the second refresh's failure, got \(result)")
            return
        }
        #expect(refreshes.all.count == 2)
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer ann-token", "Bearer ann-2"])
        #expect(context.attempts == 1)
    }

    @Test("Without a switch, the retry is signed in the same session and succeeds")
    func retryInSameSession() async throws {
        let (repository, transport, _) = try annRetrying()
        let result: Result<Book, RepositoryError> = await repository.performRequest(.get("books/1"))
        #expect(throws: Never.self) { try result.get() }
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer ann-token", "Bearer ann-token"])
    }

    @Test("SessionManager.authorize(inSession:) signs in that session only, without refreshing the next one")
    func managerAuthorizeInSession() async throws {
        // Given: Ann's session, then Bob's with a token known to be expired
        let (refresher, calls) = countingRefresher { _ in .success(Credential(accessToken: "bob-2")) }
        let manager = SessionManager<User>(refresher: refresher)
        try manager.login(user: ann, token: "ann-token")
        let first = try #require(try await manager.authorize())
        let anns = try #require(try await manager.authorize(inSession: first.sessionID))
        #expect(anns.headerValue == "Bearer ann-token")
        try manager.logout()
        let expired = Credential(accessToken: "bob-1", refreshToken: "bob-r", expiresAt: Date().addingTimeInterval(-60))
        try manager.login(user: bob, credential: expired)
        // When: an attempt of Ann's call asks to be signed
        let again = try await manager.authorize(inSession: anns.sessionID)
        // Then: nothing, and Bob's expired token was not refreshed for it
        #expect(again == nil)
        #expect(calls.all.isEmpty)
    }

    @Test("The protocol's default authorize(inSession:) answers nil when the session signs in another one")
    func defaultAuthorizeInSession() async throws {
        let session = ExternalSession()
        #expect(try await session.authorize(inSession: 7)?.headerValue == "Bearer ann-token")
        session.current = SessionAuthorization(headerValue: "Bearer bob-token", version: 0, sessionID: 8)
        #expect(try await session.authorize(inSession: 7) == nil)
    }
}

import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

@Suite("SessionManager with short-lived tokens and wrong clocks", .timeLimit(.minutes(1)))
struct SessionTokenLifetimeTests {
    /// A session on a test clock, logged in with the token "t", whose refresher appends "+" to
    /// it: the login's token and each refreshed one expire `lifetime` seconds after they are issued.
    private func renewingSession(lifetime: TimeInterval) throws -> (TestClock, SessionManager<User>, Recorder<Int>) {
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_700_000_000))
        let (refresher, calls) = countingRefresher { credential in
            .success(
                Credential(accessToken: credential.accessToken + "+", refreshToken: "r", expiresAt: clock.now.addingTimeInterval(lifetime)))
        }
        let manager = SessionManager<User>(refresher: refresher, clock: clock.networkingClock)
        try manager.login(
            user: ann, credential: Credential(accessToken: "t", refreshToken: "r", expiresAt: clock.now.addingTimeInterval(lifetime)))
        return (clock, manager, calls)
    }

    @Test("A device clock 10 minutes ahead: one refresh, then the refreshed token is used, never a refresh loop")
    func clockAhead() async throws {
        // Given: the device's clock runs 10 minutes ahead; the server issues 5-minute tokens by its own clock
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_700_000_600))
        let serverNow = Date(timeIntervalSince1970: 1_700_000_000)
        let (refresher, calls) = countingRefresher { credential in
            .success(Credential(accessToken: credential.accessToken + "+", refreshToken: "r", expiresAt: serverNow.addingTimeInterval(300)))
        }
        let manager = SessionManager<User>(refresher: refresher, clock: clock.networkingClock)
        try manager.login(
            user: ann, credential: Credential(accessToken: "t", refreshToken: "r", expiresAt: serverNow.addingTimeInterval(300)))
        // When: eight requests ask for the session
        for _ in 1...8 {
            let header = try await manager.authorize()?.headerValue
            #expect(header == "Bearer t+")
        }
        // Then: the token that looked expired on login was refreshed once; the refreshed one is
        // used although it looks expired too, and the session lives on
        #expect(calls.all.count == 1)
        #expect(manager.isLoggedIn)
    }

    @Test("Tokens that live 20 s with the default 30 s leeway: refreshed at half their lifetime, not on arrival")
    func shortLivedTokens() async throws {
        // Given: a refresher issuing tokens that live 20 s
        let (clock, manager, calls) = try renewingSession(lifetime: 20)
        // When, then: the login's token is within the leeway, so it is refreshed once
        for _ in 1...5 { _ = try await manager.authorize() }
        #expect(calls.all.count == 1)
        #expect(manager.sessionToken == "t+")
        // The refreshed token is used for the first half of its life
        clock.advance(by: 9)
        for _ in 1...5 { _ = try await manager.authorize() }
        #expect(calls.all.count == 1)
        // And refreshed once past it
        clock.advance(by: 2)
        for _ in 1...5 { _ = try await manager.authorize() }
        #expect(calls.all.count == 2)
        #expect(manager.sessionToken == "t++")
        #expect(manager.isLoggedIn)
    }

    @Test("Tokens that live 10 s, renewed on time for two minutes, never count as a refresh loop")
    func tokensRenewedOnTime() async throws {
        let (clock, manager, calls) = try renewingSession(lifetime: 10)
        // A request a second: a refresh every five seconds, far more than the window's 5 in 30 s
        for _ in 1...120 {
            _ = try await manager.authorize()
            clock.advance(by: 1)
        }
        #expect(manager.isLoggedIn)
        #expect(calls.all.count >= 20)
    }

    @Test("Tokens that expire a millisecond after they arrive: a request refreshes once before sending, not in a loop")
    func tokensExpiringOnArrival() async throws {
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_700_000_000))
        let refreshes = Mutex(0)
        let (refresher, calls) = countingRefresher { credential in
            let issued = Credential(
                accessToken: credential.accessToken + "+", refreshToken: "r", expiresAt: clock.now.addingTimeInterval(0.001))
            // Time passes while the answer comes back: the token has expired by the time it is used
            clock.advance(by: 0.01)
            // A bound of the test's own, so that a loop fails instead of running until the time limit
            let count = refreshes.withLock { count in
                count += 1
                return count
            }
            return count > 20 ? .failure(.cancelled(nil)) : .success(issued)
        }
        let manager = SessionManager<User>(refresher: refresher, clock: clock.networkingClock)
        try manager.login(
            user: ann, credential: Credential(accessToken: "t", refreshToken: "r", expiresAt: clock.now.addingTimeInterval(-1)))
        let header = try await manager.authorize()?.headerValue
        #expect(header == "Bearer t+")
        #expect(calls.all.count == 1)
    }

    @Test("A 401 for a token refreshed since, read after the new token expired too, refreshes before the replay")
    func lateRejectionAfterTheNewTokenExpired() async throws {
        let (clock, manager, calls) = try renewingSession(lifetime: 300)
        // A long upload is signed with the login's token
        let upload = try #require(try await manager.authorize())
        // Other calls refresh at 4.5 minutes; the new token lives 5 minutes
        clock.advance(by: 280)
        _ = try await manager.authorize()
        #expect(calls.all.count == 1)
        // The upload's 401 is read at 10 minutes, when the refreshed token has expired too
        clock.advance(by: 320)
        let replay = try await manager.authorizationRejected(upload)
        #expect(replay?.headerValue == "Bearer t++")
        #expect(calls.all.count == 2)
    }

    @Test("A refresher that returns an empty access token fails the refresh and keeps the session")
    func emptyRefreshedToken() async throws {
        let (refresher, _) = countingRefresher { _ in .success(Credential(accessToken: "", refreshToken: "r2")) }
        let store = InMemoryCredentialStore()
        let manager = SessionManager<User>(store: store, refresher: refresher)
        try manager.login(user: ann, credential: Credential(accessToken: "t", refreshToken: "r"))
        let signed = try #require(try await manager.authorize())
        let outcome = await rejecting(signed, on: manager)
        guard case .failure(.sessionRefreshFailed(.refresherFailed(.invalidRequest(let reason, _)), _)) = outcome else {
            Issue.record("expected a refresh failure, got \(outcome)")
            return
        }
        #expect(reason.contains("empty access token"))
        manager.waitUntilStored()
        #expect(manager.sessionToken == "t")
        #expect((try store.load())?.credential.refreshToken == "r")
    }

    @Test("A token set by update(credential:) that is known to be expired is still refreshed before sending")
    func updatedExpiredToken() async throws {
        let (clock, manager, calls) = try renewingSession(lifetime: -60)
        let expired = Credential(accessToken: "t", refreshToken: "r", expiresAt: clock.now.addingTimeInterval(-60))
        _ = try await manager.authorize()
        #expect(calls.all.count == 1)
        // A credential given by hand is taken at its word, whatever came before it
        try manager.update(credential: expired)
        _ = try await manager.authorize()
        #expect(calls.all.count == 2)
    }
}

import Foundation
import Networking
import Testing

@Suite("SessionManager state machine", .timeLimit(.minutes(1)))
struct SessionManagerTests {
    @Test("Login, updates and logout change the state and the store, with events in order")
    func lifecycle() async throws {
        // Given
        let store = ScriptedCredentialStore()
        // When
        let events = try await recordEvents(store: store) { manager in
            #expect(!manager.isLoggedIn)
            try manager.login(user: ann, credential: Credential(accessToken: "t1", refreshToken: "r1"))
            #expect(manager.isLoggedIn)
            #expect(manager.sessionToken == "t1")
            #expect(manager.currentUser == ann)
            #expect(try await manager.authorize()?.headerValue == "Bearer t1")
            #expect(store.stored?.credential.refreshToken == "r1")
            #expect(store.stored?.user == ["id": 1, "name": "Ann"])

            try manager.update(user: bob)
            #expect(manager.currentUser == bob)
            #expect(store.stored?.user == ["id": 2, "name": "Bob"])

            try manager.update(credential: Credential(accessToken: "t2"))
            #expect(manager.sessionToken == "t2")
            #expect(manager.currentUser == bob)
            #expect(store.stored?.credential.accessToken == "t2")

            try manager.logout()
            #expect(!manager.isLoggedIn)
            #expect(manager.sessionToken == nil)
            #expect(manager.credential == nil)
            #expect(manager.currentUser == nil)
            #expect(try await manager.authorize() == nil)
            #expect(store.stored == nil)

            try manager.login(user: ann, token: "t3")
            manager.expire()
            #expect(!manager.isLoggedIn)
            #expect(store.stored == nil)
        }
        // Then
        #expect(events == ["loggedIn(Ann)", "userUpdated(Bob)", "credentialUpdated", "loggedOut", "loggedIn(Ann)", "expired"])
    }

    @Test("Invalid transitions throw the matching SessionError, change nothing and emit nothing")
    func invalidTransitions() async throws {
        let store = ScriptedCredentialStore()
        let events = try await recordEvents(store: store) { manager in
            // Given logged out
            #expect(throws: SessionError.notLoggedIn) { try manager.update(user: bob) }
            #expect(throws: SessionError.notLoggedIn) { try manager.update(credential: Credential(accessToken: "t")) }
            #expect(throws: SessionError.notLoggedIn) { try manager.logout() }
            #expect(throws: SessionError.invalidCredential("the access token is empty")) {
                try manager.login(user: ann, token: "")
            }
            #expect(!manager.isLoggedIn)
            #expect(store.stored == nil)
            // Given logged in
            try manager.login(user: ann, token: "t1")
            #expect(throws: SessionError.alreadyLoggedIn) { try manager.login(user: bob, token: "t2") }
            #expect(throws: SessionError.invalidCredential("the access token is empty")) {
                try manager.update(credential: Credential(accessToken: ""))
            }
            #expect(manager.sessionToken == "t1")
            #expect(manager.currentUser == ann)
            #expect(store.stored?.credential.accessToken == "t1")
        }
        // Then only the valid login was announced
        #expect(events == ["loggedIn(Ann)"])
    }

    /// A user whose JSON cannot be written (`JSONEncoder` refuses NaN).
    struct Reader: Codable, Sendable, Equatable {
        let name: String
        let rating: Double
    }

    @Test("A user that cannot be encoded fails the login with storeFailed, and nothing changes: it is never stored without its user")
    func unencodableUser() throws {
        let store = ScriptedCredentialStore()
        let manager = SessionManager<Reader>(store: store)
        #expect {
            try manager.login(user: Reader(name: "Ann", rating: .nan), token: "t1")
        } throws: { error in
            guard case SessionError.storeFailed(.writeFailed(_, let reason)) = error else { return false }
            return reason.contains("the user could not be encoded")
        }
        #expect(!manager.isLoggedIn && store.stored == nil)
        try manager.login(user: Reader(name: "Ann", rating: 4.5), token: "t1")
        #expect(throws: SessionError.self) { try manager.update(user: Reader(name: "Ann", rating: .infinity)) }
        #expect(manager.currentUser == Reader(name: "Ann", rating: 4.5))
        #expect(store.stored?.user == ["name": "Ann", "rating": 4.5])
    }

    @Test("Errors describe themselves")
    func errorDescriptions() {
        #expect(SessionError.alreadyLoggedIn.description.contains("log out"))
        #expect(SessionError.notLoggedIn.description == "there is no active session")
        #expect(SessionError.invalidCredential("x").description.contains("x"))
        #expect(SessionError.storeFailed(storeFailure).description.contains("disk full"))
    }

    @Test("expire() when logged out does nothing, not even to the store")
    func expireLoggedOut() async throws {
        // Given a stored session the manager has not loaded
        let store = ScriptedCredentialStore(PersistedSession(credential: Credential(accessToken: "stored")))
        // When
        let events = try await recordEvents(store: store) { manager in
            manager.expire()
            #expect((try? await manager.authorizationRejected(SessionAuthorization(headerValue: "Bearer stored", version: 0))) == nil)
        }
        // Then
        #expect(events.isEmpty)
        #expect(store.stored?.credential.accessToken == "stored")
    }

    @Test("A rejection of a stale token does not end a newer session")
    func staleRejection() async throws {
        let events = try await recordEvents { manager in
            // Given a session whose token was replaced
            try manager.login(user: ann, token: "t1")
            let first = try #require(try await manager.authorize())
            try manager.update(credential: Credential(accessToken: "t2"))
            // When a late 401 for the old token arrives, the request is replayed with the new one
            let replay = try await manager.authorizationRejected(first)
            // Then the session stays
            #expect(replay?.headerValue == "Bearer t2")
            #expect(manager.sessionToken == "t2")
            // Given a new session after logout, a late 401 for the old session's request is not
            // replayed with the new session's token, and does not end it
            let second = try #require(try await manager.authorize())
            try manager.logout()
            try manager.login(user: bob, token: "t3")
            #expect(try await manager.authorizationRejected(second) == nil)
            #expect(manager.sessionToken == "t3")
            // When the current token is rejected and there is no refresher, the session expires
            let third = try #require(try await manager.authorize())
            #expect(try await manager.authorizationRejected(third) == nil)
            #expect(!manager.isLoggedIn)
        }
        #expect(events == ["loggedIn(Ann)", "credentialUpdated", "loggedOut", "loggedIn(Bob)", "expired"])
    }

    @Test("The raw scheme signs with the bare token; a rejected current token expires the session")
    func rawSchemeRejection() async throws {
        let events = try await recordEvents(scheme: .raw) { manager in
            try manager.login(user: ann, token: "t1")
            let authorization = try #require(try await manager.authorize())
            #expect(authorization.headerValue == "t1")
            _ = try await manager.authorizationRejected(authorization)
            #expect(!manager.isLoggedIn)
        }
        #expect(events == ["loggedIn(Ann)", "expired"])
    }

    @Test("Each events() call gets its own stream of changes from then on")
    func severalSubscribers() async throws {
        // Given
        var manager: SessionManager<User>? = SessionManager<User>()
        try manager?.login(user: ann, token: "t1")
        let first = try #require(manager).events()
        try manager?.update(user: bob)
        let second = try #require(manager).events()
        try manager?.logout()
        // When
        manager = nil
        var firstLabels: [String] = []
        for await event in first { firstLabels.append(label(event)) }
        var secondLabels: [String] = []
        for await event in second { secondLabels.append(label(event)) }
        // Then
        #expect(firstLabels == ["userUpdated(Bob)", "loggedOut"])
        #expect(secondLabels == ["loggedOut"])
    }

    @Test("Credentials know when they have expired")
    func credentialExpiry() {
        let now = Date(timeIntervalSince1970: 1_000)
        #expect(!Credential(accessToken: "t").isExpired(at: now))
        #expect(!Credential(accessToken: "t", expiresAt: now.addingTimeInterval(60)).isExpired(at: now))
        #expect(Credential(accessToken: "t", expiresAt: now.addingTimeInterval(60)).isExpired(at: now, leeway: 60))
        #expect(Credential(accessToken: "t", expiresAt: now).isExpired(at: now))
    }

    @Test("100 concurrent tasks never crash and leave a consistent state, store and event history")
    func concurrentUse() async throws {
        // Given
        let store = ScriptedCredentialStore()
        var finalState: (loggedIn: Bool, token: String?, user: User?, credential: Credential?)?
        // When
        let events = try await recordEvents(store: store) { manager in
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        switch index % 6 {
                        case 0: try? manager.login(user: User(id: index, name: "U\(index)"), token: "t\(index)")
                        case 1: try? manager.logout()
                        case 2: manager.expire()
                        case 3: try? manager.update(user: User(id: index, name: "U\(index)"))
                        case 4:
                            if let signed = try? await manager.authorize() { _ = try? await manager.authorizationRejected(signed) }
                        default: _ = (manager.isLoggedIn, manager.sessionToken, manager.currentUser, manager.credential)
                        }
                    }
                }
            }
            finalState = (manager.isLoggedIn, manager.sessionToken, manager.currentUser, manager.credential)
        }
        // Then the state agrees with itself and with the store
        let state = try #require(finalState)
        #expect(state.loggedIn == (state.token != nil))
        #expect(state.loggedIn == (state.credential != nil))
        #expect(state.loggedIn == (state.user != nil))
        #expect(store.stored?.credential == state.credential)
        // And sessions start and end strictly in turn
        let transitions = events.filter { !$0.hasPrefix("userUpdated") }
        for (index, event) in transitions.enumerated() {
            let starts = event.hasPrefix("loggedIn")
            #expect(starts == index.isMultiple(of: 2), "out of order at \(index): \(transitions)")
        }
        #expect(transitions.count.isMultiple(of: 2) != state.loggedIn)
    }
}

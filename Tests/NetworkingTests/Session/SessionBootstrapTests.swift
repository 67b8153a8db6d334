import Foundation
import Networking
import NetworkingTestSupport
import Testing

@Suite("SessionManager bootstrap and store failures", .timeLimit(.minutes(1)))
struct SessionBootstrapTests {
    private static let stored = PersistedSession(credential: Credential(accessToken: "stored-t"), user: ["id": 1, "name": "Ann"])

    /// A repository fetching `users/me` through a stub, signed by `manager`.
    private func usersRepository(_ manager: SessionManager<User>, _ route: StubTransport.Route) throws -> (UsersRepository, StubTransport) {
        let transport = StubTransport(routes: [route])
        return (UsersRepository(configuration: try makeConfiguration(), sessionManager: manager, transport: transport), transport)
    }

    // MARK: - Bootstrap

    @Test("With nothing stored, bootstrap finds no session")
    func nothingStored() async throws {
        let events = try await recordEvents { manager in
            guard case .noSession = await manager.bootstrap() else {
                Issue.record("expected noSession")
                return
            }
            #expect(!manager.isLoggedIn)
        }
        #expect(events.isEmpty)
    }

    @Test("A stored session with an empty token is no session")
    func emptyStoredToken() async throws {
        let store = ScriptedCredentialStore(PersistedSession(credential: Credential(accessToken: "")))
        let events = try await recordEvents(store: store) { manager in
            guard case .noSession = await manager.bootstrap() else {
                Issue.record("expected noSession")
                return
            }
            #expect(!manager.isLoggedIn)
        }
        #expect(events.isEmpty)
    }

    @Test("Without a fetcher, a stored session is restored with its stored user")
    func storedSession() async throws {
        let events = try await recordEvents(store: ScriptedCredentialStore(Self.stored)) { manager in
            guard case .restored(let user) = await manager.bootstrap() else {
                Issue.record("expected restored")
                return
            }
            #expect(user == ann)
            #expect(manager.currentUser == ann)
            #expect(manager.sessionToken == "stored-t")
        }
        #expect(events == ["restored"])
    }

    @Test("A stored user that no longer decodes is dropped, the session kept")
    func undecodableStoredUser() async throws {
        let store = ScriptedCredentialStore(PersistedSession(credential: Credential(accessToken: "t"), user: ["id": "x"]))
        let events = try await recordEvents(store: store) { manager in
            guard case .restored(nil) = await manager.bootstrap() else {
                Issue.record("expected restored(nil)")
                return
            }
            #expect(manager.isLoggedIn)
            #expect(manager.currentUser == nil)
        }
        #expect(events == ["restored"])
    }

    @Test("The fetched user replaces the stored one and is stored, signed with the stored token")
    func fetcherSuccess() async throws {
        let store = ScriptedCredentialStore(Self.stored)
        var sent: [TransportRequest] = []
        let events = try await recordEvents(store: store) { manager in
            let (repository, transport) = try usersRepository(manager, .json(.get, "users/me", #"{"id": 2, "name": "Bob"}"#))
            guard case .restored(let user) = await manager.bootstrap(fetchingUserWith: repository) else {
                Issue.record("expected restored")
                return
            }
            #expect(user == bob)
            #expect(manager.currentUser == bob)
            sent = transport.requests
        }
        #expect(events == ["restored", "userUpdated(Bob)"])
        #expect(sent.map { $0.headers["Authorization"] } == ["Bearer stored-t"])
        #expect(store.stored?.user == ["id": 2, "name": "Bob"])
        #expect(store.stored?.credential.accessToken == "stored-t")
    }

    @Test("A 401 from the fetcher expires the session once")
    func fetcherUnauthorized() async throws {
        let store = ScriptedCredentialStore(Self.stored)
        let events = try await recordEvents(store: store) { manager in
            let (repository, _) = try usersRepository(manager, .status(.get, "users/me", 401))
            guard case .expired = await manager.bootstrap(fetchingUserWith: repository) else {
                Issue.record("expected expired")
                return
            }
            #expect(!manager.isLoggedIn)
        }
        #expect(events == ["restored", "expired"])
        #expect(store.stored == nil)
    }

    @Test("A 401 from a fetcher that does not sign with the session still expires it")
    func unsignedFetcherUnauthorized() async throws {
        let summary = RequestSummary(method: .get, url: URL(string: "http://api.test/users/me")!)
        let fetcher = FixedUserFetcher(result: .failure(.unauthenticatedSession(ErrorContext(request: summary))))
        let events = try await recordEvents(store: ScriptedCredentialStore(Self.stored)) { manager in
            guard case .expired = await manager.bootstrap(fetchingUserWith: fetcher) else {
                Issue.record("expected expired")
                return
            }
            #expect(!manager.isLoggedIn)
        }
        #expect(events == ["restored", "expired"])
    }

    @Test("A network failure keeps the session and its stored user")
    func fetcherOffline() async throws {
        let store = ScriptedCredentialStore(Self.stored)
        let events = try await recordEvents(store: store) { manager in
            let (repository, _) = try usersRepository(manager, .failure(.get, "users/me", .network(.connectionRefused)))
            guard case .userUnavailable(.noNetworkConnection(.connectionRefused, _)) = await manager.bootstrap(fetchingUserWith: repository)
            else {
                Issue.record("expected userUnavailable")
                return
            }
            #expect(manager.sessionToken == "stored-t")
            #expect(manager.currentUser == ann)
        }
        #expect(events == ["restored"])
        #expect(store.stored == Self.stored)
    }

    @Test("A store that cannot be read is reported and treated as logged out")
    func corruptStore() async throws {
        let corrupt = CredentialStoreError.corrupt(path: "/test/session.json", reason: "unexpected end of file")
        let events = try await recordEvents(store: ScriptedCredentialStore(loadError: corrupt)) { manager in
            guard case .storeFailed(let error) = await manager.bootstrap(fetchingUserWith: FixedUserFetcher(result: .success(bob)))
            else {
                Issue.record("expected storeFailed")
                return
            }
            #expect(error == corrupt)
            #expect(!manager.isLoggedIn)
        }
        #expect(events == ["storeFailed"])
    }

    @Test("Bootstrap while logged in keeps the session and does not read the store")
    func bootstrapWhileLoggedIn() async throws {
        let store = ScriptedCredentialStore()
        let events = try await recordEvents(store: store) { manager in
            try manager.login(user: ann, token: "live")
            store.failLoads(with: .unreadable(path: "/test/session.json", reason: "must not be read"))
            guard case .restored(let user) = await manager.bootstrap() else {
                Issue.record("expected restored")
                return
            }
            #expect(user == ann)
            #expect(manager.sessionToken == "live")
        }
        #expect(events == ["loggedIn(Ann)"])
    }

    @Test("A new manager over the same file restores the credential and the stored user")
    func restoresAcrossManagers() async throws {
        // Given a session saved by one manager
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("app/session.json")
        // A whole-second expiry: the file keeps dates as ISO 8601 without fractions.
        let credential = Credential(
            accessToken: "t1", refreshToken: "r1", expiresAt: Date(timeIntervalSince1970: 2_000_000_000))
        try SessionManager<User>(store: FileCredentialStore(fileURL: file)).login(user: ann, credential: credential)
        // When another manager bootstraps from it
        let restored = SessionManager<User>(store: FileCredentialStore(fileURL: file))
        let outcome = await restored.bootstrap()
        // Then
        guard case .restored(let user) = outcome else {
            Issue.record("expected restored, got \(outcome)")
            return
        }
        #expect(user == ann)
        #expect(restored.credential == credential)
        #expect(restored.currentUser == ann)
    }

    // MARK: - Store failures

    @Test("A failed save leaves login, user and credential updates undone")
    func saveFailures() async throws {
        let store = ScriptedCredentialStore()
        let events = try await recordEvents(store: store) { manager in
            store.failSaves(with: storeFailure)
            #expect(throws: SessionError.storeFailed(storeFailure)) { try manager.login(user: ann, token: "t1") }
            #expect(!manager.isLoggedIn)
            store.failSaves(with: nil)
            try manager.login(user: ann, token: "t1")
            store.failSaves(with: storeFailure)
            #expect(throws: SessionError.storeFailed(storeFailure)) { try manager.update(user: bob) }
            #expect(throws: SessionError.storeFailed(storeFailure)) { try manager.update(credential: Credential(accessToken: "t2")) }
            #expect(manager.currentUser == ann)
            #expect(manager.sessionToken == "t1")
            #expect(store.stored?.credential.accessToken == "t1")
        }
        #expect(events == ["loggedIn(Ann)"])
    }

    @Test("A failed delete still ends the session: logout throws, expiry and 401s only report it")
    func deleteFailures() async throws {
        let store = ScriptedCredentialStore()
        let events = try await recordEvents(store: store) { manager in
            store.failDeletes(with: storeFailure)
            try manager.login(user: ann, token: "t1")
            #expect(throws: SessionError.storeFailed(storeFailure)) { try manager.logout() }
            #expect(!manager.isLoggedIn)
            store.failDeletes(with: nil)
            try manager.login(user: ann, token: "t2")
            store.failDeletes(with: storeFailure)
            manager.expire()
            #expect(!manager.isLoggedIn)
            store.failDeletes(with: nil)
            try manager.login(user: bob, token: "t3")
            store.failDeletes(with: storeFailure)
            let current = try #require(try await manager.authorize())
            _ = try await manager.authorizationRejected(current)
            #expect(!manager.isLoggedIn)
        }
        #expect(
            events == [
                "loggedIn(Ann)", "storeFailed", "loggedOut", "loggedIn(Ann)", "storeFailed", "expired", "loggedIn(Bob)",
                "storeFailed", "expired",
            ])
    }
}

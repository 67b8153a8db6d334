import Foundation
import Networking
import Testing

/// The session manager wired to repositories, against the test API.
@Suite("Session end to end")
struct SessionIntegrationTests {
    @Test("a new SessionManager over the same file store restores the session and fetches the user")
    func restoreAcrossRestart() async throws {
        // Given a session stored in a file by one manager
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("session-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileCredentialStore(fileURL: folder.appendingPathComponent("session.json"))
        let servers = try TestServers.require()
        let configuration = try TestServers.configuration(servers.apiURL)
        let first = SessionManager<TestAPI.User>(store: store)
        let login = try await TestAPI.Repository(configuration: configuration).login().get()
        try first.login(user: login.user, credential: Credential(accessToken: login.token))

        // When a second manager bootstraps from the same store
        let second = SessionManager<TestAPI.User>(store: store)
        let events = second.events()
        let repository = TestAPI.Repository(configuration: configuration, sessionManager: second)
        let outcome = await second.bootstrap(fetchingUserWith: repository)

        // Then it is logged in with the same token and the fetched user
        guard case .restored(let user?) = outcome else {
            Issue.record("expected .restored with a user, got \(outcome)")
            return
        }
        #expect(user == login.user)
        #expect(second.sessionToken == login.token)
        #expect(second.currentUser == login.user)
        var names: [String] = []
        for await event in events {
            names.append(String(describing: event).components(separatedBy: "(").first ?? "")
            if names.count == 2 { break }
        }
        #expect(names == ["restored", "userUpdated"])
    }

    @Test("bootstrap with a token the server rejects expires the session")
    func bootstrapWithRejectedToken() async throws {
        let servers = try TestServers.require()
        let configuration = try TestServers.configuration(servers.apiURL)
        let repository = TestAPI.Repository(configuration: configuration)
        let login = try await repository.login().get()
        _ = await repository.expire(token: login.token)
        let store = InMemoryCredentialStore(PersistedSession(credential: Credential(accessToken: login.token)))
        let session = SessionManager<TestAPI.User>(store: store)
        let outcome = await session.bootstrap(
            fetchingUserWith: TestAPI.Repository(configuration: configuration, sessionManager: session))
        guard case .expired = outcome else {
            Issue.record("expected .expired, got \(outcome)")
            return
        }
        #expect(!session.isLoggedIn)
        #expect(try store.load() == nil)
    }

    @Test("bootstrap when the server is down keeps the session and reports the error")
    func bootstrapOffline() async throws {
        let store = InMemoryCredentialStore(PersistedSession(credential: Credential(accessToken: "stored-token")))
        let session = SessionManager<TestAPI.User>(store: store)
        let offline = TestAPI.Repository(
            configuration: try TestServers.configuration("http://127.0.0.1:\(try unusedPort())/api/v1"), sessionManager: session)
        let outcome = await session.bootstrap(fetchingUserWith: offline)
        guard case .userUnavailable(.noNetworkConnection(.connectionRefused, _)) = outcome else {
            Issue.record("expected .userUnavailable(connection refused), got \(outcome)")
            return
        }
        #expect(session.isLoggedIn)
    }

    @Test("40 concurrent requests share one session safely")
    func concurrentRequests() async throws {
        let (repository, session, login) = try await TestAPI.loggedIn()
        let users = await withTaskGroup(of: Result<TestAPI.User, RepositoryError>.self) { group in
            for _ in 0..<40 { group.addTask { await repository.fetchCurrentUser() } }
            var results: [Result<TestAPI.User, RepositoryError>] = []
            for await result in group { results.append(result) }
            return results
        }
        #expect(users.count == 40)
        #expect(users.allSatisfy { (try? $0.get()) == login.user })
        #expect(session.isLoggedIn)
    }

    @Test("a 401 from another origin a redirect led to is not the session's: it stays logged in", arguments: TransportUnderTest.all)
    func crossOriginUnauthorized(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let (repository, session, _) = try await TestAPI.loggedIn(transport: transport.make())
        // The test API redirects to httpbin (another port, so another origin), which answers 401.
        let result = await repository.performRequest(
            Endpoint<Void>.get("redirect/302", parameters: ["to": servers.httpbinURL + "/status/401"]))
        guard case .authenticationFailed(let context)? = result.failure else {
            Issue.record("expected .authenticationFailed, got \(result)")
            return
        }
        #expect(context.statusCode == 401)
        #expect(session.isLoggedIn)
    }

    @Test("a 401 for an old token does not end a newer session")
    func staleRejection() async throws {
        let (repository, session, first) = try await TestAPI.loggedIn()
        // Given a request signed with the first token, rejected after the user logged in again
        let old = try #require(try await session.authorize())
        _ = await repository.expire(token: first.token)
        try session.logout()
        let second = try await repository.login().get()
        try session.login(user: second.user, credential: Credential(accessToken: second.token))
        // When the old token's rejection is reported
        let replay = try await session.authorizationRejected(old)
        // Then the new session is intact, and the request is not replayed: it was made for the
        // other session, and must not go out with the new user's token
        #expect(replay == nil)
        #expect(session.sessionToken == second.token)
        #expect(try await repository.fetchCurrentUser().get() == second.user)
    }
}

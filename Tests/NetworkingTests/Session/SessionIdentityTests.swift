import Foundation
import Networking
import Testing

/// A user with an identity of its own.
private struct Member: Codable, Sendable, Hashable, Identifiable {
    let id: Int
    let name: String
}

@Suite("SessionManager.sessionIdentity")
struct SessionIdentityTests {
    @Test("A user that is not Identifiable keeps the session's identity through user updates, new credentials and a restart")
    func stableDigestIdentity() async throws {
        let store = InMemoryCredentialStore()
        let manager = SessionManager<User>(store: store)
        #expect(manager.sessionIdentity == nil)
        try manager.login(user: ann, credential: Credential(accessToken: "t1"))
        let identity = try #require(manager.sessionIdentity)
        #expect(identity.hasPrefix("sha256:"))
        try manager.update(user: User(id: 1, name: "Ann B."))
        try manager.update(credential: Credential(accessToken: "t2"))
        #expect(manager.sessionIdentity == identity)
        #expect((try? store.load())??.identity == identity)
        // A restart: a new manager over the same store.
        let restarted = SessionManager<User>(store: store)
        _ = await restarted.bootstrap()
        #expect(restarted.sessionIdentity == identity)
        // Another user's session has another identity.
        try restarted.logout()
        #expect(restarted.sessionIdentity == nil)
        try restarted.login(user: bob, credential: Credential(accessToken: "t3"))
        #expect(restarted.sessionIdentity != identity)
    }

    @Test("An Identifiable user is named by its id")
    func identifiableUsers() throws {
        let manager = SessionManager<Member>()
        try manager.login(user: Member(id: 7, name: "Ann"), credential: Credential(accessToken: "t1"))
        #expect(manager.sessionIdentity == "user:7")
        try manager.update(user: Member(id: 7, name: "Ann B."))
        #expect(manager.sessionIdentity == "user:7")
    }

    @Test("An Identifiable user whose stored form no longer decodes keeps its id as the identity after a restart")
    func identifiableUserThatNoLongerDecodes() async throws {
        let store = InMemoryCredentialStore()
        try SessionManager<Member>(store: store).login(user: Member(id: 7, name: "Ann"), credential: Credential(accessToken: "t1"))
        // An app update changed the user's type: the stored user has no `email`
        struct NewMember: Codable, Sendable, Identifiable {
            let id: Int
            let email: String
        }
        let restarted = SessionManager<NewMember>(store: store)
        _ = await restarted.bootstrap()
        #expect(restarted.currentUser == nil)
        #expect(restarted.sessionIdentity == "user:7")
    }
}

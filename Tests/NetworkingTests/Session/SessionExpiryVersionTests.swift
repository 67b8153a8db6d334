import Foundation
import Testing

@testable import Networking

/// The step that ends a session for a request (a 401 with nothing to refresh, a rejected
/// refresh) acts only on the credential its decision saw: a replaced one keeps the session, and
/// the request asks again rather than hear that the session ended.
@Suite("Ending a session for a request, against a replaced credential")
struct SessionExpiryVersionTests {
    @Test("A decision to end the session made before update(credential:) leaves the session; one at the current version ends it")
    func expiryIsGatedByVersion() async throws {
        let manager = SessionManager<User>()
        try manager.login(user: ann, credential: Credential(accessToken: "t1"))
        let first = try #require(try await manager.authorize())
        try manager.update(credential: Credential(accessToken: "t2"))
        // The decision saw t1's version: t2 keeps the session.
        #expect(!manager.expire(session: first.sessionID, version: first.version))
        #expect(manager.isLoggedIn)
        let second = try #require(try await manager.authorize())
        #expect(second.headerValue == "Bearer t2")
        #expect(manager.expire(session: second.sessionID, version: second.version))
        #expect(!manager.isLoggedIn)
        manager.waitUntilStored()
    }
}

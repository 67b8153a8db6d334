import Foundation
import Networking
import Testing

@Suite("Values holding tokens describe themselves without them")
struct CredentialDescriptionTests {
    let credential = Credential(accessToken: "acc3ss", refreshToken: "r3fresh", expiresAt: Date(timeIntervalSince1970: 0))

    func everyDescription(of value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return ["\(value)", String(reflecting: value), dumped]
    }

    @Test("Credential, PersistedSession and SessionAuthorization")
    func redacted() {
        let session = PersistedSession(credential: credential, user: ["name": "Ann", "password": "hunter2"], identity: "ann")
        let authorization = SessionAuthorization(
            headerValue: "Bearer acc3ss", version: 3, sessionID: 7, sessionIdentity: "user:ann@example.com")
        for text in everyDescription(of: credential) + everyDescription(of: session) + everyDescription(of: authorization) {
            for secret in ["acc3ss", "r3fresh", "hunter2"] {
                #expect(!text.contains(secret), "\(text)")
            }
            #expect(text.contains("<redacted>"), "\(text)")
        }
        #expect("\(session)".contains("Ann"))
        #expect("\(authorization)".contains("version: 3"))
        // Whose session it is may name the user: left out too.
        #expect(everyDescription(of: authorization).allSatisfy { !$0.contains("ann@example.com") })
        #expect("\(Credential(accessToken: "a"))".contains("refreshToken: nil"))
    }
}

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

    @Test("Requests, responses, errors and a configuration's default headers dump without their secrets")
    func dumpsAreRedacted() throws {
        let url = try #require(URL(string: "https://api.example.com/books?access_token=t0ken&page=2"))
        let request = TransportRequest(
            method: .get, url: url, headers: ["Authorization": "Bearer acc3ss", "Cookie": "sid=c00kie", "X-Trace": "visible"])
        let response = TransportResponse(statusCode: 401, headers: ["Set-Cookie": "sid=c00kie; Path=/"], url: url)
        let error = RepositoryError.requestError(ErrorContext(request: request.summary, response: response))
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.defaultHeaders = ["X-Api-Key": "k3y", "User-Agent": "app/1.0"]
        for value in [request, response, error, request.summary, configuration] as [Any] {
            for text in everyDescription(of: value) {
                for secret in ["acc3ss", "c00kie", "t0ken", "k3y"] {
                    #expect(!text.contains(secret), "\(text)")
                }
            }
        }
        var dumped = ""
        dump(request, to: &dumped)
        #expect(dumped.contains("X-Trace: visible") && dumped.contains("page=2"), "\(dumped)")
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

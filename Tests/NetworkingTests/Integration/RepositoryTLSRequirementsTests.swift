import Foundation
import Testing

@testable import Networking

/// What a repository's TLS and credential rules cover beyond its own calls: requests made by
/// hand, redirects to other origins, and plain `http` to the API's host. Against the test API
/// (HTTP and HTTPS) and httpbin.
@Suite("A repository's TLS and credential rules")
struct RepositoryTLSRequirementsTests {
    @Test("A request made by hand and given to send(_:context:) is pinned as the repository is")
    func sendAppliesPins() async throws {
        // Given: a repository pinned to a key the test API's HTTPS server does not have
        let servers = try TestServers.require()
        let wrong = TestAPI.Repository(
            configuration: try TestServers.configuration(servers.apiTLSURL, pins: [servers.otherPin], caFile: servers.caFile),
            transport: LibcurlTransport.shared)
        let right = TestAPI.Repository(
            configuration: try TestServers.configuration(servers.apiTLSURL, pins: [servers.serverPin], caFile: servers.caFile),
            transport: LibcurlTransport.shared)
        // When: a request without TLS requirements of its own is sent through each
        let request = TransportRequest(method: .get, url: try #require(URL(string: servers.apiTLSURL + "/health")))
        let refused = await wrong.send(request, context: RequestContext(requiresSession: false))
        let accepted = await right.send(request, context: RequestContext(requiresSession: false))
        // Then: the wrong pin refuses it before anything is sent; the right one lets it through
        guard case .failure(.pinningFailed) = refused else {
            Issue.record("expected pinningFailed, got \(refused)")
            return
        }
        #expect((try? accepted.get())?.statusCode == 200)
    }

    @Test("A redirect to another origin drops every credential field, and keeps the others", arguments: TransportUnderTest.all)
    func crossOriginDropsCredentialFields(transport: TransportUnderTest) async throws {
        // Given: the test API redirecting to httpbin (another port, so another origin), which echoes headers
        let servers = try TestServers.require()
        let repository = try TestAPI.anonymous(transport: transport.make())
        // When
        let answer = try await repository.performRawRequest(
            .get(
                "redirect/302", parameters: ["to": servers.httpbinURL + "/headers"],
                headers: ["X-Api-Key": "k-123", "X-Auth-Token": "t-456", "X-Trace": "trace-1"])
        ).get()
        // Then
        let headers = try #require(answer.json?["headers"])
        #expect(headers["X-Api-Key"] == nil && headers["X-Auth-Token"] == nil)
        #expect(headers["X-Trace"]?.stringValue == "trace-1")
    }

    @Test("With an https API, the session's token never goes over plain http to the same host")
    func credentialOnlyOverHTTPS() async throws {
        // Given: a session on the test API's HTTPS server, and a route to its plain HTTP twin (same host)
        let servers = try TestServers.require()
        let configuration = try TestServers.configuration(servers.apiTLSURL, caFile: servers.caFile)
        let (repository, _, login) = try await TestAPI.loggedIn(transport: LibcurlTransport.shared, configuration: configuration)
        #expect(URL(string: servers.apiURL)?.host == configuration.baseURL.host)
        // When
        let plain: TestAPI.Echo = try await repository.performRequest(.get(servers.apiURL + "/echo/plain")).get()
        let secure: TestAPI.Echo = try await repository.performRequest(.get("echo/secure")).get()
        // Then
        #expect(plain.header("Authorization") == nil)
        #expect(secure.header("Authorization") == "Bearer \(login.token)")
    }
}

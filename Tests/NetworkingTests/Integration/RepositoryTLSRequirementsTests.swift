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

    @Test(
        "A redirect to another host drops every credential field; to the same host on another port, only Authorization",
        arguments: TransportUnderTest.all)
    func crossOriginDropsCredentialFields(transport: TransportUnderTest) async throws {
        // Given: the test API (127.0.0.1) redirecting to httpbin, which echoes headers, by another
        // host name (localhost) and by the same one on another port
        let servers = try TestServers.require()
        let repository = try TestAPI.anonymous(transport: transport.make())
        var otherHost = try #require(URLComponents(string: servers.httpbinURL + "/headers"))
        #expect(otherHost.host == "127.0.0.1")
        otherHost.host = "localhost"
        let fields: HTTPHeaders = [
            "Authorization": "Bearer a-1", "X-Api-Key": "k-123", "X-Auth-Token": "t-456", "X-Trace": "trace-1",
            "X-Functions-Key": "f-789",
        ]
        // When
        let elsewhere = try await repository.performRawRequest(
            .get("redirect/302", parameters: ["to": try #require(otherHost.string)], headers: fields)
        ).get()
        let samePlace = try await repository.performRawRequest(
            .get("redirect/302", parameters: ["to": servers.httpbinURL + "/headers"], headers: fields)
        ).get()
        // Then
        let dropped = try #require(elsewhere.json?["headers"])
        #expect(dropped["Authorization"] == nil && dropped["X-Api-Key"] == nil && dropped["X-Auth-Token"] == nil)
        #expect(dropped["X-Functions-Key"] == nil)
        #expect(dropped["X-Trace"]?.stringValue == "trace-1")
        let kept = try #require(samePlace.json?["headers"])
        #expect(kept["Authorization"] == nil)
        #expect(kept["X-Api-Key"]?.stringValue == "k-123" && kept["X-Trace"]?.stringValue == "trace-1")
        #expect(kept["X-Functions-Key"]?.stringValue == "f-789")
    }

    @Test("A default credential is not sent to an absolute URL on another host; the other defaults are", arguments: TransportUnderTest.all)
    func defaultCredentialsStayOnTheAPIsHost(transport: TransportUnderTest) async throws {
        // Given: the test API (127.0.0.1) with an API key in its default headers, and httpbin, which
        // echoes headers, by another host name (localhost)
        let servers = try TestServers.require()
        let configuration = try TestServers.configuration(
            servers.apiURL, defaultHeaders: ["X-Api-Key": "k-123", "X-Client": "books/1"])
        let repository = TestAPI.Repository(configuration: configuration, transport: transport.make())
        var otherHost = try #require(URLComponents(string: servers.httpbinURL + "/headers"))
        otherHost.host = "localhost"
        // When
        let elsewhere = try await repository.performRawRequest(.get(try #require(otherHost.string))).get()
        let sameHost = try await repository.performRawRequest(.get(servers.httpbinURL + "/headers")).get()
        // Then
        let without = try #require(elsewhere.json?["headers"])
        #expect(without["X-Api-Key"] == nil)
        #expect(without["X-Client"]?.stringValue == "books/1")
        let with = try #require(sameHost.json?["headers"])
        #expect(with["X-Api-Key"]?.stringValue == "k-123")
    }

    @Test("With an https API, a call that needs the session and goes over plain http to the same host is refused")
    func credentialOnlyOverHTTPS() async throws {
        // Given: a session on the test API's HTTPS server, and a route to its plain HTTP twin (same host)
        let servers = try TestServers.require()
        let configuration = try TestServers.configuration(servers.apiTLSURL, caFile: servers.caFile)
        let (repository, _, login) = try await TestAPI.loggedIn(transport: LibcurlTransport.shared, configuration: configuration)
        #expect(URL(string: servers.apiURL)?.host == configuration.baseURL.host)
        // When
        let plain: Result<TestAPI.Echo, RepositoryError> = await repository.performRequest(.get(servers.apiURL + "/echo/plain"))
        let secure: TestAPI.Echo = try await repository.performRequest(.get("echo/secure")).get()
        // Then
        guard case .invalidRequest(let reason, _)? = plain.failure else {
            Issue.record("expected invalidRequest, got \(plain)")
            return
        }
        #expect(reason.contains("https only"))
        #expect(secure.header("Authorization") == "Bearer \(login.token)")
    }
}

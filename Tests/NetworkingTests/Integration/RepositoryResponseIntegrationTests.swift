import Foundation
import Networking
import Testing

/// What the test API's `/poll/<key>` answers.
private struct PollStatus: Decodable, Sendable {
    let key: String
    let status: String
    let attempts: Int
}

/// `RepositoryResponse`, raw responses and `Link` headers against the real test API and httpbin.
@Suite("RepositoryResponse against real servers")
struct RepositoryResponseIntegrationTests {
    @Test("A decoded model comes with the real status, headers, URL and request")
    func decodedWithMetadata() async throws {
        // Given
        let repository = try TestAPI.anonymous()
        // When
        let result: Result<RepositoryResponse<TestAPI.Echo>, RepositoryError> = await repository.performRequest(
            Endpoint.get("echo", parameters: ["q": "dune"]).withoutSession())
        // Then
        let response = try result.get()
        #expect(response.value.method == "GET")
        #expect(response.value.args["q"] == ["dune"])
        #expect(response.statusCode == 200)
        #expect(response.headers["Content-Type"]?.contains("application/json") == true)
        #expect(response.headers["Content-Length"] != nil)
        #expect(response.url?.path == "/api/v1/echo")
        #expect(response.request.method == .get)
        #expect(response.request.url.query == "q=dune")
        #expect(response.source == .network)
    }

    @Test("After redirects, the URL is the final one and the request the one that was made", arguments: TransportUnderTest.all)
    func finalURLAfterRedirects(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        // Each hop waits for the shared pool: a minute, not 20 s, for a busy test run.
        let repository = try TestAPI.anonymous(servers.httpbinURL, transport: transport.shared, timeout: 60)
        let result: Result<RepositoryResponse<JSONValue>, RepositoryError> = await repository.performRequest(
            Endpoint.get("redirect/2").withoutSession())
        let response = try result.get()
        #expect(response.statusCode == 200)
        #expect(response.url?.path == "/get")
        #expect(response.request.url.path == "/redirect/2")
    }

    @Test("Void with metadata: a 204 has its status and no body")
    func voidWithMetadata() async throws {
        // Given
        let repository = try TestAPI.anonymous()
        // When
        let result: Result<RepositoryResponse<Void>, RepositoryError> = await repository.performRequest(
            Endpoint.delete("status/204").withoutSession())
        // Then
        let response = try result.get()
        #expect(response.statusCode == 204)
        #expect(response.request.method == .delete)
        #expect(response.url?.path == "/api/v1/status/204")
    }

    @Test("Polling with metadata: the final 200 after two 202s")
    func pollingWithMetadata() async throws {
        // Given
        let servers = try TestServers.require()
        let repository = TestAPI.Repository(configuration: try TestServers.configuration(servers.apiURL, secondsBetweenPolls: 0.01))
        let key = "response-\(UUID().uuidString)"
        // When
        let result: Result<RepositoryResponse<PollStatus>, RepositoryError> = await repository.performPollingRequest(
            Endpoint.get("poll/\(key)", parameters: ["ready_after": 2]).withoutSession())
        // Then
        let response = try result.get()
        #expect(response.value.status == "done")
        #expect(response.value.attempts == 3)
        #expect(response.statusCode == 200)
        #expect(response.url?.path == "/api/v1/poll/\(key)")
    }

    @Test("Endpoint<TransportResponse> returns a malformed body as it came, without decoding it")
    func rawMalformedBody() async throws {
        // Given
        let repository = try TestAPI.anonymous()
        // When
        let raw = try await repository.performRequest(Endpoint<TransportResponse>.get("broken/malformed").withoutSession()).get()
        // Then
        #expect(raw.statusCode == 200)
        #expect(raw.text == #"{"id": 1, "title": "Broken"#)
        #expect(raw.json == nil)
    }

    @Test("httpbin's Link header: relative and absolute targets, several links in one field")
    func linkFromHTTPBin() async throws {
        // Given
        let servers = try TestServers.require()
        let repository = try TestAPI.anonymous(servers.httpbinURL)
        let link = #"</books?page=3>; rel="next", <https://example.com/books?page=1>; rel="prev first""#
        // When
        let result: Result<RepositoryResponse<JSONValue>, RepositoryError> = await repository.performRequest(
            Endpoint.get("response-headers", parameters: ["Link": link]).withoutSession())
        // Then
        let response = try result.get()
        #expect(response.headers["Link"] == link)
        #expect(response.link(rel: "next")?.absoluteString == "\(servers.httpbinURL)/books?page=3")
        #expect(response.link(rel: "prev")?.absoluteString == "https://example.com/books?page=1")
        #expect(response.link(rel: "first")?.absoluteString == "https://example.com/books?page=1")
        #expect(response.link(rel: "last") == nil)
    }
}

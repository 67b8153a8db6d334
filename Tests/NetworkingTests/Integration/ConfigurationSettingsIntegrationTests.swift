import Foundation
import Networking
import Testing

/// Settings changed after init, and dictionary variables, as the real test API receives them.
@Suite("Configuration settings against the test API")
struct ConfigurationSettingsIntegrationTests {
    @Test("Changing domainURL, port and subdomainURL moves repositories made afterwards to another server")
    func moveToAnotherServer() async throws {
        // Given: a configuration for httpbin
        let servers = try TestServers.require()
        let api = try #require(URLComponents(string: servers.apiURL))
        var configuration = try TestServers.configuration(servers.httpbinURL)
        let before = TestAPI.Repository(configuration: configuration)
        // When: it is pointed at the test API
        configuration.domainURL = try #require(api.host)
        configuration.port = api.port
        configuration.subdomainURL = api.path
        let after = TestAPI.Repository(configuration: configuration)
        let fromBefore = try await before.performRequest(Endpoint<TransportResponse>.get("get").withoutSession()).get()
        let fromAfter = try await after.performRequest(Endpoint<TransportResponse>.get("health").withoutSession()).get()
        // Then
        #expect(fromBefore.json?["url"]?.stringValue?.hasPrefix(servers.httpbinURL) == true)
        #expect(fromAfter.json?["status"] == "ok")
        #expect(fromAfter.url?.absoluteString == servers.apiURL + "/health")
    }

    @Test("A shorter timeout set after init applies to repositories made afterwards")
    func timeoutChanged() async throws {
        // Given
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL, timeout: 30)
        // When
        configuration.timeout = 0.3
        let repository = TestAPI.Repository(configuration: configuration)
        let result = await repository.performRequest(Endpoint<Void>.get("slow", parameters: ["seconds": 3]).withoutSession())
        // Then: with the 30 s timeout the call would have succeeded after 3 s
        guard case .timeout? = result.failure else {
            Issue.record("expected .timeout, got \(result)")
            return
        }
    }

    @Test("defaultHeaders, queryEncodedMethods and queryEncodingStyle set after init are what the server receives")
    func requestShapingChanged() async throws {
        // Given
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL)
        // When
        configuration.defaultHeaders = ["X-App": "books-cli"]
        configuration.queryEncodedMethods = [.get, .post]
        configuration.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric)
        let repository = TestAPI.Repository(configuration: configuration)
        let echo: TestAPI.Echo = try await repository.performRequest(
            Endpoint.post("echo", parameters: ["ids": [1, 2], "draft": true]).withoutSession()
        ).get()
        // Then
        #expect(echo.header("X-App") == "books-cli")
        #expect(echo.query == "draft=1&ids=1&ids=2")
        #expect(echo.args == ["draft": ["1"], "ids": ["1", "2"]])
        #expect(echo.data.isEmpty)
    }

    @Test("headers: and parameters: take dictionary variables as well as literals, for every method")
    func dictionaryVariables() async throws {
        // Given
        let repository = try TestAPI.anonymous()
        let strings: [String: String] = ["q": "dune", "lang": "en"]
        let numbers: [String: Int] = ["page": 2, "size": 10]
        let mixed: [String: any Sendable] = ["q": "dune", "page": 2, "draft": true]
        let headers: [String: String] = ["X-Custom": "from-variable"]
        // When
        let getStrings: TestAPI.Echo = try await repository.performRequest(
            Endpoint.get("echo", parameters: strings, headers: headers).withoutSession()
        ).get()
        let getNumbers: TestAPI.Echo = try await repository.performRequest(Endpoint.get("echo", parameters: numbers).withoutSession()).get()
        let getMixed: TestAPI.Echo = try await repository.performRequest(Endpoint.get("echo", parameters: mixed).withoutSession()).get()
        let getHeaders: TestAPI.Echo = try await repository.performRequest(Endpoint.get("echo", headers: headers).withoutSession()).get()
        let getLiterals: TestAPI.Echo = try await repository.performRequest(
            Endpoint.get("echo", parameters: ["q": "dune"], headers: ["X-Custom": "literal"]).withoutSession()
        ).get()
        let post: TestAPI.Echo = try await repository.performRequest(
            Endpoint.post("echo", parameters: mixed, headers: headers).withoutSession()
        ).get()
        let postHeaders: TestAPI.Echo = try await repository.performRequest(
            Endpoint.post("echo", parameters: ["a": 1], headers: headers).withoutSession()
        ).get()
        let put: TestAPI.Echo = try await repository.performRequest(
            Endpoint.put("echo", parameters: numbers, headers: headers).withoutSession()
        ).get()
        let putHeaders: TestAPI.Echo = try await repository.performRequest(Endpoint.put("echo", headers: headers).withoutSession()).get()
        let patch: TestAPI.Echo = try await repository.performRequest(Endpoint.patch("echo", parameters: strings).withoutSession()).get()
        let patchHeaders: TestAPI.Echo = try await repository.performRequest(
            Endpoint.patch("echo", parameters: ["a": 1], headers: headers).withoutSession()
        ).get()
        let delete: TestAPI.Echo = try await repository.performRequest(
            Endpoint.delete("echo", parameters: numbers, headers: headers).withoutSession()
        ).get()
        let deleteHeaders: TestAPI.Echo = try await repository.performRequest(Endpoint.delete("echo", headers: headers).withoutSession())
            .get()
        // Then
        #expect(getStrings.method == "GET")
        #expect(getStrings.args == ["lang": ["en"], "q": ["dune"]])
        #expect(getStrings.header("X-Custom") == "from-variable")
        #expect(getNumbers.args == ["page": ["2"], "size": ["10"]])
        #expect(getMixed.args == ["draft": ["true"], "page": ["2"], "q": ["dune"]])
        #expect(getHeaders.header("X-Custom") == "from-variable")
        #expect(getLiterals.args == ["q": ["dune"]])
        #expect(getLiterals.header("X-Custom") == "literal")
        #expect(post.method == "POST")
        #expect(post.json == ["draft": true, "page": 2, "q": "dune"])
        #expect(post.header("X-Custom") == "from-variable")
        #expect(postHeaders.json == ["a": 1])
        #expect(postHeaders.header("X-Custom") == "from-variable")
        #expect(put.method == "PUT")
        #expect(put.json == ["page": 2, "size": 10])
        #expect(put.header("X-Custom") == "from-variable")
        #expect(putHeaders.header("X-Custom") == "from-variable")
        #expect(patch.method == "PATCH")
        #expect(patch.json == ["lang": "en", "q": "dune"])
        #expect(patchHeaders.header("X-Custom") == "from-variable")
        #expect(delete.method == "DELETE")
        #expect(delete.args == ["page": ["2"], "size": ["10"]])
        #expect(delete.header("X-Custom") == "from-variable")
        #expect(deleteHeaders.header("X-Custom") == "from-variable")
    }
}

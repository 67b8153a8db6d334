import Foundation
import Networking
import Testing

/// How Flask (the test API) and httpbin read each query encoding style.
@Suite("Query encoding styles against real servers")
struct QueryEncodingStyleIntegrationTests {
    private static let parameters: Parameters = ["ids": [1, 2], "draft": true]

    @Test(
        "The test API's /echo receives each array and boolean style as written",
        arguments: [
            (QueryEncodingStyle(arrays: .brackets, booleans: .literal), ["draft": ["true"], "ids[]": ["1", "2"]]),
            (QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric), ["draft": ["1"], "ids": ["1", "2"]]),
            (QueryEncodingStyle(arrays: .indexInBrackets, booleans: .numeric), ["draft": ["1"], "ids[0]": ["1"], "ids[1]": ["2"]]),
        ] as [(QueryEncodingStyle, [String: [String]])])
    func echoPerConfiguration(style: QueryEncodingStyle, expected: [String: [String]]) async throws {
        // Given
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL)
        configuration.queryEncodingStyle = style
        let repository = TestAPI.Repository(configuration: configuration)
        // When
        let echo: TestAPI.Echo = try await repository.performRequest(
            Endpoint.get("echo", parameters: Self.parameters).withoutSession()
        ).get()
        // Then
        #expect(echo.args == expected)
    }

    @Test("The endpoint's style wins over the configuration's at the test API")
    func echoPerEndpoint() async throws {
        // Given
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL)
        configuration.queryEncodingStyle = QueryEncodingStyle(arrays: .indexInBrackets, booleans: .literal)
        let repository = TestAPI.Repository(configuration: configuration)
        var endpoint = Endpoint<TestAPI.Echo>.get("echo", parameters: Self.parameters).withoutSession()
        endpoint.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric)
        // When
        let echo = try await repository.performRequest(endpoint).get()
        // Then
        #expect(echo.args == ["draft": ["1"], "ids": ["1", "2"]])
    }

    @Test("A Decimal and a UInt64 reach the test API with every digit, in a JSON body and in the query")
    func exactNumbers() async throws {
        struct Payment: Encodable, Sendable {
            var amount = Decimal(string: "1234567890.123456789") ?? 0
            var id = UInt64.max
        }
        let servers = try TestServers.require()
        let repository = TestAPI.Repository(configuration: try TestServers.configuration(servers.apiURL))
        let posted: TestAPI.Echo = try await repository.performRequest(
            Endpoint.post("echo", parameters: Parameters(Payment())).withoutSession()
        ).get()
        #expect(posted.data == #"{"amount":1234567890.123456789,"id":18446744073709551615}"#)
        let queried: TestAPI.Echo = try await repository.performRequest(
            Endpoint.get("echo", parameters: Parameters(Payment())).withoutSession()
        ).get()
        #expect(queried.args == ["amount": ["1234567890.123456789"], "id": ["18446744073709551615"]])
    }

    @Test("A form body in each style reaches the test API as written")
    func formBody() async throws {
        // Given
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL)
        configuration.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric)
        let repository = TestAPI.Repository(configuration: configuration)
        // When
        let echo: TestAPI.Echo = try await repository.performRequest(
            Endpoint(.post, "echo", parameters: Self.parameters, encoding: .form).withoutSession()
        ).get()
        // Then
        #expect(echo.data == "draft=1&ids=1&ids=2")
        #expect(echo.header("Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true)
    }

    @Test("httpbin reads repeated names without brackets as a list, and bracketed names under their full name")
    func httpbin() async throws {
        // Given
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.httpbinURL)
        configuration.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric)
        let repository = TestAPI.Repository(configuration: configuration)
        var bracketed = Endpoint<JSONValue>.get("get", parameters: Self.parameters).withoutSession()
        bracketed.queryEncodingStyle = .default
        // When
        let plain: JSONValue = try await repository.performRequest(Endpoint.get("get", parameters: Self.parameters).withoutSession()).get()
        let withBrackets = try await repository.performRequest(bracketed).get()
        // Then
        #expect(plain["args"] == ["draft": "1", "ids": ["1", "2"]])
        #expect(withBrackets["args"] == ["draft": "true", "ids[]": ["1", "2"]])
    }
}

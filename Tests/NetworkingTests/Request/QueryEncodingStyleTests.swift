import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

@Suite("QueryEncodingStyle")
struct QueryEncodingStyleTests {
    private static let values: [String: JSONValue] = ["ids": [1, 2], "draft": true, "hidden": false]

    @Test(
        "Arrays and booleans are written as the style says",
        arguments: [
            (QueryEncodingStyle(arrays: .brackets, booleans: .literal), "draft=true&hidden=false&ids%5B%5D=1&ids%5B%5D=2"),
            (QueryEncodingStyle(arrays: .noBrackets, booleans: .literal), "draft=true&hidden=false&ids=1&ids=2"),
            (QueryEncodingStyle(arrays: .indexInBrackets, booleans: .literal), "draft=true&hidden=false&ids%5B0%5D=1&ids%5B1%5D=2"),
            (QueryEncodingStyle(arrays: .brackets, booleans: .numeric), "draft=1&hidden=0&ids%5B%5D=1&ids%5B%5D=2"),
            (QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric), "draft=1&hidden=0&ids=1&ids=2"),
            (QueryEncodingStyle(arrays: .indexInBrackets, booleans: .numeric), "draft=1&hidden=0&ids%5B0%5D=1&ids%5B1%5D=2"),
        ])
    func styles(style: QueryEncodingStyle, expected: String) {
        // Given / When
        let query = QueryEncoding.encode(Self.values, style: style)
        // Then
        #expect(query == expected)
    }

    @Test("The default is brackets and literal booleans, as documented")
    func defaultStyle() {
        #expect(QueryEncodingStyle.default == QueryEncodingStyle(arrays: .brackets, booleans: .literal))
        #expect(QueryEncodingStyle() == .default)
        #expect(QueryEncoding.encode(Self.values) == QueryEncoding.encode(Self.values, style: .default))
    }

    @Test("Booleans inside arrays and objects, and arrays inside arrays and objects, follow the style")
    func nested() {
        // Given
        let values: [String: JSONValue] = [
            "flags": [true, false], "filter": ["open": true, "years": [1965, 1966]], "grid": [[1, 2], [3]],
        ]
        // When
        let index = QueryEncoding.encode(values, style: QueryEncodingStyle(arrays: .indexInBrackets, booleans: .numeric))
        let plain = QueryEncoding.encode(values, style: QueryEncodingStyle(arrays: .noBrackets, booleans: .literal))
        // Then
        #expect(
            index.removingPercentEncoding
                == "filter[open]=1&filter[years][0]=1965&filter[years][1]=1966&flags[0]=1&flags[1]=0&grid[0][0]=1&grid[0][1]=2&grid[1][0]=3"
        )
        #expect(
            plain.removingPercentEncoding
                == "filter[open]=true&filter[years]=1965&filter[years]=1966&flags=true&flags=false&grid=1&grid=2&grid=3")
    }

    @Test(
        "Empty arrays and nulls write nothing in every style",
        arguments: [QueryEncodingStyle.ArrayEncoding.brackets, .noBrackets, .indexInBrackets])
    func emptyValues(arrays: QueryEncodingStyle.ArrayEncoding) {
        #expect(QueryEncoding.encode(["ids": [], "none": nil, "a": 1], style: QueryEncodingStyle(arrays: arrays)) == "a=1")
    }
}

@Suite("QueryEncodingStyle through a repository")
struct QueryEncodingStylePipelineTests {
    private static let bookJSON = #"{"id": 1, "title": "Dune", "genre": "fiction"}"#

    private func repository(style: QueryEncodingStyle? = nil) throws -> (TestRepository, StubTransport) {
        let transport = StubTransport(routes: [
            .json(.get, "books", "[]"), .json(.post, "token", "{}"), .json(.get, "books/1", Self.bookJSON),
        ])
        var configuration = try makeConfiguration()
        if let style { configuration.queryEncodingStyle = style }
        return (TestRepository(configuration: configuration, transport: transport), transport)
    }

    @Test("The configuration's style applies to every call")
    func perConfiguration() async throws {
        // Given
        let (repository, transport) = try repository(style: QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric))
        // When
        try await repository.performRequest(Endpoint<Void>.get("books", parameters: ["ids": [3, 4], "draft": false])).get()
        // Then
        #expect(transport.requests.first?.url.query == "draft=0&ids=3&ids=4")
    }

    @Test("The endpoint's style wins over the configuration's")
    func endpointWins() async throws {
        // Given
        let (repository, transport) = try repository(style: QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric))
        var endpoint = Endpoint<Void>.get("books", parameters: ["ids": [3, 4], "draft": false])
        endpoint.queryEncodingStyle = QueryEncodingStyle(arrays: .indexInBrackets, booleans: .literal)
        // When
        try await repository.performRequest(endpoint).get()
        // Then
        #expect(transport.requests.first?.url.query == "draft=false&ids%5B0%5D=3&ids%5B1%5D=4")
    }

    @Test("Without any style set, the default is used")
    func defaultUsed() async throws {
        // Given
        let (repository, transport) = try repository()
        // When
        try await repository.performRequest(Endpoint<Void>.get("books", parameters: ["ids": [3], "draft": true])).get()
        // Then
        #expect(transport.requests.first?.url.query == "draft=true&ids%5B%5D=3")
    }

    @Test("A form body follows the configuration's and the endpoint's style")
    func formBody() async throws {
        // Given
        let (repository, transport) = try repository(style: QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric))
        let parameters: Parameters = ["scope": ["read", "write"], "remember": true]
        var endpointStyled = Endpoint<Void>(.post, "token", parameters: parameters, encoding: .form)
        endpointStyled.queryEncodingStyle = QueryEncodingStyle(arrays: .brackets, booleans: .literal)
        // When
        try await repository.performRequest(Endpoint<Void>(.post, "token", parameters: parameters, encoding: .form)).get()
        try await repository.performRequest(endpointStyled).get()
        // Then
        let bodies = transport.requests.map { String(decoding: $0.body?.inMemoryData ?? Data(), as: UTF8.self) }
        #expect(bodies == ["remember=1&scope=read&scope=write", "remember=true&scope%5B%5D=read&scope%5B%5D=write"])
        #expect(transport.requests.allSatisfy { $0.headers["Content-Type"]?.hasPrefix("application/x-www-form-urlencoded") == true })
    }

    @Test("The query items of a call with a body follow the style too")
    func queryWithBody() async throws {
        // Given
        let (repository, transport) = try repository(style: QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric))
        let endpoint = Endpoint<Void>(.post, "token", parameters: ["a": 1], query: ["ids": [1, 2], "dry": true])
        // When
        try await repository.performRequest(endpoint).get()
        // Then
        #expect(transport.requests.first?.url.query == "dry=1&ids=1&ids=2")
        #expect(try jsonBody(of: try #require(transport.requests.first)) == ["a": 1])
    }

    @Test("The endpoint's style survives the RepositoryResponse form")
    func survivesRepositoryResponse() async throws {
        // Given
        let (repository, transport) = try repository()
        var endpoint = Endpoint<RepositoryResponse<Book>>.get("books/1", parameters: ["ids": [5, 6]])
        endpoint.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets)
        // When
        _ = try await repository.performRequest(endpoint).get()
        // Then
        #expect(transport.requests.first?.url.query == "ids=5&ids=6")
    }
}

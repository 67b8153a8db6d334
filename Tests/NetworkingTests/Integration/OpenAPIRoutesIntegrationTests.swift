import Foundation
import Networking
import Testing

/// The test API's own OpenAPI 3 and Swagger 2 documents, loaded as routes and every operation
/// called through them.
@Suite("OpenAPI routes end to end")
struct OpenAPIRoutesIntegrationTests {
    static let documents = ["openapi.json", "swagger.json"]

    /// The document as the test API serves it, fetched with a raw request.
    private func document(_ name: String) async throws -> Data {
        let repository = try TestAPI.anonymous()
        let response = try await repository.performRawRequest(Endpoint<TransportResponse>.get(name).withoutSession()).get()
        #expect(response.statusCode == 200)
        return response.body
    }

    struct Expected: Sendable {
        let method: HTTPMethod
        let path: String
        let serialization: RouteSerialization?
        let requiresSession: Bool
    }

    static let operations: [String: Expected] = [
        "getHealth": Expected(method: .get, path: "health", serialization: nil, requiresSession: false),
        "login": Expected(method: .post, path: "auth/login", serialization: .json, requiresSession: false),
        "getCurrentUser": Expected(method: .get, path: "users/me", serialization: nil, requiresSession: true),
        "listBooks": Expected(method: .get, path: "books", serialization: nil, requiresSession: true),
        "createBook": Expected(method: .post, path: "books", serialization: .json, requiresSession: true),
        "getBook": Expected(method: .get, path: "books/{id}", serialization: nil, requiresSession: true),
        "replaceBook": Expected(method: .put, path: "books/{id}", serialization: .json, requiresSession: true),
        "updateBook": Expected(method: .patch, path: "books/{id}", serialization: .json, requiresSession: true),
        "deleteBook": Expected(method: .delete, path: "books/{id}", serialization: .query, requiresSession: true),
        "echo": Expected(method: .get, path: "echo/{rest}", serialization: nil, requiresSession: false),
        "POST /echo/{rest}": Expected(method: .post, path: "echo/{rest}", serialization: .json, requiresSession: false),
    ]

    @Test("Every operation becomes a route with its name, method, template, serialization and session", arguments: documents)
    func routes(documentName: String) async throws {
        // Given
        let data = try await document(documentName)
        // When
        let table = try RouteTable(openAPI: data, source: documentName)
        let withBase = try RouteTable(openAPI: data, source: documentName, includingBasePath: true)
        // Then
        #expect(table.names == Self.operations.keys.sorted())
        for (name, expected) in Self.operations {
            let route = try #require(table[name], "\(name) is missing")
            #expect(route.method == expected.method, "\(name)")
            #expect(route.path.text == expected.path, "\(name)")
            #expect(route.serialization == expected.serialization, "\(name)")
            #expect(route.requiresSession == expected.requiresSession, "\(name)")
            #expect(withBase[name]?.path.text == "/api/v1/" + expected.path, "\(name)")
        }
        #expect(table["getBook"]?.path.variables == ["id"])
        #expect(table["POST /echo/{rest}"]?.path.variables == ["rest"])
    }

    struct Health: Decodable, Sendable {
        let status: String
    }

    @Test(
        "Every operation is called through its route, logging in through the login route",
        arguments: documents.flatMap { name in [(name, false), (name, true)] })
    func callEveryOperation(documentName: String, includingBasePath: Bool) async throws {
        // Given: routes from the document; with the base path in the routes, a base URL without it
        let servers = try TestServers.require()
        var base = try #require(URLComponents(string: servers.apiURL))
        if includingBasePath { base.path = "" }
        var configuration = try TestServers.configuration(try #require(base.string))
        configuration.routes = try RouteTable(
            openAPI: try await document(documentName), source: documentName, includingBasePath: includingBasePath)
        let session = SessionManager<TestAPI.User>()
        let repository = TestAPI.Repository(configuration: configuration, sessionManager: session, customErrors: TestAPI.booksErrors)

        // getHealth and login need no session; the login route's token signs the rest.
        let health: Health = try await repository.performRequest(.route("getHealth")).get()
        #expect(health.status == "ok")
        let login: TestAPI.Login = try await repository.performRequest(
            .route("login", parameters: ["email": "reader@example.com", "password": "secret123"])
        ).get()
        try session.login(user: login.user, credential: Credential(accessToken: login.token, refreshToken: login.refreshToken))

        let me: TestAPI.User = try await repository.performRequest(.route("getCurrentUser")).get()
        #expect(me == login.user)
        let page: TestAPI.BooksPage = try await repository.performRequest(.route("listBooks", parameters: ["page": 2, "per_page": 5])).get()
        #expect(page.page.current == 2)
        #expect(page.page.perPage == 5)
        #expect(page.data.count == 5)

        let created: TestAPI.Book = try await repository.performRequest(
            .route("createBook", body: TestAPI.NewBook(title: "Spec", author: "Ann", genre: "science", year: 2020))
        ).get()
        let read: TestAPI.Book = try await repository.performRequest(.route("getBook", pathVariables: ["id": created.id])).get()
        #expect(read == created)
        let replaced: TestAPI.Book = try await repository.performRequest(
            .route(
                "replaceBook", pathVariables: ["id": created.id],
                body: TestAPI.NewBook(title: "Spec, Replaced", author: "Ann", genre: "history", year: 2021))
        ).get()
        #expect(replaced.title == "Spec, Replaced")
        #expect(replaced.genre == .history)
        let updated: TestAPI.Book = try await repository.performRequest(
            .route("updateBook", pathVariables: ["id": created.id], parameters: ["year": 2022])
        ).get()
        #expect(updated.year == 2022)
        #expect(updated.title == "Spec, Replaced")
        try await repository.performRequest(Endpoint<Void>.route("deleteBook", pathVariables: ["id": created.id])).get()
        let gone: Result<TestAPI.Book, RepositoryError> = await repository.performRequest(
            .route("getBook", pathVariables: ["id": created.id]))
        #expect(gone.failure?.customError(as: TestAPI.BooksError.self) == .notFound)

        let echo: TestAPI.Echo = try await repository.performRequest(
            .route("echo", pathVariables: ["rest": "a b/c"], parameters: ["q": "1"])
        ).get()
        #expect(echo.method == "GET")
        #expect(echo.path == "/api/v1/echo/a%20b%2Fc")
        #expect(echo.args == ["q": ["1"]])
        #expect(echo.header("Authorization") == nil)
        let posted: TestAPI.Echo = try await repository.performRequest(
            .route("POST /echo/{rest}", pathVariables: ["rest": "x"], parameters: ["k": "v"])
        ).get()
        #expect(posted.method == "POST")
        #expect(posted.path == "/api/v1/echo/x")
        #expect(posted.json == ["k": "v"])
    }

    @Test(
        "An OpenAPI path that starts like a URL stays under the base URL, and a template's own spaces and lone % reach the server encoded"
    )
    func pathsStayUnderTheBaseURL() async throws {
        // Given: the test API's echo as the base URL, and a path naming httpbin, another server
        let servers = try TestServers.require()
        let document = #"""
            {"openapi": "3.0.0", "paths": {
              "/\#(servers.httpbinURL)/anything": {"get": {"operationId": "elsewhere"}},
              "/Q1 2024/100%/a|b": {"get": {"operationId": "text"}}}}
            """#
        var configuration = try TestServers.configuration(servers.apiURL + "/echo")
        configuration.routes = try RouteTable(openAPI: Data(document.utf8))
        let repository = TestAPI.Repository(configuration: configuration)
        // When
        let elsewhere: TestAPI.Echo = try await repository.performRequest(.route("elsewhere")).get()
        let text: TestAPI.Echo = try await repository.performRequest(.route("text")).get()
        // Then: httpbin was not called; the test API echoes each path as it came
        let httpbin = try #require(URL(string: servers.httpbinURL))
        #expect(elsewhere.path == "/api/v1/echo/http:/\(httpbin.host ?? ""):\(httpbin.port ?? 0)/anything")
        #expect(text.path == "/api/v1/echo/Q1%202024/100%25/a%7Cb")
    }

    @Test("A dotted OpenAPI path parameter ({post.id}) is filled from its own key and reaches the server")
    func dottedParameter() async throws {
        // Given: an OpenAPI document whose path parameter's name holds a dot, for the test API's echo
        let document = #"{"openapi": "3.0.0", "paths": {"/echo/posts/{post.id}/end": {"get": {"operationId": "post"}}}}"#
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL)
        configuration.routes = try RouteTable(openAPI: Data(document.utf8))
        let repository = TestAPI.Repository(configuration: configuration)
        // When
        let echo: TestAPI.Echo = try await repository.performRequest(.route("post", pathVariables: ["post.id": 5])).get()
        // Then
        #expect(echo.path == "/api/v1/echo/posts/5/end")
    }
}

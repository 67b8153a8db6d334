import Foundation
import Networking
import Testing

/// Routes end to end against the test API and httpbin: calls by name of every kind, what the
/// server receives, the object router's CRUD, root keys, mapping steps and blocking activity.
@Suite("Routes end to end")
struct RoutesIntegrationTests {
    /// The test API's base URL with these routes.
    func configuration(_ routes: RouteTable, decodingFailureHandler: DecodingFailureHandler? = nil) throws
        -> NetworkingConfiguration
    {
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL, decodingFailureHandler: decodingFailureHandler)
        configuration.routes = routes
        return configuration
    }

    func anonymous(_ routes: [Route]) throws -> TestAPI.Repository {
        TestAPI.Repository(configuration: try configuration(RouteTable(routes)))
    }

    func loggedIn(_ routes: RouteTable) async throws -> (TestAPI.Repository, TestAPI.Login) {
        let (repository, _, login) = try await TestAPI.loggedIn(configuration: try configuration(routes))
        return (repository, login)
    }

    private static func bookRoutes() throws -> RouteTable {
        try RouteTable([
            Route(name: "listBooks", path: "books", responseKeyPath: "data"),
            Route(name: "firstBook", path: "books", responseKeyPath: "data.0"),
            Route(name: "getBook", path: "books/:id"),
            Route(name: "createBook", method: .post, path: "books", serialization: .json),
            Route(name: "deleteBook", method: .delete, path: "books/{id}"),
        ])
    }

    // MARK: - Calls by name

    @Test("Calls by name are typed like every other call: Decodable, Void, RepositoryResponse, raw")
    func typedCalls() async throws {
        // Given
        let (repository, _) = try await loggedIn(Self.bookRoutes())
        // When
        let books: [TestAPI.Book] = try await repository.performRequest(.route("listBooks")).get()
        let first: TestAPI.Book = try await repository.performRequest(.route("firstBook")).get()
        let book: TestAPI.Book = try await repository.performRequest(.route("getBook", pathVariables: ["id": 2])).get()
        let response = try await repository.performRequest(
            Endpoint<RepositoryResponse<TestAPI.Book>>.route("getBook", pathVariables: ["id": 2])
        ).get()
        let raw = try await repository.performRawRequest(.route("getBook", pathVariables: ["id": 2])).get()
        let created: TestAPI.Book = try await repository.performRequest(
            .route("createBook", body: TestAPI.NewBook(title: "Routes", author: "Ann", genre: "novel", year: 2001))
        ).get()
        let deleted = await repository.performRequest(Endpoint<Void>.route("deleteBook", pathVariables: ["id": created.id]))
        let gone: Result<TestAPI.Book, RepositoryError> = await repository.performRequest(
            .route("getBook", pathVariables: ["id": created.id]))
        // Then
        #expect(books.count == 10)
        #expect(first == books[0])
        #expect(book.id == 2)
        #expect(response.value == book)
        #expect(response.statusCode == 200)
        #expect(response.request.url.path == "/api/v1/books/2")
        #expect(raw.statusCode == 200)
        #expect(raw.json?["id"] == 2)
        #expect(created.title == "Routes")
        #expect(deleted.failure == nil)
        #expect(gone.failure?.customError(as: TestAPI.BooksError.self) == .notFound)
    }

    struct PollStatus: Decodable, Sendable {
        let status: String
        let attempts: Int
    }

    @Test("A route is polled like any endpoint until its answer is ready")
    func polling() async throws {
        let repository = try anonymous([Route(name: "poll", path: "poll/:key", requiresSession: false)])
        let key = UUID().uuidString
        let done: PollStatus = try await repository.performPollingRequest(
            .route("poll", pathVariables: ["key": key], parameters: ["ready_after": 2])
        ).get()
        let again = await repository.performPollingRequest(
            Endpoint<Void>.route("poll", pathVariables: ["key": key + "-void"], parameters: ["ready_after": 1]))
        #expect(done.status == "done")
        #expect(done.attempts == 3)
        #expect(again.failure == nil)
    }

    @Test("A route is called blocking from a plain thread")
    func blocking() async throws {
        let repository = try anonymous([Route(name: "echo", path: "echo/:rest", requiresSession: false)])
        let (echo, void) = await onPlainThread {
            (
                repository.performBlockingRequest(
                    Endpoint<TestAPI.Echo>.route("echo", pathVariables: ["rest": "blocking"]), maximumWait: 30),
                repository.performBlockingRequest(Endpoint<Void>.route("echo", pathVariables: ["rest": "void"]), maximumWait: 30)
            )
        }
        #expect(echo.failure == nil)
        #expect((try? echo.get())?.path == "/api/v1/echo/blocking")
        #expect(void.failure == nil)
        // An unknown route is refused before anything blocks.
        let unknown = await onPlainThread { repository.performBlockingRequest(Endpoint<Void>.route("nope"), maximumWait: 30) }
        #expect(invalidRequestReason(unknown) == #"no route is named "nope" (known routes: echo)"#)
    }

    @Test("An absolute route path reaches another host (httpbin) while the base URL is the test API")
    func absoluteRoute() async throws {
        // Given
        let servers = try TestServers.require()
        let routes = try RouteTable([
            Route(name: "anything", method: .post, path: servers.httpbinURL + "/anything/:x", requiresSession: false)
        ])
        let (repository, login) = try await loggedIn(routes)
        // When
        let answer = try await repository.performRawRequest(.route("anything", pathVariables: ["x": "a b"], parameters: ["k": "v"])).get()
        // Then
        let json = try #require(answer.json)
        #expect(json["url"]?.stringValue == servers.httpbinURL + "/anything/a%20b")
        #expect(json["method"] == "POST")
        #expect(json["json"] == ["k": "v"])
        #expect(!answer.text.contains(login.token))
    }

    // MARK: - What the server receives

    @Test("A call's headers win over the route's; the route's content type is the body's")
    func headersAndContentType() async throws {
        let repository = try anonymous([
            Route(name: "echo", path: "echo/:rest", headers: ["X-Client": "route", "X-Route": "r"], requiresSession: false),
            Route(
                name: "post", method: .post, path: "echo/ct", serialization: .json, contentType: "application/vnd.api+json",
                requiresSession: false),
        ])
        let echo: TestAPI.Echo = try await repository.performRequest(
            .route("echo", pathVariables: ["rest": "h"], headers: ["x-client": "call", "X-Call": "c"])
        ).get()
        let posted: TestAPI.Echo = try await repository.performRequest(.route("post", parameters: ["a": 1])).get()
        #expect(echo.header("X-Client") == "call")
        #expect(echo.header("X-Route") == "r")
        #expect(echo.header("X-Call") == "c")
        #expect(posted.header("Content-Type") == "application/vnd.api+json")
        #expect(posted.json == ["a": 1])
    }

    @Test(
        "Serializations json, query, url and form arrive where they say",
        arguments: [
            (RouteSerialization.json, HTTPMethod.post), (.query, .post), (.url, .get), (.url, .delete), (.url, .post), (.form, .put),
        ])
    func serializations(serialization: RouteSerialization, method: HTTPMethod) async throws {
        // Given
        let repository = try anonymous([
            Route(name: "echo", method: method, path: "echo/s", serialization: serialization, requiresSession: false)
        ])
        // When
        let echo: TestAPI.Echo = try await repository.performRequest(.route("echo", parameters: ["title": "a b", "n": 2])).get()
        // Then
        #expect(echo.method == method.rawValue)
        switch (serialization, method) {
        case (.json, _):
            #expect(echo.json == ["title": "a b", "n": 2])
            #expect(echo.header("Content-Type") == "application/json")
            #expect(echo.query.isEmpty)
        case (.query, _), (.url, .get), (.url, .delete):
            #expect(echo.args == ["n": ["2"], "title": ["a b"]])
            #expect(echo.data.isEmpty)
        default:
            #expect(echo.data == "n=2&title=a%20b")
            #expect(echo.header("Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true)
            #expect(echo.query.isEmpty)
        }
    }

    @Test("Routes that need no session are not signed and work without login; the others need it")
    func sessions() async throws {
        // Given: a logged-in repository, and one whose session is logged out
        let routes = try RouteTable([
            Route(name: "open", path: "echo/open", requiresSession: false), Route(name: "signed", path: "echo/signed"),
            Route(name: "health", path: "health", requiresSession: false), Route(name: "me", path: "users/me"),
        ])
        let (repository, login) = try await loggedIn(routes)
        let loggedOut = TestAPI.Repository(configuration: try configuration(routes), sessionManager: SessionManager<TestAPI.User>())
        // When
        let open: TestAPI.Echo = try await repository.performRequest(.route("open")).get()
        let signed: TestAPI.Echo = try await repository.performRequest(.route("signed")).get()
        let health = await loggedOut.performRequest(Endpoint<Void>.route("health"))
        let me: Result<TestAPI.User, RepositoryError> = await loggedOut.performRequest(.route("me"))
        // Then
        #expect(open.header("Authorization") == nil)
        #expect(signed.header("Authorization") == "Bearer \(login.token)")
        #expect(health.failure == nil)
        guard case .unauthenticatedSession? = me.failure else {
            Issue.record("expected .unauthenticatedSession, got \(me)")
            return
        }
    }

    @Test("The route's timeout applies: a 0.3 s route on a 2 s answer times out")
    func timeout() async throws {
        // The configuration's timeout is 20 s, so only the route's can end this call with .timeout.
        let repository = try anonymous([Route(name: "slow", path: "slow", requiresSession: false, timeout: 0.3)])
        let result = await repository.performRequest(Endpoint<Void>.route("slow", parameters: ["seconds": 2]))
        guard case .timeout(let context)? = result.failure else {
            Issue.record("expected .timeout, got \(result)")
            return
        }
        #expect(context.request.url.path == "/api/v1/slow")
    }

    static let pathValueCases: [(Parameters, String)] = [
        (["v": "a b/c?d#e%f ü"], "/api/v1/echo/a%20b%2Fc%3Fd%23e%25f%20%C3%BC/end"),
        (["v": 42], "/api/v1/echo/42/end"), (["v": 2.5], "/api/v1/echo/2.5/end"), (["v": true], "/api/v1/echo/true/end"),
        (["v": "a:b@c"], "/api/v1/echo/a:b@c/end"),
    ]

    @Test("Each path value arrives as one percent-encoded segment", arguments: pathValueCases)
    func pathValues(variables: Parameters, path: String) async throws {
        let repository = try anonymous([Route(name: "echo", path: "echo/:v/end", requiresSession: false)])
        let echo: TestAPI.Echo = try await repository.performRequest(.route("echo", pathVariables: variables)).get()
        #expect(echo.path == path)
        #expect(echo.query.isEmpty)
    }

    @Test("A dot-segment value is refused before anything is sent, on every transport", arguments: TransportUnderTest.all)
    func dotSegments(transport: TransportUnderTest) async throws {
        // Given: a route whose value is "." or ".." — the URL layer reads those as "this folder"
        // and "the parent folder", and sent as %2E%2E a normaliser (nginx) decodes them and
        // removes them all the same, so the request would reach /api/v1/end
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL)
        configuration.routes = try RouteTable([Route(name: "echo", path: "echo/:v/end", requiresSession: false)])
        let repository = TestAPI.Repository(configuration: configuration, transport: transport.make())
        for value in [".", ".."] {
            // When
            let result: Result<TestAPI.Echo, RepositoryError> = await repository.performRequest(.route("echo", pathVariables: ["v": value]))
            // Then: .invalidRequest naming the variable, as for an empty value
            guard case .invalidRequest(let reason, _)? = result.failure else {
                Issue.record("expected .invalidRequest for \(value), got \(result)")
                continue
            }
            let variable = #"the path variable "v" is "\#(value)", which would be read as a dot segment and change the path"#
            #expect(reason == #"route "echo" (echo/:v/end): "# + variable)
        }
        // A value that merely holds dots still reaches the server as one segment.
        let dots: TestAPI.Echo = try await repository.performRequest(.route("echo", pathVariables: ["v": "..."])).get()
        #expect(dots.path == "/api/v1/echo/.../end")
    }

    @Test("Templates: {name}, dotted names from an Encodable object, escapes and a literal colon")
    func templates() async throws {
        struct Meeting: Encodable, Sendable {
            struct Room: Encodable, Sendable { let id: Int }
            let room: Room
            let topic: String
        }
        let repository = try anonymous([
            Route(name: "dotted", path: "echo/rooms/{room.id}/:topic\\.json", requiresSession: false),
            Route(name: "colon", path: "echo/time\\:12/:topic", requiresSession: false),
        ])
        let meeting = Meeting(room: .init(id: 7), topic: "q&a")
        let dotted: TestAPI.Echo = try await repository.performRequest(.route("dotted", pathVariables: Parameters(meeting))).get()
        let colon: TestAPI.Echo = try await repository.performRequest(.route("colon", pathVariables: ["topic": "x"])).get()
        #expect(dotted.path == "/api/v1/echo/rooms/7/q&a.json")
        #expect(colon.path == "/api/v1/echo/time:12/x")
    }
}

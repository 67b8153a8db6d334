import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// Calls by route name through the whole pipeline against a transport that records what it is
/// given: the request a route produces, root keys, key paths and mapping steps.
@Suite("Calling routes by name")
struct RouteCallTests {
    private func repository(
        _ routes: [Route], transport: AnsweringTransport, session: SessionManager<User>? = nil,
        hook: DecodingFailureHandler? = nil
    ) throws -> TestRepository {
        TestRepository(
            configuration: try routedConfiguration(RouteTable(routes), decodingFailureHandler: hook), sessionManager: session,
            transport: transport)
    }

    // MARK: - Unknown routes and path variables

    @Test("An unknown route's error names the first 20 known routes and how many more there are, not every one")
    func unknownRouteAmongMany() async throws {
        let routes = try (0..<100).map { try Route(name: String(format: "r%03d", $0), path: "r/\($0)") }
        let repository = try repository(routes, transport: AnsweringTransport())
        let reason = invalidRequestReason(await repository.performRequest(Endpoint<Void>.route("x")))
        #expect(reason.hasSuffix("r017, r018, r019 and 80 more)"))
    }

    @Test("An unknown route name fails with .invalidRequest naming it and the known routes; nothing is sent")
    func unknownRoute() async throws {
        let transport = AnsweringTransport()
        let repository = try repository(
            [Route(name: "books", path: "books"), Route(name: "book", path: "books/:id")], transport: transport)
        let typed: Result<Note, RepositoryError> = await repository.performRequest(.route("boks"))
        let void = await repository.performRequest(Endpoint<Void>.route("boks"))
        let raw = await repository.performRawRequest(.route("boks"))
        #expect(invalidRequestReason(typed) == #"no route is named "boks" (known routes: book, books)"#)
        #expect(invalidRequestReason(void) == #"no route is named "boks" (known routes: book, books)"#)
        #expect(invalidRequestReason(raw) == #"no route is named "boks" (known routes: book, books)"#)
        #expect(transport.requests.isEmpty)
    }

    @Test("A route's query with brackets keeps its encoded values encoded once")
    func bracketsInARouteQuery() async throws {
        let transport = AnsweringTransport()
        let repository = try repository([Route(name: "search", path: "search?filter[:field]=:q&x=a b")], transport: transport)
        _ = await repository.performRequest(Endpoint<Void>.route("search", pathVariables: ["field": "year", "q": "C++ & more"]))
        let url = try #require(transport.requests.first?.url)
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems
        #expect(items == [URLQueryItem(name: "filter[year]", value: "C++ & more"), URLQueryItem(name: "x", value: "a b")], "\(url)")
    }

    @Test("A query-only route adds no slash to the base URL's path; `/?` keeps one")
    func queryOnlyRoute() async throws {
        let transport = AnsweringTransport()
        let repository = try repository([Route(name: "page", path: "?page=:n")], transport: transport)
        _ = await repository.performRequest(Endpoint<Void>.route("page", pathVariables: ["n": 2]))
        #expect(transport.requests.first?.url.absoluteString == "http://api.test/api/v1?page=2")
        let slashed = AnsweringTransport()
        let slashedRepository = try self.repository([Route(name: "page", path: "/?page=:n")], transport: slashed)
        _ = await slashedRepository.performRequest(Endpoint<Void>.route("page", pathVariables: ["n": 2]))
        #expect(slashed.requests.first?.url.absoluteString == "http://api.test/api/v1/?page=2")
    }

    @Test("Without routes in the configuration, the error says so")
    func noRoutes() async throws {
        let transport = AnsweringTransport()
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        let result = await repository.performRequest(Endpoint<Void>.route("books"))
        #expect(invalidRequestReason(result) == #"no route is named "books" (the configuration has no routes)"#)
        #expect(transport.requests.isEmpty)
    }

    static let badVariableCases: [(Parameters?, String)] = [
        (nil, #"route "book" (books/:id): the path variable "id" is missing (or null)"#),
        (["other": 1], #"route "book" (books/:id): the path variable "id" is missing (or null)"#),
        (["id": Int?.none as any Sendable], #"route "book" (books/:id): the path variable "id" is missing (or null)"#),
        (["id": ""], #"route "book" (books/:id): the path variable "id" is empty, which would leave an empty path segment"#),
        (
            ["id": "."],
            #"route "book" (books/:id): the path variable "id" is ".", which would be read as a dot segment and change the path"#
        ),
        (
            ["id": ".."],
            #"route "book" (books/:id): the path variable "id" is "..", which would be read as a dot segment and change the path"#
        ),
        (["id": ["a": 1]], #"route "book" (books/:id): the path variable "id" is an object, not a string, number or boolean"#),
        (["id": [1, 2]], #"route "book" (books/:id): the path variable "id" is an array, not a string, number or boolean"#),
    ]

    @Test("A missing, null, empty, dot-segment or non-scalar path variable fails naming it; nothing is sent", arguments: badVariableCases)
    func badVariables(variables: Parameters?, reason: String) async throws {
        let transport = AnsweringTransport()
        let repository = try repository([Route(name: "book", path: "books/:id")], transport: transport)
        let result = await repository.performRequest(Endpoint<Void>.route("book", pathVariables: variables))
        let message = invalidRequestReason(result)
        #expect(message == reason)
        #expect(!message.contains("(null)"))
        #expect(transport.requests.isEmpty)
    }

    @Test("A route's error hides the values of the configuration's own secret names in its template, as requests do")
    func secretFieldsInRouteErrors() async throws {
        var configuration = try routedConfiguration(try RouteTable([Route(name: "report", path: "reports/:id?tenantKey=XYZ123")]))
        configuration.secretFields = ["tenantkey"]
        let repository = TestRepository(configuration: configuration, transport: AnsweringTransport())
        let message = invalidRequestReason(await repository.performRequest(Endpoint<Void>.route("report")))
        #expect(message.contains(#"the path variable "id" is missing"#), "\(message)")
        #expect(!message.contains("XYZ123"), "\(message)")
    }

    @Test("Path variables come from a dictionary or an Encodable object, nested for dotted names")
    func variableSources() async throws {
        // Given
        struct Meeting: Encodable, Sendable {
            struct Inner: Encodable, Sendable { let id: Int }
            let meeting: Inner
            let slug: String
        }
        let transport = AnsweringTransport()
        let repository = try repository(
            [Route(name: "notes", path: "meetings/:meeting.id/notes/{slug}\\.json")], transport: transport)
        // When
        try await repository.performRequest(Endpoint<Void>.route("notes", pathVariables: ["meeting": ["id": 5], "slug": "a b"])).get()
        try await repository.performRequest(
            Endpoint<Void>.route("notes", pathVariables: Parameters(Meeting(meeting: .init(id: 6), slug: "ü")))
        ).get()
        // Then
        #expect(transport.requests.map(\.pathAfterBase) == ["meetings/5/notes/a%20b.json", "meetings/6/notes/%C3%BC.json"])
    }

    @Test("Int, Double and Bool values are rendered in their JSON form")
    func scalarValues() async throws {
        let transport = AnsweringTransport()
        let repository = try repository([Route(name: "r", path: "x/:i/:d/:w/:b")], transport: transport)
        try await repository.performRequest(Endpoint<Void>.route("r", pathVariables: ["i": 42, "d": 2.5, "w": 3.0, "b": true])).get()
        #expect(transport.requests.first?.pathAfterBase == "x/42/2.5/3/true")
    }

    @Test("A Decimal or an integer beyond Int keeps every digit in the path, given directly or inside an Encodable value")
    func exactNumbers() async throws {
        let transport = AnsweringTransport()
        let repository = try repository([Route(name: "r", path: "x/:u/:d/:s")], transport: transport)
        let amount = try #require(Decimal(string: "12345678901234567.89"))
        try await repository.performRequest(
            Endpoint<Void>.route("r", pathVariables: ["u": UInt64.max, "d": amount, "s": 0.1])
        ).get()
        struct Payment: Encodable, Sendable {
            let u: UInt64
            let d: Decimal
            let s: Double
        }
        try await repository.performRequest(
            Endpoint<Void>.route("r", pathVariables: Parameters(Payment(u: UInt64.max, d: amount, s: 0.1)))
        ).get()
        #expect(transport.requests.map(\.pathAfterBase) == Array(repeating: "x/18446744073709551615/12345678901234567.89/0.1", count: 2))
    }

    @Test("Path variables, parameters and headers take dictionary variables, and an Encodable value through Parameters")
    func dictionaryVariables() async throws {
        let transport = AnsweringTransport()
        let repository = try repository([Route(name: "book", path: "books/:id")], transport: transport)
        struct BookID: Encodable, Sendable { let id: Int }
        let ids: [String: Int] = ["id": 7]
        let query: [String: String] = ["lang": "en"]
        let headers: [String: String] = ["X-Custom": "variable"]
        try await repository.performRequest(Endpoint<Void>.route("book", pathVariables: ids)).get()
        try await repository.performRequest(Endpoint<Void>.route("book", pathVariables: ["id": 8], parameters: query)).get()
        try await repository.performRequest(Endpoint<Void>.route("book", pathVariables: ids, headers: headers)).get()
        try await repository.performRequest(Endpoint<Void>.route("book", pathVariables: ["id": 9], headers: headers)).get()
        try await repository.performRequest(Endpoint<Void>.route("book", pathVariables: Parameters(BookID(id: 10)))).get()
        #expect(transport.requests.map(\.pathAfterBase) == ["books/7", "books/8?lang=en", "books/7", "books/9", "books/10"])
        #expect(transport.requests.map { $0.headers["X-Custom"] } == [nil, nil, "variable", "variable", nil])
    }

    @Test("A route starting with a placeholder filled by an absolute URL calls that server (WebApiClient's elsewhere fixture)")
    func absoluteURLInAPathVariable() async throws {
        let transport = AnsweringTransport()
        let repository = try repository([Route(name: "elsewhere", path: ":baseURL/yes/i/can")], transport: transport)
        try await repository.performRequest(Endpoint<Void>.route("elsewhere", pathVariables: ["baseURL": "https://example.com"])).get()
        #expect(transport.requests.first?.url.absoluteString == "https://example.com/yes/i/can")
    }

    // MARK: - Headers, content type, serialization

    @Test("A call's headers win over the route's, whatever their case")
    func headerPrecedence() async throws {
        let transport = AnsweringTransport()
        let repository = try repository(
            [Route(name: "r", path: "x", headers: ["X-Client": "route", "X-Route": "1", "Accept": "text/csv"])], transport: transport)
        try await repository.performRequest(Endpoint<Void>.route("r", headers: ["x-client": "call", "X-Call": "2"])).get()
        let request = try #require(transport.requests.first)
        #expect(request.headers.values(for: "X-Client") == ["call"])
        #expect(request.headers["X-Route"] == "1")
        #expect(request.headers["X-Call"] == "2")
        #expect(request.headers["Accept"] == "text/csv")
        // A repeated field stays repeated, as on a call without a route; repeated `Cookie` fields
        // go as one, joined with "; " (with a comma they would make one cookie's value).
        var repeated: HTTPHeaders = ["Cookie": "a=1", "X-Tag": "t1"]
        repeated.add(name: "Cookie", value: "b=2")
        repeated.add(name: "X-Tag", value: "t2")
        try await repository.performRequest(Endpoint<Void>.route("r", headers: repeated)).get()
        #expect(transport.requests.last?.headers.values(for: "Cookie") == ["a=1; b=2"])
        #expect(transport.requests.last?.headers.values(for: "X-Tag") == ["t1", "t2"])
    }

    @Test("The route's content type is the body's, unless the call gives its own")
    func contentType() async throws {
        let transport = AnsweringTransport()
        let repository = try repository(
            [Route(name: "r", method: .post, path: "x", serialization: .json, contentType: "application/vnd.api+json")],
            transport: transport)
        try await repository.performRequest(Endpoint<Void>.route("r", parameters: ["a": 1])).get()
        try await repository.performRequest(Endpoint<Void>.route("r", parameters: ["a": 1], headers: ["Content-Type": "text/json"])).get()
        #expect(transport.requests.map { $0.headers.values(for: "Content-Type") } == [["application/vnd.api+json"], ["text/json"]])
        #expect(try jsonBody(of: transport.requests[0]) == ["a": 1])
    }

    @Test("A raw route called without a body names no content type; with one, it names the route's")
    func rawContentType() async throws {
        let transport = AnsweringTransport()
        let repository = try repository(
            [Route(name: "csv", method: .get, path: "x", serialization: .raw, contentType: "text/csv")], transport: transport)
        try await repository.performRequest(Endpoint<Void>.route("csv", parameters: ["a": 1])).get()
        try await repository.performRequest(Endpoint<Void>.route("csv").uploading(.data(Data("a,b".utf8)))).get()
        #expect(transport.requests.map { $0.headers.values(for: "Content-Type") } == [[], ["text/csv"]])
        #expect(transport.requests.first?.url.query == "a=1")
    }

    struct SerializationCase: Sendable, CustomTestStringConvertible {
        let serialization: RouteSerialization?
        let method: HTTPMethod
        let inQuery: Bool
        let contentType: String?

        var testDescription: String { "\(serialization.map(\.rawValue) ?? "none") \(method)" }
    }

    @Test(
        "Each serialization puts the parameters where it says",
        arguments: [
            SerializationCase(serialization: .json, method: .post, inQuery: false, contentType: "application/json"),
            SerializationCase(serialization: .json, method: .delete, inQuery: false, contentType: "application/json"),
            SerializationCase(serialization: .query, method: .post, inQuery: true, contentType: nil),
            SerializationCase(serialization: .query, method: .get, inQuery: true, contentType: nil),
            SerializationCase(serialization: .url, method: .get, inQuery: true, contentType: nil),
            SerializationCase(serialization: .url, method: .delete, inQuery: true, contentType: nil),
            SerializationCase(serialization: .url, method: .head, inQuery: true, contentType: nil),
            SerializationCase(
                serialization: .url, method: .post, inQuery: false, contentType: "application/x-www-form-urlencoded; charset=utf-8"),
            SerializationCase(
                serialization: .url, method: .put, inQuery: false, contentType: "application/x-www-form-urlencoded; charset=utf-8"),
            SerializationCase(
                serialization: .form, method: .post, inQuery: false, contentType: "application/x-www-form-urlencoded; charset=utf-8"),
            SerializationCase(
                serialization: .form, method: .patch, inQuery: false, contentType: "application/x-www-form-urlencoded; charset=utf-8"),
            SerializationCase(serialization: .form, method: .get, inQuery: true, contentType: nil),
            SerializationCase(serialization: .form, method: .head, inQuery: true, contentType: nil),
            SerializationCase(serialization: .multipart, method: .get, inQuery: true, contentType: nil),
            SerializationCase(serialization: .raw, method: .get, inQuery: true, contentType: nil),
            SerializationCase(serialization: .raw, method: .delete, inQuery: true, contentType: nil),
            SerializationCase(serialization: nil, method: .get, inQuery: true, contentType: nil),
            SerializationCase(serialization: nil, method: .post, inQuery: false, contentType: "application/json"),
        ])
    func serialization(_ test: SerializationCase) async throws {
        // Given
        let transport = AnsweringTransport()
        let repository = try repository(
            [Route(name: "r", method: test.method, path: "things", serialization: test.serialization)], transport: transport)
        // When
        try await repository.performRequest(Endpoint<Void>.route("r", parameters: ["title": "a b", "n": 2])).get()
        // Then
        let request = try #require(transport.requests.first)
        #expect(request.method == test.method)
        #expect(request.headers["Content-Type"] == test.contentType)
        if test.inQuery {
            #expect(request.url.query == "n=2&title=a%20b")
            #expect(request.body == nil)
        } else {
            #expect(request.url.query == nil)
            let body = String(decoding: try #require(request.body?.inMemoryData), as: UTF8.self)
            if test.contentType == "application/json" {
                #expect(try jsonBody(of: request) == ["title": "a b", "n": 2])
            } else {
                #expect(body == "n=2&title=a%20b")
            }
        }
    }

    @Test("A JSON route with a method that carries no body sends its parameters in the query", arguments: [HTTPMethod.get, .head])
    func jsonWithoutBody(method: HTTPMethod) async throws {
        // Given: WebApiClient's default serialization on a GET route
        let transport = AnsweringTransport()
        let repository = try repository([Route(name: "books", method: method, path: "books", serialization: .json)], transport: transport)
        // When
        let result = await repository.performRequest(Endpoint<Void>.route("books", parameters: ["page": 2]))
        // Then: as RouteSerialization.json documents
        #expect(result.failure == nil)
        #expect(transport.requests.first?.url.query == "page=2")
        #expect(transport.requests.first?.body == nil)
    }

    @Test("query: items are sent in the query whatever the serialization")
    func queryItems() async throws {
        let transport = AnsweringTransport()
        let repository = try repository([Route(name: "r", method: .post, path: "x", serialization: .json)], transport: transport)
        try await repository.performRequest(Endpoint<Void>.route("r", parameters: ["a": 1], query: ["v": 2])).get()
        #expect(transport.requests.first?.url.query == "v=2")
        #expect(try jsonBody(of: try #require(transport.requests.first)) == ["a": 1])
    }

    @Test("A route's rendered path keeps its trailing slash and the slashes of its query")
    func slashesAsWritten() async throws {
        // Given: a Django-style path, and a query holding slashes
        let transport = AnsweringTransport()
        let repository = try repository(
            [
                Route(name: "books", method: .get, path: "books/"),
                Route(name: "files", method: .get, path: "files//:kind?prefix=photos/&u=http://x"),
            ], transport: transport)
        // When
        try await repository.performRequest(Endpoint<Void>.route("books", parameters: ["page": 2])).get()
        try await repository.performRequest(Endpoint<Void>.route("files", pathVariables: ["kind": "a/b"])).get()
        // Then: the path's repeated slash is joined, and the rest is as rendered
        #expect(transport.requests.map(\.pathAfterBase) == ["books/?page=2", "files/a%2Fb?prefix=photos/&u=http://x"])
    }

    @Test("query: items that cannot be encoded fail with the encoder's reason")
    func unencodableQuery() async throws {
        let transport = AnsweringTransport()
        let repository = try repository([Route(name: "r", method: .get, path: "x")], transport: transport)
        let result = await repository.performRequest(Endpoint<Void>.route("r", query: ["v": Double.infinity]))
        #expect(invalidRequestReason(result).hasPrefix("the query items cannot be encoded: "))
        #expect(transport.requests.isEmpty)
    }

    // MARK: - Session and timeout

    @Test("Routes that need no session are not signed; others are")
    func session() async throws {
        let session = SessionManager<User>()
        try session.login(user: User(id: 1, name: "Ann"), token: "t0k3n")
        let transport = AnsweringTransport()
        let repository = try repository(
            [Route(name: "open", path: "health", requiresSession: false), Route(name: "closed", path: "users/me")],
            transport: transport, session: session)
        try await repository.performRequest(Endpoint<Void>.route("open")).get()
        try await repository.performRequest(Endpoint<Void>.route("closed")).get()
        #expect(transport.requests.map { $0.headers["Authorization"] } == [nil, "Bearer t0k3n"])
    }

    @Test("A logged-out session fails routes that need it, and lets the others through")
    func loggedOut() async throws {
        let transport = AnsweringTransport()
        let repository = try repository(
            [Route(name: "open", path: "health", requiresSession: false), Route(name: "closed", path: "users/me")],
            transport: transport, session: SessionManager<User>())
        let open = await repository.performRequest(Endpoint<Void>.route("open"))
        let closed = await repository.performRequest(Endpoint<Void>.route("closed"))
        #expect(open.failure == nil)
        guard case .unauthenticatedSession? = closed.failure else {
            Issue.record("expected .unauthenticatedSession, got \(closed)")
            return
        }
        #expect(transport.requests.count == 1)
    }

    @Test("The route's timeout overrides the configuration's; the call's own wins over both")
    func timeout() async throws {
        let transport = AnsweringTransport()
        let repository = try repository(
            [Route(name: "slow", path: "slow", timeout: 0.3), Route(name: "plain", path: "x")], transport: transport)
        try await repository.performRequest(Endpoint<Void>.route("slow")).get()
        try await repository.performRequest(Endpoint<Void>.route("plain")).get()
        var own = Endpoint<Void>.route("slow")
        own.timeout = 7
        try await repository.performRequest(own).get()
        #expect(transport.requests.map(\.timeout) == [0.3, repository.configuration.timeout, 7])
    }

    @Test("A route's idle timeout reaches its calls whatever their timeout; .infinity turns it off; the call's own wins")
    func idleTimeout() async throws {
        let transport = AnsweringTransport()
        let repository = try repository(
            [
                Route(name: "poll", path: "poll", timeout: .infinity, idleTimeout: .infinity),
                Route(name: "feed", path: "feed", idleTimeout: 4), Route(name: "archive", path: "archive", timeout: .infinity),
            ], transport: transport)
        try await repository.performRequest(Endpoint<Void>.route("poll")).get()
        try await repository.performRequest(Endpoint<Void>.route("feed")).get()
        try await repository.performRequest(Endpoint<Void>.route("archive")).get()
        var own = Endpoint<Void>.route("feed")
        own.idleTimeout = 9
        try await repository.performRequest(own).get()
        #expect(transport.requests.map(\.timeout).first == .infinity)
        #expect(transport.requests.map(\.idleTimeout) == [nil, 4, repository.configuration.idleTimeout, 9])
    }

    @Test("A route file's retry object takes its jitter from the configuration's policy; a policy set in code keeps its own")
    func retryJitter() async throws {
        var routes = try RouteTable(json: Data(#"{"file": {"path": "x", "retry": {"maximumAttempts": 3}}}"#.utf8))
        try routes.add(Route(name: "coded", path: "y", retryPolicy: RetryPolicy(maximumAttempts: 2, random: { 0.25 })))
        var configuration = try routedConfiguration(routes)
        configuration.retryPolicy = RetryPolicy(random: { 0.5 })
        let clock = TestClock()
        configuration.clock = clock.networkingClock
        let repository = TestRepository(configuration: configuration, transport: AnsweringTransport(status: 503))
        _ = await repository.performRequest(Endpoint<Void>.route("file"))
        _ = await repository.performRequest(Endpoint<Void>.route("coded"))
        // Half of 0.5 s and of 1 s from the configuration's random, then a quarter of 0.5 s.
        #expect(clock.sleeps == [.milliseconds(250), .milliseconds(500), .milliseconds(125)])
    }

    @Test("A route file's retry policy changed in code keeps the configuration's jitter until its random is set")
    func retryJitterAfterAChange() async throws {
        let file = try RouteTable(json: Data(#"{"file": {"path": "x", "retry": {"maximumAttempts": 3}}}"#.utf8))
        var fewer = try #require(file["file"])
        fewer.retryPolicy?.maximumAttempts = 2
        var own = fewer
        own.name = "own"
        own.retryPolicy?.random = { 0.25 }
        var configuration = try routedConfiguration(RouteTable([fewer, own]))
        configuration.retryPolicy = RetryPolicy(random: { 0.5 })
        let clock = TestClock()
        configuration.clock = clock.networkingClock
        let repository = TestRepository(configuration: configuration, transport: AnsweringTransport(status: 503))
        _ = await repository.performRequest(Endpoint<Void>.route("file"))
        _ = await repository.performRequest(Endpoint<Void>.route("own"))
        // Half of 0.5 s from the configuration's random, then a quarter of 0.5 s from the route's.
        #expect(clock.sleeps == [.milliseconds(250), .milliseconds(125)])
    }

    @Test("An absolute route path is called as it is, outside the base URL")
    func absolutePath() async throws {
        let transport = AnsweringTransport()
        let repository = try repository(
            [Route(name: "cover", path: "https://covers.example.com:8443/:isbn\\.png", requiresSession: false)], transport: transport)
        try await repository.performRequest(Endpoint<Void>.route("cover", pathVariables: ["isbn": "978 0"])).get()
        #expect(transport.requests.first?.url.absoluteString == "https://covers.example.com:8443/978%200.png")
    }

    @Test("cookies(forRoute:) gives the cookies a call of the route would carry")
    func cookies() throws {
        // Given
        let storage = CookieStorage()
        storage.set(Cookie(name: "book7", value: "a", domain: "api.test", path: "/api/v1/books/7"))
        storage.set(Cookie(name: "cover", value: "b", domain: "covers.example.com"))
        var configuration = try routedConfiguration(
            RouteTable([
                Route(name: "book", path: "books/:id"),
                Route(name: "cover", path: "https://covers.example.com/:isbn", requiresSession: false),
                Route(name: "upload", method: .post, path: "books/:id", serialization: .raw),
            ]))
        configuration.cookieStorage = storage
        let repository = TestRepository(configuration: configuration, transport: AnsweringTransport())
        // Then
        #expect(repository.cookies(forRoute: "book", pathVariables: ["id": 7]).map(\.name) == ["book7"])
        #expect(repository.cookies(forRoute: "book", pathVariables: ["id": 8]).isEmpty)
        #expect(repository.cookies(forRoute: "cover", pathVariables: ["isbn": "1"]).map(\.name) == ["cover"])
        // A raw route (whose calls need a body) too.
        #expect(repository.cookies(forRoute: "upload", pathVariables: ["id": 7]).map(\.name) == ["book7"])
        #expect(repository.cookies(forRoute: "book").isEmpty)
        #expect(repository.cookies(forRoute: "unknown").isEmpty)
    }

    // MARK: - Typed calls

    @Test("Route calls are typed like every other call: Decodable, RepositoryResponse, raw, custom decoding")
    func typed() async throws {
        let transport = AnsweringTransport(json: #"{"id": 3, "text": "t"}"#)
        let repository = try repository([Route(name: "note", path: "notes/:id")], transport: transport)
        let note: Note = try await repository.performRequest(.route("note", pathVariables: ["id": 3])).get()
        let response = try await repository.performRequest(Endpoint<RepositoryResponse<Note>>.route("note", pathVariables: ["id": 3])).get()
        let raw = try await repository.performRawRequest(.route("note", pathVariables: ["id": 3])).get()
        let text = try await repository.performRequest(
            Endpoint<String>.route("note", pathVariables: ["id": 3]).decoding { try $0.decode(Note.self).text }
        ).get()
        #expect(note == Note(id: 3, text: "t"))
        #expect(response.value == note)
        #expect(response.statusCode == 200)
        #expect(response.request.url.absoluteString == "http://api.test/api/v1/notes/3")
        #expect(raw.json == ["id": 3, "text": "t"])
        #expect(text == "t")
    }
}

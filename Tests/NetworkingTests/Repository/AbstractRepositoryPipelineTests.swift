import Foundation
import Networking
import NetworkingTestSupport
import Testing

@Suite("AbstractRepository pipeline")
struct AbstractRepositoryPipelineTests {
    let failures = Recorder<DecodingFailure>()

    private func repository(
        _ routes: [StubTransport.Route], session: SessionManager<User>? = nil
    ) throws -> (TestRepository, StubTransport) {
        let transport = StubTransport(routes: routes)
        let failures = failures
        let configuration = try makeConfiguration(decodingFailureHandler: { failures.record($0) })
        return (TestRepository(configuration: configuration, sessionManager: session, transport: transport), transport)
    }

    private static let book = #"{"id": 1, "title": "Dune", "genre": "fiction"}"#
    private static let page =
        #"{"data": [{"id": 1, "title": "Dune", "genre": "fiction"}, {"id": 2, "title": "SPQR", "genre": "history"}], "page": {"current": 3, "total": 9}}"#

    // MARK: - Decoding

    @Test("Entities, collections and values at key paths decode")
    func decoding() async throws {
        // Given
        let (repository, transport) = try repository([
            .json(.get, "books/1", Self.book),
            .json(.get, "books", Self.page),
            .json(.get, "shelf", "[\(Self.book)]"),
        ])
        // When
        let book: Book = try await repository.performRequest(.get("books/1")).get()
        let shelf: [Book] = try await repository.performRequest(.get("shelf")).get()
        let page: BooksPage = try await repository.performRequest(.get("books")).get()
        let data: [Book] = try await repository.performRequest(.get("books", keyPath: "data")).get()
        let current: Int = try await repository.performRequest(.get("books", keyPath: "page.current")).get()
        let second: Book = try await repository.performRequest(.get("books", keyPath: "data.1")).get()
        // Then
        #expect(book == Book(id: 1, title: "Dune", genre: .fiction))
        #expect(shelf == [book])
        #expect(page.page.total == 9)
        #expect(data.map(\.title) == ["Dune", "SPQR"])
        #expect(current == 3)
        #expect(second.title == "SPQR")
        #expect(transport.requests.count == 6)
        #expect(failures.all.isEmpty)
    }

    @Test("Void calls ignore the body, empty or not; raw calls return the response as it came")
    func voidAndRaw() async throws {
        // Given
        let (repository, _) = try repository([
            .status(.delete, "books/1", 204),
            .json(.post, "books", status: 201, Self.book),
            .status(.get, "export", 200, json: "not json at all", headers: ["X-Export": "1"]),
        ])
        // When
        let deleted = await repository.performRequest(Endpoint<Void>.delete("books/1"))
        let created = await repository.performRequest(Endpoint<Void>.post("books", body: NewBook(title: "Dune", genre: .fiction)))
        let raw = try await repository.performRawRequest(.get("export")).get()
        // Then
        #expect((try? deleted.get()) != nil)
        #expect((try? created.get()) != nil)
        #expect(raw.statusCode == 200)
        #expect(raw.text == "not json at all")
        #expect(raw.headers["x-export"] == "1")
        #expect(failures.all.isEmpty)
    }

    @Test("An empty body is nil for an Optional model and a decode error otherwise")
    func emptyBodies() async throws {
        // Given
        let (repository, _) = try repository([.status(.get, "books/1", 200)])
        // When
        let optional: Book? = try await repository.performRequest(Endpoint<Book?>.get("books/1")).get()
        let required = await repository.performRequest(Endpoint<Book>.get("books/1"))
        // Then
        #expect(optional == nil)
        guard case .decodeError(let failure) = required.failure else {
            Issue.record("expected decodeError, got \(required)")
            return
        }
        #expect(failure.reason.contains("empty"))
        #expect(failures.all.count == 1)
    }

    @Test("Malformed JSON is a jsonError and the hook is told it is malformed")
    func malformedJSON() async throws {
        // Given
        let (repository, _) = try repository([.json(.get, "books/1", "{\"id\": 1,")])
        // When
        let result = await repository.performRequest(Endpoint<Book>.get("books/1"))
        // Then
        guard case .jsonError(let failure) = result.failure else {
            Issue.record("expected jsonError, got \(result)")
            return
        }
        #expect(failure.kind == .malformedJSON)
        #expect(failures.all.map(\.kind) == [.malformedJSON])
    }

    @Test("A wrong shape is a decodeError whose report names type, request, status and path")
    func wrongShape() async throws {
        // Given the second book's genre is unknown to the model
        let body = #"{"data": [\#(Self.book), {"id": 2, "title": "Odes", "genre": "poetry"}], "page": {"current": 1, "total": 1}}"#
        let (repository, _) = try repository([.json(.get, "books", body)])
        // When
        let result = await repository.performRequest(Endpoint<BooksPage>.get("books", parameters: ["page": 1]))
        // Then
        guard case .decodeError(let failure) = result.failure else {
            Issue.record("expected decodeError, got \(result)")
            return
        }
        let told = try #require(failures.all.first)
        for report in [failure, told] {
            #expect(report.entityType == "BooksPage")
            #expect(report.context.request.description == "GET http://api.test/api/v1/books?page=1")
            #expect(report.statusCode == 200)
            #expect(report.codingPath == "data[1].genre")
            #expect(report.reason.contains("Genre") && report.reason.contains("poetry"), "\(report.reason)")
            #expect(report.bodyExcerpt.contains("Odes"))
        }
    }

    // MARK: - Statuses

    @Test("Non-2xx statuses are requestError with the whole response", arguments: [404, 422, 500])
    func requestErrors(status: Int) async throws {
        // Given
        let (repository, _) = try repository([
            .status(.get, "books/9", status, json: #"{"code": "nope", "detail": {"id": 9}}"#, headers: ["X-Request-ID": "r1"])
        ])
        // When
        let result = await repository.performRequest(Endpoint<Book>.get("books/9"))
        // Then
        guard case .requestError(let context) = result.failure else {
            Issue.record("expected requestError, got \(result)")
            return
        }
        #expect(context.statusCode == status)
        #expect(context.request == RequestSummary(method: .get, url: URL(string: "http://api.test/api/v1/books/9")!))
        #expect(context.response?.headers["x-request-id"] == "r1")
        #expect(context.response?.json?.value(atKeyPath: "detail.id") == 9)
        #expect(context.response?.text.contains("nope") == true)
        #expect(result.failure?.statusCode == status)
        #expect(failures.all.isEmpty)
    }

    @Test("A 401 to a signed request is unauthenticatedSession with context and expires the session")
    func unauthorizedExpiresSession() async throws {
        // Given
        let session = SessionManager<User>()
        try session.login(user: User(id: 1, name: "Ann"), token: "t1")
        let (repository, transport) = try repository([.status(.get, "books", 401, json: #"{"error": "expired"}"#)], session: session)
        // When
        let result = await repository.performRequest(Endpoint<[Book]>.get("books"))
        // Then
        guard case .unauthenticatedSession(let context?) = result.failure else {
            Issue.record("expected unauthenticatedSession with context, got \(result)")
            return
        }
        #expect(context.statusCode == 401)
        #expect(context.request.url.path == "/api/v1/books")
        #expect(transport.requests.first?.headers["Authorization"] == "Bearer t1")
        #expect(!session.isLoggedIn)
    }

    @Test("A 401 to an authentication request is its custom error when mapped, else authenticationFailed")
    func unauthorizedLogin() async throws {
        // Given nobody is logged in
        let session = SessionManager<User>()
        let (repository, transport) = try repository([.status(.post, "login", 401, json: #"{"code": "bad"}"#)], session: session)
        let login = Endpoint<LoginResponse>.post("login", parameters: ["email": "a@b.c", "password": "x"])
        // When
        let mapped = await repository.performAuthenticationRequest(login.mappingErrors([.status(401, BooksError.wrongCredentials)]))
        let unmapped = await repository.performAuthenticationRequest(login)
        // Then
        #expect(mapped.failure?.customError(as: BooksError.self) == .wrongCredentials)
        guard case .authenticationFailed(let context) = unmapped.failure else {
            Issue.record("expected authenticationFailed, got \(unmapped)")
            return
        }
        #expect(context.statusCode == 401)
        #expect(unmapped.failure?.description.contains("the credentials it carried were not accepted") == true)
        #expect(unmapped.failure?.description.contains("session") == false)
        #expect(transport.requests.count == 2)
        #expect(transport.requests.allSatisfy { $0.headers["Authorization"] == nil })
    }

    // MARK: - Sessions

    @Test("A request that needs a session fails before the network when nobody is logged in")
    func loggedOut() async throws {
        // Given
        let (repository, transport) = try repository([.json(.get, "books", "[]")], session: SessionManager<User>())
        // When
        let result = await repository.performRequest(Endpoint<[Book]>.get("books"))
        // Then
        guard case .unauthenticatedSession(nil) = result.failure else {
            Issue.record("expected unauthenticatedSession(nil), got \(result)")
            return
        }
        #expect(transport.requests.isEmpty)
    }

    @Test("An authentication request works logged out and the response can start the session")
    func loginWhileLoggedOut() async throws {
        // Given
        let session = SessionManager<User>()
        let (repository, transport) = try repository(
            [.json(.post, "login", #"{"token": "t-new", "user": {"id": 7, "name": "Ann"}}"#), .json(.get, "books", "[]")],
            session: session)
        // When
        let login: LoginResponse = try await repository.performAuthenticationRequest(
            .post("login", parameters: ["email": "a@b.c", "password": "pw"])
        ).get()
        try session.login(user: login.user, token: login.token)
        let books: [Book] = try await repository.performRequest(.get("books")).get()
        // Then
        #expect(books.isEmpty)
        #expect(transport.requests.map { $0.headers["Authorization"] } == [nil, "Bearer t-new"])
        #expect(try jsonBody(of: transport.requests[0]) == ["email": "a@b.c", "password": "pw"])
    }
}

// swift-format-ignore-file
// The documentation's code, kept as the articles and the README show it (their drift tests compare
// line by line), so the formatter leaves this folder alone.
import Foundation
import Networking
import NetworkingTestSupport
import Testing

// The code block of README.md (its quick start), as it is there, so the README cannot drift from
// the API; ArticleCodeBlocksTests checks its lines against this folder. The rest of the
// documentation's samples are in ArticleSamples.swift. Types live in a namespace so they do not
// clash with other tests; top-level statements are wrapped in functions.
enum Readme {
    struct User: Codable, Sendable { let id: Int; let name: String }
    struct Book: Decodable, Sendable { let id: Int; let title: String }
    struct BooksPage: Decodable, Sendable { let data: [Book] }
    struct NewBook: Encodable, Sendable { let title: String; let author: String; let genre: String; let year: Int }
    struct Login: Decodable, Sendable { let user: User; let token: String }

    final class BooksRepository: AbstractRepository, CurrentUserFetcher, @unchecked Sendable {
        func logIn(email: String, password: String) async -> Result<Login, RepositoryError> {
            await performAuthenticationRequest(.post("auth/login", parameters: ["email": email, "password": password]))
        }

        func fetchCurrentUser() async -> Result<User, RepositoryError> {
            await performRequest(.get("users/me"))
        }

        func fetchBooks(page: Int) async -> Result<BooksPage, RepositoryError> {
            await performRequest(.get("books", parameters: ["page": page]))
        }

        func addBook(_ book: NewBook) async -> Result<Void, RepositoryError> {
            await performRequest(.post("books", body: book))
        }
    }

    static func quickStart() async throws {
        // The project's test API: `script/server start` writes its address to .servers/env.
        let address = ProcessInfo.processInfo.environment["NETWORKING_TEST_API_URL"] ?? "http://127.0.0.1:8000/api/v1"
        let configuration = try NetworkingConfiguration(baseURL: address)
        let session = SessionManager<User>(store: FileCredentialStore(applicationName: "books"))
        let books = BooksRepository(configuration: configuration, sessionManager: session)

        await session.bootstrap(fetchingUserWith: books)    // restores a saved session, ended if its token is refused
        if !session.isLoggedIn {
            let login = try await books.logIn(email: "reader@example.com", password: "secret123").get()
            try session.login(user: login.user, token: login.token)
        }
        switch await books.fetchBooks(page: 1) {
        case .success(let page): print(page.data.map(\.title))
        case .failure(let error): print(error.localizedDescription)
        }
    }
}

@Suite("README samples")
struct ReadmeSamplesTests {
    @Test("the quick start's repository sends what the README says")
    func quickStartRepository() async throws {
        let transport = StubTransport(routes: [.json(.get, "books", #"{"data": [{"id": 1, "title": "Dune"}]}"#)])
        let configuration = try NetworkingConfiguration(baseURL: "http://127.0.0.1:8000/api/v1")
        let books = Readme.BooksRepository(configuration: configuration, transport: transport)
        #expect(try await books.fetchBooks(page: 1).get().data.map(\.title) == ["Dune"])
        #expect(transport.requests.first?.url.absoluteString == "http://127.0.0.1:8000/api/v1/books?page=1")
    }

    @Test("the quick start's login logs the session in, and the next calls are signed with its token")
    func quickStartLogin() async throws {
        let transport = StubTransport(routes: [
            .json(.post, "auth/login", #"{"user": {"id": 1, "name": "Reader"}, "token": "t0k3n"}"#),
            .json(.get, "books", #"{"data": []}"#),
        ])
        let configuration = try NetworkingConfiguration(baseURL: "http://127.0.0.1:8000/api/v1")
        let session = SessionManager<Readme.User>()
        let books = Readme.BooksRepository(configuration: configuration, sessionManager: session, transport: transport)
        let login = try await books.logIn(email: "reader@example.com", password: "secret123").get()
        try session.login(user: login.user, token: login.token)
        #expect(try await books.fetchBooks(page: 1).get().data.isEmpty)
        #expect(transport.requests.last?.headers["Authorization"] == "Bearer t0k3n")
        #expect(transport.requests.first?.headers["Authorization"] == nil)
    }

    @Test("the quick start's steps work against the test API, with a stored token it no longer knows")
    func quickStartAgainstTheTestAPI() async throws {
        let servers = try TestServers.require()
        let configuration = try NetworkingConfiguration(baseURL: servers.apiURL)
        let stale = PersistedSession(credential: Credential(accessToken: "from-an-earlier-run"), user: ["id": 1, "name": "Reader"])
        let session = SessionManager<Readme.User>(store: InMemoryCredentialStore(stale))
        let books = Readme.BooksRepository(configuration: configuration, sessionManager: session)

        guard case .expired = await session.bootstrap(fetchingUserWith: books) else {
            Issue.record("a refused stored token should end the restored session")
            return
        }
        #expect(!session.isLoggedIn)
        let login = try await books.logIn(email: "reader@example.com", password: "secret123").get()
        try session.login(user: login.user, token: login.token)
        #expect(try await !books.fetchBooks(page: 1).get().data.isEmpty)
        try await books.addBook(Readme.NewBook(title: "Dune", author: "Frank Herbert", genre: "novel", year: 1965)).get()
        #expect(try await books.fetchCurrentUser().get().id == login.user.id)
    }
}

import Foundation
import Networking
import NetworkingCache

/// Login, sign-up and token refresh: the calls that need no session.
final class AuthenticationRepository: AbstractRepository, TokenRefresher, @unchecked Sendable {
    func login(email: String, password: String, ttl: Double? = nil) async -> Result<AuthenticatedUser, RepositoryError> {
        var parameters: [String: any Sendable] = ["email": email, "password": password]
        if let ttl { parameters["ttl"] = ttl }
        return await performAuthenticationRequest(.post("auth/login", parameters: Parameters(parameters)))
    }

    /// Exchanges the refresh token for a new credential; the session manager calls it, once for
    /// all the requests that find the access token expired.
    func refreshCredential(_ credential: Credential) async -> Result<Credential, RepositoryError> {
        let refreshed: Result<AuthenticatedUser, RepositoryError> = await performAuthenticationRequest(
            .post("auth/refresh", parameters: ["refresh_token": credential.refreshToken ?? ""]))
        return refreshed.map(\.credential)
    }
}

/// The current user and their notifications.
final class UsersRepository: AbstractRepository, CurrentUserFetcher, @unchecked Sendable {
    func fetchCurrentUser() async -> Result<User, RepositoryError> {
        await performRequest(.get("users/me"))
    }

    func markNotificationsRead(userID: Int) async -> Result<Void, RepositoryError> {
        await performRequest(.post("users/\(userID)/notifications/read_all"))
    }
}

/// Books: pages, creation, and the API's own errors.
final class BooksRepository: AbstractRepository, @unchecked Sendable {
    static let errors: CustomErrorMapping = [
        .status(404, BooksError.notFound),
        .status(422, decoding: ValidationBody.self) { BooksError.validation($0.fields) },
    ]

    func fetchBooks(page: Int) async -> Result<BooksPage, RepositoryError> {
        await performRequest(.get("books", parameters: ["page": page]))
    }

    func fetchBook(id: Int) async -> Result<Book, RepositoryError> {
        await performRequest(.get("books/\(id)"))
    }

    func addBook(_ book: NewBook) async -> Result<Void, RepositoryError> {
        await performRequest(.post("books", body: book))
    }

    /// A book whose genre the app does not know: the decode-error hook reports it.
    func fetchBookWithUnknownGenre() async -> Result<Book, RepositoryError> {
        await performRequest(.get("broken/unknown-enum"))
    }
}

/// Books again, through the routes of `routes.json` and the object router: no paths in code.
final class RoutedBooksRepository: AbstractRepository, @unchecked Sendable {
    /// The routes the Demo ships with, plus the object route of `Book`.
    static func routes() throws -> RouteTable {
        guard let file = Bundle.module.url(forResource: "routes", withExtension: "json") else {
            throw RepositoryError.invalidConfiguration(reason: "routes.json is missing from the Demo's resources")
        }
        var routes = try RouteTable(contentsOf: file)
        try routes.register(Book.self, methods: [.get, .put, .delete], path: "books/:id")
        return routes
    }

    func books(page: Int) async -> Result<[Book], RepositoryError> {
        await performRequest(.route("books", parameters: ["page": page]))
    }

    func book(id: Int) async -> Result<Book, RepositoryError> {
        await performRequest(.route("book", pathVariables: ["id": id]))
    }

    func create(_ book: NewBook) async -> Result<RepositoryResponse<Book>, RepositoryError> {
        await performRequest(.route("createBook", body: book))
    }

    /// Sends `{"book": {…}}` and reads the book back from the echo's `json.book`.
    func echo(_ book: NewBook) async -> Result<[String: JSONValue], RepositoryError> {
        await performRequest(.route("echoRoot", pathVariables: ["topic": "books"], body: book))
    }

    /// The book's current state, through the object route registered for `Book`.
    func refreshed(_ book: Book) async -> Result<Book, RepositoryError> {
        await getObject(book)
    }
}

/// Test-only controls of the local test API.
final class TestControlRepository: AbstractRepository, @unchecked Sendable {
    struct Counters: Decodable, Sendable {
        let refreshCalls: Int
    }

    struct Flaky: Decodable, Sendable {
        let attempts: Int
    }

    func expireToken(_ token: String) async -> Result<Void, RepositoryError> {
        await performAuthenticationRequest(.post("test/tokens/expire", parameters: ["token": token]))
    }

    func refreshCalls() async -> Int? {
        let counters: Result<Counters, RepositoryError> = await performAuthenticationRequest(.get("test/counters"))
        return try? counters.get().refreshCalls
    }

    /// An endpoint that answers 503 `failures` times before 200.
    func flaky(failures: Int) async -> Result<Flaky, RepositoryError> {
        await performAuthenticationRequest(.get("flaky/\(UUID().uuidString)", parameters: ["failures": failures, "status": 503]))
    }
}

/// Answers of the test API that say how long they stay fresh (`Cache-Control: max-age`), read
/// through a `ResponseCache`.
final class CachedResourcesRepository: AbstractRepository, @unchecked Sendable {
    struct Resource: Decodable, Sendable {
        let key: String
        let version: Int
    }

    struct Hits: Decodable, Sendable {
        let requests: Int
    }

    /// Fresh for a minute: the cache answers again within it, without the network.
    func resource(_ key: String) async -> Result<RepositoryResponse<Resource>, RepositoryError> {
        await performRequest(Endpoint.get("cache/resource/\(key)", parameters: ["max_age": 60]).withoutSession())
    }

    /// What the cache holds, never the network: a miss is `isCacheMiss`.
    func storedResource(_ key: String) async -> Result<Resource, RepositoryError> {
        await performRequest(Endpoint.get("cache/resource/\(key)").withoutSession().cacheOnly())
    }

    /// How many requests for `key` reached the server.
    func requests(for key: String) async -> Int? {
        let hits: Result<Hits, RepositoryError> = await performAuthenticationRequest(.get("cache/hits/\(key)"))
        return try? hits.get().requests
    }
}

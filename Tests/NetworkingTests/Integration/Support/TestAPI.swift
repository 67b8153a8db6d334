import Foundation
import Networking

/// Models and repositories for the project's test API (`script/testapi/app.py`).
enum TestAPI {
    struct User: Codable, Sendable, Equatable {
        let id: Int
        let name: String
        let email: String
        let createdAt: Date
    }

    struct Login: Decodable, Sendable {
        let user: User
        let token: String
        let refreshToken: String?
        let expiresIn: Double?
    }

    enum Genre: String, Codable, Sendable {
        case novel, poetry, science, history, fantasy
    }

    struct Book: Decodable, Sendable, Equatable {
        let id: Int
        let title: String
        let author: String
        let genre: Genre
        let year: Int
        let imageUrl: String?
    }

    struct NewBook: Encodable, Sendable {
        var title: String
        var author: String
        var genre: String
        var year: Int
    }

    struct BooksPage: Decodable, Sendable {
        struct Page: Decodable, Sendable {
            let current: Int
            let perPage: Int
            let totalPages: Int
            let totalCount: Int
        }

        let data: [Book]
        let page: Page
    }

    /// What `/echo` says it received.
    struct Echo: Decodable, Sendable {
        let method: String
        let path: String
        let query: String
        let args: [String: [String]]
        let headers: [String: String]
        let json: JSONValue?
        let data: String

        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    struct ValidationBody: Decodable, Sendable {
        let fields: [String: [String]]
    }

    enum BooksError: CustomRepositoryErrorType, Equatable {
        case notFound
        case validation([String: [String]])
        case duplicate

        var name: String {
            switch self {
            case .notFound: "notFound"
            case .validation: "validation"
            case .duplicate: "duplicate"
            }
        }
    }

    static let booksErrors: CustomErrorMapping = [
        .status(404, BooksError.notFound),
        .status(409, apiCode: "duplicate_isbn", BooksError.duplicate),
        .status(422, decoding: ValidationBody.self) { BooksError.validation($0.fields) },
    ]

    struct Counters: Decodable, Sendable {
        let refreshCalls: Int
        let logins: Int
    }

    /// A repository with the calls the tests need; tests add endpoints inline with `perform…`.
    final class Repository: AbstractRepository, CurrentUserFetcher, TokenRefresher, @unchecked Sendable {
        func refreshCredential(_ credential: Credential) async -> Result<Credential, RepositoryError> {
            let refreshed: Result<Login, RepositoryError> = await performAuthenticationRequest(
                .post("auth/refresh", parameters: ["refresh_token": credential.refreshToken ?? ""]))
            return refreshed.map { Credential(accessToken: $0.token, refreshToken: $0.refreshToken) }
        }

        func counters() async throws -> Counters {
            try await performAuthenticationRequest(.get("test/counters")).get()
        }

        func login(email: String = "reader@example.com", password: String = "secret123") async -> Result<Login, RepositoryError> {
            await performAuthenticationRequest(.post("auth/login", parameters: ["email": email, "password": password]))
        }

        func fetchCurrentUser() async -> Result<User, RepositoryError> {
            await performRequest(.get("users/me"))
        }

        func fetchBooks(page: Int) async -> Result<BooksPage, RepositoryError> {
            await performRequest(.get("books", parameters: ["page": page]))
        }

        func createBook(_ book: NewBook) async -> Result<Book, RepositoryError> {
            await performRequest(.post("books", body: book))
        }

        func expire(token: String) async -> Result<Void, RepositoryError> {
            await performAuthenticationRequest(.post("test/tokens/expire", parameters: ["token": token]))
        }
    }

    /// A repository on the test API with a fresh, logged-in session.
    static func loggedIn(
        transport: (any Transport)? = nil, configuration: NetworkingConfiguration? = nil,
        customErrors: CustomErrorMapping = booksErrors
    ) async throws -> (Repository, SessionManager<User>, Login) {
        let servers = try TestServers.require()
        let configuration = try configuration ?? TestServers.configuration(servers.apiURL)
        let session = SessionManager<User>()
        let repository = Repository(
            configuration: configuration, sessionManager: session, transport: transport, customErrors: customErrors)
        let login = try await repository.login().get()
        try session.login(user: login.user, credential: Credential(accessToken: login.token, refreshToken: login.refreshToken))
        return (repository, session, login)
    }

    /// A repository on a base URL without a session.
    static func anonymous(_ base: String? = nil, transport: (any Transport)? = nil, timeout: TimeInterval = 20) throws -> Repository {
        let servers = try TestServers.require()
        return Repository(configuration: try TestServers.configuration(base ?? servers.apiURL, timeout: timeout), transport: transport)
    }
}

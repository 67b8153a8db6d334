import Foundation
import Networking

/// Login and sign-up: the calls that need no session.
final class AuthenticationRepository: AbstractRepository, @unchecked Sendable {
    func login(email: String, password: String, ttl: Double? = nil) async -> Result<AuthenticatedUser, RepositoryError> {
        var parameters: [String: any Sendable] = ["email": email, "password": password]
        if let ttl { parameters["ttl"] = ttl }
        return await performAuthenticationRequest(.post("auth/login", parameters: Parameters(parameters)))
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

/// Test-only controls of the local test API.
final class TestControlRepository: AbstractRepository, @unchecked Sendable {
    func expireToken(_ token: String) async -> Result<Void, RepositoryError> {
        await performAuthenticationRequest(.post("test/tokens/expire", parameters: ["token": token]))
    }
}

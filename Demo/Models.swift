import Foundation
import Networking

/// A user of the books API.
struct User: Codable, Sendable, Equatable {
    let id: Int
    let name: String
    let email: String
    let createdAt: Date
}

/// What login and sign-up return.
struct AuthenticatedUser: Decodable, Sendable {
    let user: User
    let token: String
    let refreshToken: String?
    let expiresIn: Double?

    var credential: Credential {
        Credential(
            accessToken: token, refreshToken: refreshToken,
            expiresAt: expiresIn.map { Date().addingTimeInterval($0) })
    }
}

/// The genres the API knows.
enum Genre: String, Codable, Sendable {
    case novel, poetry, science, history, fantasy
}

/// A book as the API returns it (and as the object router finds its path: `books/:id`).
struct Book: Codable, Sendable {
    let id: Int
    let title: String
    let author: String
    let genre: Genre
    let year: Int
    let imageUrl: URL?
}

/// A book to create.
struct NewBook: Encodable, Sendable {
    let title: String
    let author: String
    let genre: String
    let year: Int
}

/// One page of books.
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

/// The body of a 422 answer.
struct ValidationBody: Decodable, Sendable {
    let message: String
    let fields: [String: [String]]
}

/// The books API's own errors.
enum BooksError: CustomRepositoryErrorType, Equatable {
    case notFound
    case validation([String: [String]])

    var name: String {
        switch self {
        case .notFound: "notFound"
        case .validation: "validation"
        }
    }
}

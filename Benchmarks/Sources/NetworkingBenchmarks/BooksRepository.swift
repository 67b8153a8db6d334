import Networking

/// The entity the benchmark decodes: one book, as in the 148-byte `book.json`.
struct Book: Decodable, Sendable {
    let id: Int
    let title: String
    let author: String
    let year: Int
    let genre: String
    let available: Bool
    let rating: Double
}

/// A typed repository, as users write them: the benchmark measures the whole public path
/// (request building, pipeline, transport, status validation, decoding).
final class BooksRepository: AbstractRepository, @unchecked Sendable {
    /// The 148-byte object.
    func book() async -> Result<Book, RepositoryError> {
        await performRequest(.get("book.json"))
    }

    /// The ~15 KB array.
    func books() async -> Result<[Book], RepositoryError> {
        await performRequest(.get("books.json"))
    }
}

import Foundation
import Networking
import Testing

/// End to end against the test API: the calls a books app makes, decoded into models.
@Suite("Books API end to end")
struct BooksRepositoryIntegrationTests {
    @Test("login returns a user and a token; GET users/me decodes the current user")
    func loginAndCurrentUser() async throws {
        // Given a logged-in session
        let (repository, session, login) = try await TestAPI.loggedIn()
        // When fetching the current user
        let user = try await repository.fetchCurrentUser().get()
        // Then it is the user that logged in, and the session holds the token
        #expect(user == login.user)
        #expect(user.email == "reader@example.com")
        #expect(session.sessionToken == login.token)
    }

    @Test("a page of books decodes, and query parameters reach the server")
    func pageOfBooks() async throws {
        let (repository, _, _) = try await TestAPI.loggedIn()
        let page = try await repository.fetchBooks(page: 2).get()
        #expect(page.page.current == 2)
        #expect(page.data.count == page.page.perPage)
        #expect(page.page.totalCount >= 25)
    }

    @Test("the value at a key path decodes: data, and page.current")
    func keyPaths() async throws {
        let (repository, _, _) = try await TestAPI.loggedIn()
        let books: [TestAPI.Book] = try await repository.performRequest(.get("books", keyPath: "data")).get()
        let current: Int = try await repository.performRequest(.get("books", parameters: ["page": 3], keyPath: "page.current")).get()
        let second: TestAPI.Book = try await repository.performRequest(.get("books", keyPath: "data.1")).get()
        #expect(books.count == 10)
        #expect(current == 3)
        #expect(second == books[1])
    }

    @Test("create, read, replace, update and delete a book")
    func crud() async throws {
        let (repository, _, _) = try await TestAPI.loggedIn()
        // Create
        let created = try await repository.createBook(.init(title: "Dune", author: "Frank Herbert", genre: "fantasy", year: 1965)).get()
        #expect(created.title == "Dune")
        // Read
        let read: TestAPI.Book = try await repository.performRequest(.get("books/\(created.id)")).get()
        #expect(read == created)
        // Replace
        let replaced: TestAPI.Book = try await repository.performRequest(
            .put("books/\(created.id)", body: TestAPI.NewBook(title: "Dune Messiah", author: "Frank Herbert", genre: "fantasy", year: 1969))
        ).get()
        #expect(replaced.title == "Dune Messiah")
        #expect(replaced.year == 1969)
        // Update part
        let patched: TestAPI.Book = try await repository.performRequest(.patch("books/\(created.id)", parameters: ["year": 1970])).get()
        #expect(patched.year == 1970)
        #expect(patched.title == "Dune Messiah")
        // Delete (204, empty body) as Void
        try await repository.performRequest(Endpoint<Void>.delete("books/\(created.id)")).get()
        // Then it is gone: 404 becomes the custom error
        let gone: Result<TestAPI.Book, RepositoryError> = await repository.performRequest(.get("books/\(created.id)"))
        #expect(gone.failure?.customError(as: TestAPI.BooksError.self) == .notFound)
    }

    @Test("POST users/<id>/notifications/read_all answers 204 with an empty body: Void succeeds")
    func emptyBodyVoid() async throws {
        let (repository, _, login) = try await TestAPI.loggedIn()
        let result = await repository.performRequest(Endpoint<Void>.post("users/\(login.user.id)/notifications/read_all"))
        #expect(throws: Never.self) { try result.get() }
    }

    @Test("a 422 with a structured body becomes BooksError.validation with the fields")
    func validationError() async throws {
        let (repository, _, _) = try await TestAPI.loggedIn()
        let result = await repository.createBook(.init(title: "", author: "", genre: "cookbook", year: 99999))
        let error = try #require(result.failure)
        guard case .validation(let fields)? = error.customError(as: TestAPI.BooksError.self) else {
            Issue.record("expected BooksError.validation, got \(error)")
            return
        }
        #expect(Set(fields.keys) == ["title", "author", "genre", "year"])
        #expect(error.statusCode == 422)
        #expect(error.localizedDescription.contains("validation"))
    }

    @Test("an API code in the body selects the custom error for that code only")
    func apiCodeMatching() async throws {
        let (repository, _, _) = try await TestAPI.loggedIn()
        let duplicate = await repository.performRequest(
            Endpoint<Void>.get("errors/api-code", parameters: ["status": 409, "code": "duplicate_isbn"]))
        let other = await repository.performRequest(
            Endpoint<Void>.get("errors/api-code", parameters: ["status": 409, "code": "something_else"]))
        #expect(duplicate.failure?.customError(as: TestAPI.BooksError.self) == .duplicate)
        guard case .requestError(let context)? = other.failure else {
            Issue.record("expected .requestError, got \(String(describing: other.failure))")
            return
        }
        #expect(context.response?.json?["code"] == "something_else")
    }

    @Test("raw requests return status, headers and bytes")
    func rawResponse() async throws {
        let (repository, _, _) = try await TestAPI.loggedIn()
        let response = try await repository.performRawRequest(.get("books/1")).get()
        #expect(response.statusCode == 200)
        #expect(response.headers["content-type"]?.hasPrefix("application/json") == true)
        #expect(response.json?["id"] == 1)
    }
}

// swift-format-ignore-file
// The documentation's code, kept as the articles and the README show it (their drift tests compare
// line by line), so the formatter leaves this folder alone.
import Foundation
import Networking
import NetworkingTestSupport
import Testing

// Every ```swift block of NetworkingTestSupport's article, "Testing your repositories with the stub
// transport" (Sources/NetworkingTestSupport/NetworkingTestSupport.docc), as it is there. Its tests
// are real tests: they run here as they would in an app's test target.

enum StubTransportArticle {
    struct Book: Decodable, Sendable { let id: Int; let title: String }

    enum BooksError: CustomRepositoryErrorType {
        case notFound

        var name: String { "\(self)" }
    }

    final class BooksRepository: AbstractRepository, @unchecked Sendable {
        func book(id: Int) async -> Result<Book, RepositoryError> {
            await performRequest(.get("books/\(id)"))
        }

        func deleteBook(id: Int) async -> Result<Void, RepositoryError> {
            await performRequest(.delete("books/\(id)"))
        }
    }

    static func echoRoute() -> StubTransport.Route {
        let echo = StubTransport.Route(.post, "books") { request throws(TransportError) in
            TransportResponse(statusCode: 201, headers: ["Content-Type": "application/json"], body: request.body?.inMemoryData ?? Data(), url: request.url)
        }
        return echo
    }

    /// Compiled, not run: it needs a server to stand in front of.
    static func checkOutage(apiPort: Int) async throws {
        let proxy = try OutageProxy(upstreamPort: apiPort)
        let configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "127.0.0.1", port: proxy.port)
        let books = BooksRepository(configuration: configuration)
        proxy.goDown()
        if case .failure(let error) = await books.book(id: 1) { print(error.isConnectivityFailure) }   // true: refused
        try proxy.comeUp()
    }
}

@Suite("Stub transport article samples")
struct StubTransportArticleSamples {
    typealias Book = StubTransportArticle.Book
    typealias BooksError = StubTransportArticle.BooksError
    typealias BooksRepository = StubTransportArticle.BooksRepository

    @Test func booksAnswersAreReadAsTheAppSeesThem() async throws {
        let transport = StubTransport(routes: [
            .json(.get, "books/1", #"{"id": 1, "title": "Dune"}"#),
            .status(.get, "books/99", 404, json: #"{"code": "not_found"}"#),
            .failure(.delete, "books/1", .network(.connectionRefused)),
        ])
        let configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        let books = BooksRepository(
            configuration: configuration, transport: transport, customErrors: [.status(404, BooksError.notFound)])

        #expect(try await books.book(id: 1).get().title == "Dune")

        guard case .failure(let missing) = await books.book(id: 99) else { Issue.record("expected a 404"); return }
        #expect(missing.customError(as: BooksError.self) == .notFound)

        guard case .failure(let offline) = await books.deleteBook(id: 1) else { Issue.record("expected a failure"); return }
        #expect(offline.isConnectivityFailure)

        #expect(transport.requests.map(\.url.path) == ["/books/1", "/books/99", "/books/1"])
    }

    @Test func aFailingReadIsTriedThreeTimes() async throws {
        let clock = TestClock()
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.clock = clock.networkingClock
        configuration.retryPolicy = .default
        let transport = StubTransport(routes: [.status(.get, "books/1", 503)])
        let books = BooksRepository(configuration: configuration, transport: transport)

        _ = await books.book(id: 1)

        #expect(transport.requests.count == 3)
        #expect(clock.sleeps.count == 2)
    }

    @Test func theSecondAttemptWaitsForTheTest() async throws {
        let clock = TestClock(mode: .manual)
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.clock = clock.networkingClock
        configuration.retryPolicy = RetryPolicy(random: { 1 })  // no jitter: waits of 0.5 s, then 1 s
        let transport = StubTransport(routes: [.status(.get, "books/1", 503)])
        let books = BooksRepository(configuration: configuration, transport: transport)

        let call = Task { await books.book(id: 1) }
        #expect(await clock.waitForSleeps(1))   // the first attempt failed: its backoff began
        clock.advance(by: 0.4)
        #expect(transport.requests.count == 1)  // not before the backoff ends
        clock.advance(by: 0.1)                  // it ends: the second attempt goes out
        #expect(await clock.waitForSleeps(2))
        #expect(transport.requests.count == 2)
        clock.advance(by: 1)
        _ = await call.value
    }

    @Test func aTimeoutIsARouteThatFailsWithIt() async throws {
        let configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        let transport = StubTransport(routes: [.failure(.get, "books/1", .timedOut)])
        let books = BooksRepository(configuration: configuration, transport: transport)

        guard case .failure(.timeout) = await books.book(id: 1) else { Issue.record("expected a timeout"); return }
        #expect(transport.requests.first?.timeout == configuration.timeout)   // what a transport would have waited
    }

    @Test func aCancelledCallEndsAsCancelled() async throws {
        let (reached, arrives) = AsyncStream<Void>.makeStream()
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "books/1") { request throws(TransportError) in
                arrives.yield()
                try? await Task.sleep(for: .seconds(60))  // a slow server; the cancellation wakes it
                return TransportResponse(statusCode: 200, headers: [:], body: Data(), url: request.url)
            },
        ])
        let books = BooksRepository(configuration: try NetworkingConfiguration(domainURL: "api.example.com"), transport: transport)

        let call = Task { await books.book(id: 1) }
        for await _ in reached { break }  // the request is at the server: cancel it there
        call.cancel()
        guard case .failure(.cancelled)? = await call.value(within: .seconds(60)) else { Issue.record("expected cancelled"); return }
    }

    @Test("the echo route answers with the request's body")
    func echoRoute() async throws {
        let transport = StubTransport(routes: [StubTransportArticle.echoRoute()])
        let books = BooksRepository(configuration: try NetworkingConfiguration(domainURL: "api.example.com"), transport: transport)
        let created: Result<Book, RepositoryError> = await books.performRequest(.post("books", parameters: ["id": 3, "title": "Emma"]))
        #expect(try created.get().title == "Emma")
    }
}

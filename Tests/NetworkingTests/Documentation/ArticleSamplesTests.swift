// swift-format-ignore-file
// The documentation's code, kept as the articles and the README show it (their drift tests compare
// line by line), so the formatter leaves this folder alone.
import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

// The articles' samples (ArticleSamples.swift) run against a stub: they do what the articles say.
@Suite("Article samples")
struct ArticleSamplesTests {
    @Test("the errors article's mapping and the getting-started repository read a stub's answers as the articles say")
    func customErrorsAndRepository() async throws {
        let transport = StubTransport(routes: [
            .json(.get, "books", #"{"data": [{"id": 1, "title": "Dune"}]}"#),
            .status(.get, "books/99", 404, json: #"{"code": "not_found"}"#),
            .failure(.post, "books/import", .network(.connectionRefused)),
        ])
        let configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        let books = GettingStartedArticle.LibraryRepository(
            configuration: configuration, transport: transport, customErrors: ErrorsArticle.booksErrors)
        let missing = await books.book(id: 99)
        let titles = await books.titles(page: 1)
        let imported = await books.importBooks([])
        guard case .failure(let missingError) = missing else {
            Issue.record("expected a failure, got \(missing)")
            return
        }
        #expect(ErrorsArticle.describe(missingError) == "That book does not exist.")
        #expect(transport.requests.first?.url.path == "/books/99")
        #expect((try? titles.get())?.map(\.title) == ["Dune"])
        guard case .failure(.noNetworkConnection(.connectionRefused, _)) = imported else {
            Issue.record("expected connection refused, got \(imported)")
            return
        }
    }

    @Test("the uploads article's event streams: a POST completion read once, a feed that reconnects with Last-Event-ID until a 204")
    func serverSentEvents() async throws {
        let feedAnswers = Mutex(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "completions") { request throws(TransportError) in
                TransportResponse(
                    statusCode: 200, headers: ["Content-Type": "text/event-stream"],
                    body: Data("data: Hel\n\ndata: lo\n\ndata: [DONE]\n\n".utf8), url: request.url)
            },
            StubTransport.Route(.get, "changes") { request throws(TransportError) in
                let answer = feedAnswers.withLock { count in
                    defer { count += 1 }
                    return count
                }
                guard answer == 0 else { return TransportResponse(statusCode: 204, url: request.url) }
                return TransportResponse(
                    statusCode: 200, headers: ["Content-Type": "text/event-stream"],
                    body: Data("retry: 1\nid: 7\nevent: change\ndata: {\"id\": 1, \"title\": \"Dune\"}\n\n: ping\n\n".utf8),
                    url: request.url)
            },
        ])
        let feed = UploadsArticle.FeedRepository(configuration: try NetworkingConfiguration(domainURL: "api.example.com"), transport: transport)
        try await feed.complete("Once")
        var changes: [String] = []
        try await feed.followChanges { changes.append($0.title) }
        #expect(changes == ["Dune"])
        #expect(transport.requests.filter { $0.method == .post }.count == 1)
        #expect(transport.requests.filter { $0.method == .get }.map { $0.headers["Last-Event-ID"] } == [nil, "7"])
    }

    #if os(Linux) && canImport(CCurl)
        @Test("the performance article's requests from tasks that prefer the transport's executor all arrive (test API)")
        func manyInFlightOnTheLoopThread() async throws {
            let servers = try TestServers.require()
            let (_, _, login) = try await TestAPI.loggedIn()
            let configuration = try TestServers.configuration(
                servers.apiURL, defaultHeaders: ["Authorization": "Bearer \(login.token)"])
            let (transport, library) = PerformanceArticle.makeLibrary(configuration: configuration)
            let books = await PerformanceArticle.manyInFlight(library, on: transport, ids: Array(1...20))
            #expect(books.map(\.id).sorted() == Array(1...20))
        }
    #endif

    @Test("metadata on success, a decoding step, a changed setting and an interceptor position, as the articles show them")
    func seamSamples() async throws {
        let transport = StubTransport(routes: [
            .status(
                .get, "books", 200, json: #"{"data": [{"id": 1, "title": "Dune"}]}"#,
                headers: ["X-Total-Count": "41", "Link": #"<https://staging.example.com/books?page=2>; rel="next""#])
        ])
        let configuration = try GettingStartedArticle.stagingConfiguration()
        #expect(configuration.baseURL.absoluteString == "https://staging.example.com")
        let books = GettingStartedArticle.LibraryRepository(
            configuration: configuration, transport: transport, interceptors: [PipelineArticle.CallTracer()])
        let page = try await books.page(1).get()
        #expect(page.value.data.map(\.title) == ["Dune"])
        #expect(page.statusCode == 200 && page.headers["X-Total-Count"] == "41" && page.source == .network)
        #expect(page.link(rel: "next")?.absoluteString == "https://staging.example.com/books?page=2")
        #expect(try await books.bookTitles().get() == ["Dune"])
        #expect(transport.requests.first?.headers["X-Client"] == "books-cli")
        var broken = configuration
        broken.timeout = -1
        #expect(throws: RepositoryError.self) { try broken.validate() }
        let refused = await GettingStartedArticle.LibraryRepository(configuration: broken, transport: transport).page(1)
        guard case .failure(.invalidConfiguration(let reason)) = refused else {
            Issue.record("expected invalidConfiguration, got \(refused)")
            return
        }
        #expect(reason.contains("timeout"))
        #expect(transport.requests.count == 2)
    }

    @Test("the routes article's route file loads, and its routes work through a stub")
    func routeSamples() async throws {
        let root = try DocumentationPages.packageRoot()
        let json = try DocumentationPages.firstJSONBlock(of: root.appendingPathComponent("Sources/Networking/Networking.docc/Routes.md"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("article-routes-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let configuration = try RoutesArticle.routedConfiguration(routeFile: file)
        #expect(configuration.routes.names == ["book", "books", "cover", "createBook", "export", "login"])
        let transport = StubTransport(routes: [
            .json(.get, "books/7", #"{"id": 7, "title": "Dune"}"#),
            .json(.post, "books", status: 201, #"{"id": 8, "title": "New"}"#),
        ])
        let repository = RoutesArticle.RoutedRepository(configuration: configuration, transport: transport)
        #expect(try await repository.book(id: 7).get().title == "Dune")
        #expect(try await repository.refresh(RoutesArticle.BookID(id: 7)).get().id == 7)
        #expect(try await repository.create(GettingStartedArticle.NewBook(title: "New", author: "A", genre: "novel", year: 2024)).get().id == 8)
        let sent = try #require(transport.requests.last?.body?.inMemoryData)
        #expect(try JSONValue(parsing: sent) == ["book": ["title": "New", "author": "A", "genre": "novel", "year": 2024]])
    }

    @Test("FastJSONDecoder, used directly, decodes a key path and a whole document with the decoder's strategies")
    func fastDecoder() throws {
        let page = Data(#"{"data": [{"id": 1, "title": "Dune"}, {"id": 2, "title": "Emma"}], "page": {"next": null}}"#.utf8)
        let book = Data(#"{"id": 3, "title": "Kindred", "page_count": 264}"#.utf8)
        let (first, one) = try GettingStartedArticle.fastDecoding(pageData: page, bookData: book)
        #expect(first.map(\.title) == ["Dune", "Emma"])
        #expect(one.id == 3)
        #expect(throws: DecodingError.self) {
            try FastJSONDecoder().decode([GettingStartedArticle.Book].self, from: page, at: "page")
        }
    }

    @Test("the getting-started configuration gives the documented base URL")
    func quickStartConfiguration() throws {
        let configuration = try NetworkingConfiguration(
            useSecureConnection: false, domainURL: "127.0.0.1", port: 8000, subdomainURL: "/api/v1")
        #expect(configuration.baseURL.absoluteString == "http://127.0.0.1:8000/api/v1")
    }
}

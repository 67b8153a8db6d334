// swift-format-ignore-file
// The documentation's code, kept as the articles and the README show it (their drift tests compare
// line by line), so the formatter leaves this folder alone.
import Foundation
import Networking
import NetworkingCache
import NetworkingTestSupport
import Testing

// The cache article's samples (CacheArticleSamples.swift) run against a stub: they do what the
// article says.
@Suite("Cache article samples")
struct CacheArticleSamplesTests {
    @Test func theSamplesBehaveAsTheArticleSays() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let (configuration, cache) = try CacheArticle.cachedConfiguration(cachesFolder: folder.url)
        let transport = StubTransport(routes: [
            .status(.get, "books", 200, json: #"[{"id": 1, "title": "Dune"}]"#, headers: ["Cache-Control": "max-age=60"]),
            .json(.get, "genres", #"["novel", "poetry"]"#),
        ])
        let catalog = CacheArticle.CatalogRepository(configuration: configuration, transport: transport)

        #expect(await catalog.booksOffline().failure?.isCacheMiss == true)
        #expect(try await catalog.books().get().source == .network)
        #expect(try await catalog.books().get().source == .cache)
        #expect(try await catalog.booksOffline().get().first?.title == "Dune")
        #expect(try await catalog.genres().get() == ["novel", "poetry"])
        #expect(try await catalog.genres().get() == ["novel", "poetry"])
        await CacheArticle.showBooks(catalog, cache: cache)
        #expect(transport.requests.count == 2)
        struct Reader: Codable, Sendable, Identifiable { let id: Int }
        let session = SessionManager<Reader>()
        try session.login(user: Reader(id: 42), token: "t")
        try CacheArticle.logOut(session, cache: cache)
        #expect(!session.isLoggedIn)
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("responses").path))
    }

    @Test func theRouteFileLoadsAndItsWriteInvalidatesTheList() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("article-cache-routes-\(UUID().uuidString).json")
        let article = try DocumentationPages.packageRoot().appendingPathComponent("Sources/NetworkingCache/NetworkingCache.docc/TheResponseCache.md")
        try Data(try DocumentationPages.firstJSONBlock(of: article).utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let cache = try ResponseCache()
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.routes = try RouteTable(contentsOf: file)
        configuration.interceptors.append(cache.interceptor)
        let count = Shared(0)
        let transport = StubTransport(routes: [CacheHarness.counting("documents", count: count), .status(.post, "documents", 201, json: "{}")])
        let repository = CacheRepository(configuration: configuration, transport: transport)
        _ = try await repository.fetch(.route("documentList", parameters: ["page": 1])).get()
        #expect(try await repository.fetch(.route("documentList", parameters: ["page": 2])).get().source == .cache)
        _ = try await repository.send(.route("createDocument")).get()
        #expect(try await repository.fetch(.route("documentList")).get().source == .network)
    }
}

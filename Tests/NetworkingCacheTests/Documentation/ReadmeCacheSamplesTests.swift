import Foundation
import Networking
import NetworkingCache
import NetworkingTestSupport
import Testing

// The code of README.md's "Response cache" section, as it is there, so the documentation cannot
// drift from the API. Types live in a namespace; top-level statements are wrapped in functions.
enum CacheReadme {
    struct Book: Decodable, Sendable { let id: Int; let title: String }

    static func cachedConfiguration(cachesFolder: URL) throws -> (NetworkingConfiguration, ResponseCache) {
        let cache = try ResponseCache(configuration: .init(
            diskFolder: cachesFolder.appendingPathComponent("responses"),   // nil: memory only
            servesStaleOnConnectivityFailure: true))
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com", subdomainURL: "/api/v1")
        configuration.interceptors.append(cache)                          // or cache.interceptor
        return (configuration, cache)
    }

    final class CatalogRepository: AbstractRepository, @unchecked Sendable {
        // HTTP caching: the server's Cache-Control, Expires, ETag and Last-Modified decide.
        func books() async -> Result<RepositoryResponse<[Book]>, RepositoryError> {
            await performRequest(.get("books"))
        }

        // A time to live of our own: used for 5 minutes without asking the server.
        func genres() async -> Result<[String], RepositoryError> {
            await performRequest(Endpoint.get("genres").cached(for: 300))
        }

        // Never the network: what is stored, or a miss.
        func booksOffline() async -> Result<[Book], RepositoryError> {
            await performRequest(Endpoint.get("books").cacheOnly())
        }
    }

    static func showBooks(_ catalog: CatalogRepository, cache: ResponseCache) async {
        if let response = try? await catalog.books().get() {
            print(response.value.count, "books from", response.source)   // network, cache, revalidated or stale
        }
        if case .failure(let error) = await catalog.booksOffline(), error.isCacheMiss {
            print("nothing stored yet")
        }
        cache.removeEntries(for: "user:42")   // a user's answers, at logout; cache.removeAll() for everything
    }

    /// The section's JSON block (the route file).
    static func routeFile() throws -> String {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("README.md").path) { folder.deleteLastPathComponent() }
        let text = try String(contentsOf: folder.appendingPathComponent("README.md"), encoding: .utf8)
        let section = text.components(separatedBy: "## Response cache\n").dropFirst().first ?? ""
        return section.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first ?? ""
    }
}

@Suite struct ReadmeCacheSamplesTests {
    @Test func theSamplesBehaveAsTheReadmeSays() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let (configuration, cache) = try CacheReadme.cachedConfiguration(cachesFolder: folder.url)
        let transport = StubTransport(routes: [
            .status(.get, "books", 200, json: #"[{"id": 1, "title": "Dune"}]"#, headers: ["Cache-Control": "max-age=60"]),
            .json(.get, "genres", #"["novel", "poetry"]"#),
        ])
        let catalog = CacheReadme.CatalogRepository(configuration: configuration, transport: transport)

        #expect(await catalog.booksOffline().failure?.isCacheMiss == true)
        #expect(try await catalog.books().get().source == .network)
        #expect(try await catalog.books().get().source == .cache)
        #expect(try await catalog.booksOffline().get().first?.title == "Dune")
        #expect(try await catalog.genres().get() == ["novel", "poetry"])
        #expect(try await catalog.genres().get() == ["novel", "poetry"])
        await CacheReadme.showBooks(catalog, cache: cache)
        #expect(transport.requests.count == 2)
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("responses").path))
    }

    @Test func theRouteFileLoadsAndItsWriteInvalidatesTheList() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("readme-cache-routes-\(UUID().uuidString).json")
        try Data(try CacheReadme.routeFile().utf8).write(to: file)
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

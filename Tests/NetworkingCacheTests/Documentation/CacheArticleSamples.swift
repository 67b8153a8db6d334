// swift-format-ignore-file
// The documentation's code, kept as the articles and the README show it (their drift tests compare
// line by line), so the formatter leaves this folder alone.
import Foundation
import Networking
import NetworkingCache

// Every ```swift block of the NetworkingCache catalog (Sources/NetworkingCache/NetworkingCache.docc),
// as it is there, so the documentation cannot drift from the API: CacheArticleCodeBlocksTests checks
// that each line of each block is in this folder. Types live in a namespace; top-level statements
// are wrapped in functions.
enum CacheArticle {
    struct Book: Decodable, Sendable { let id: Int; let title: String }

    static func cachedConfiguration(cachesFolder: URL) throws -> (NetworkingConfiguration, ResponseCache) {
        let cache = try ResponseCache(configuration: .init(
            diskFolder: cachesFolder.appendingPathComponent("responses"),   // nil: memory only
            servesStaleOnConnectivityFailure: true))
        var configuration = try NetworkingConfiguration(baseURL: "https://api.example.com/api/v1")
        configuration.interceptors.append(cache)                          // or cache.interceptor
        return (configuration, cache)
    }

    final class CatalogRepository: AbstractRepository, @unchecked Sendable {
        // HTTP caching: the server's Cache-Control, Expires, ETag and Last-Modified decide (for a
        // signed call, only an explicit public, private, s-maxage or must-revalidate stores it).
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
    }

    static func logOut<User>(_ session: SessionManager<User>, cache: ResponseCache) throws {
        // Taken before the logout, after which it is nil; nil already when nobody is logged in,
        // and then nothing is removed (nil would name the answers shared by everybody).
        guard let user = session.sessionIdentity else { return try session.logout() }
        defer { cache.removeEntries(for: user) }   // even when logout() throws .storeFailed
        try session.logout()
    }
}

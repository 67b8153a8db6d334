import Foundation
import Networking
import NetworkingTestSupport
import Testing

@testable import NetworkingCache

/// The disk tier through the interceptor: answers survive a new cache over the same folder,
/// damaged files are fetched again, and invalidation leaves no file behind.
@Suite struct ResponseCacheDiskTests {
    private func repository(folder: URL, count: Shared<Int>, routes: RouteTable? = nil, memory: Bool = true) throws
        -> (CacheRepository, ResponseCache, StubTransport)
    {
        let cache = try ResponseCache(
            configuration: .init(memoryEntryLimit: memory ? 1_000 : 0, diskFolder: folder, synchronizesDiskWrites: false))
        let transport = StubTransport(routes: [
            CacheHarness.counting("books", count: count) { _ in ["Cache-Control": "max-age=600", "ETag": "\"b\""] },
            CacheHarness.counting("authors", count: count) { _ in ["Cache-Control": "max-age=600"] },
            .status(.post, "books", 201, json: "{}"),
            .status(.put, "authors", 500, json: "{}"),
        ])
        return (
            CacheRepository(configuration: try CacheHarness.configuration(cache: cache, routes: routes), transport: transport), cache,
            transport
        )
    }

    @Test func answersOutliveTheCacheThatStoredThem() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let count = Shared(0)
        let (first, _, _) = try repository(folder: folder.url, count: count)
        _ = try await first.fetch(.get("books")).get()
        // A new launch: a new cache over the same folder, memory empty.
        let (second, _, transport) = try repository(folder: folder.url, count: count)
        let answer = try await second.fetch(.get("books")).get()
        #expect(answer.source == .cache)
        #expect(answer.n == 1)
        #expect(transport.requests.isEmpty)
    }

    @Test(
        "Credentials a call carries (its own Authorization, Cookie, an API key header named by Vary, a token in the query) never reach the disk in clear"
    )
    func noSecretsOnDisk() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let count = Shared(0)
        let cache = try ResponseCache(configuration: .init(memoryEntryLimit: 0, diskFolder: folder.url, synchronizesDiskWrites: false))
        let transport = StubTransport(routes: [
            CacheHarness.counting("private", count: count) { _ in
                ["Cache-Control": "private, max-age=600", "Vary": "Authorization, Cookie, X-Api-Key"]
            }
        ])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        func fetch(_ token: String) async throws -> RepositoryResponse<JSONValue> {
            let headers: HTTPHeaders = [
                "Authorization": "Bearer \(token)-bearer", "Cookie": "sid=\(token)-cookie", "X-Api-Key": "\(token)-key",
            ]
            return try await repository.fetch(
                Endpoint.get("private", parameters: ["access_token": "\(token)-query"], headers: headers).withoutSession()
            ).get()
        }
        let first = try await fetch("s3cr3t")
        let second = try await fetch("s3cr3t")
        let other = try await fetch("0ther")
        #expect([first.source, second.source, other.source] == [.network, .cache, .network])
        // A hit names the URL it answers, query included, as the network's answer does.
        #expect(second.url == first.url)
        #expect(second.url?.query?.contains("access_token=s3cr3t-query") == true)
        #expect(folder.files().count >= 2)
        for name in folder.files() {
            let text = String(decoding: try Data(contentsOf: folder.url.appendingPathComponent(name)), as: UTF8.self)
            for secret in ["s3cr3t", "0ther"] { #expect(!text.contains(secret), "\(name) holds \(secret)") }
        }
    }

    @Test func aDamagedEntryIsFetchedAgainNotACrash() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let count = Shared(0)
        let (first, _, _) = try repository(folder: folder.url, count: count)
        _ = try await first.fetch(.get("books")).get()
        let file = folder.url.appendingPathComponent(try #require(folder.files().first))
        let bytes = try Data(contentsOf: file)
        for damage in [bytes.prefix(bytes.count - 7), Data(), Data("garbage".utf8), bytes + Data([0])] {
            try damage.write(to: file)
            let (reader, _, transport) = try repository(folder: folder.url, count: count, memory: false)
            let answer = try await reader.fetch(.get("books")).get()
            #expect(answer.source == .network)
            #expect(transport.requests.count == 1)
            // The answer fetched again replaced the damaged file.
            #expect((try? EntryCodec.decode(Data(contentsOf: file))) != nil)
        }
    }

    @Test func invalidationRemovesEntriesAndTheirBodiesLeavingNoOrphans() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let routes = try RouteTable([
            Route(name: "books", path: "books", cacheTTL: 600),
            Route(name: "authors", path: "authors", cacheTTL: 600),
            Route(name: "addBook", method: .post, path: "books", invalidatesCachedRouteNames: ["books"]),
        ])
        let count = Shared(0)
        let (repository, _, _) = try repository(folder: folder.url, count: count, routes: routes)
        for page in 1...3 { _ = try await repository.fetch(.route("books", parameters: ["page": page])).get() }
        _ = try await repository.fetch(.route("authors")).get()
        #expect(folder.files().count == 4)
        _ = try await repository.send(.route("addBook")).get()
        // Only the authors' file is left: each entry and its body were one file, removed together.
        #expect(folder.files().count == 1)
        #expect(try await repository.fetch(.route("authors")).get().source == .cache)
        #expect(try await repository.fetch(.route("books", parameters: ["page": 1])).get().source == .network)
    }

    @Test func aSuccessfulWriteInvalidatesReadsOfItsURL() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let count = Shared(0)
        let (repository, _, _) = try repository(folder: folder.url, count: count)
        _ = try await repository.fetch(.get("books", parameters: ["page": 1])).get()
        _ = try await repository.fetch(.get("authors")).get()
        _ = try await repository.send(.post("books")).get()
        #expect(try await repository.fetch(.get("books", parameters: ["page": 1])).get().source == .network)
        #expect(try await repository.fetch(.get("authors")).get().source == .cache)
        // A failed write invalidates nothing.
        _ = await repository.send(.put("authors"))
        #expect(try await repository.fetch(.get("authors")).get().source == .cache)
    }

    @Test func removeAllEmptiesTheFolder() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let count = Shared(0)
        let (repository, cache, _) = try repository(folder: folder.url, count: count)
        _ = try await repository.fetch(.get("books")).get()
        _ = try await repository.fetch(.get("authors")).get()
        cache.removeAll()
        #expect(folder.files().isEmpty)
        #expect(try await repository.fetch(.get("books")).get().source == .network)
    }
}

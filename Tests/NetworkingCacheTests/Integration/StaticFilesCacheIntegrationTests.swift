import Foundation
import Networking
import NetworkingCache
import Testing

/// The cache against nginx's own ETag / Last-Modified / If-None-Match handling of static files.
@Suite(.serialized) struct StaticFilesCacheIntegrationTests {
    let servers: TestServers

    init() throws { servers = try TestServers.require() }

    private func repository(_ cache: ResponseCache) throws -> CacheRepository {
        CacheRepository(configuration: try TestServers.configuration(servers.nginxURL, interceptors: [cache]))
    }

    private func get(_ path: String, from repository: CacheRepository, policy: CachePolicy? = nil) async throws -> TransportResponse {
        var endpoint = Endpoint<TransportResponse>.get(path).withoutSession()
        if let policy { endpoint = endpoint.cachePolicy(policy) }
        return try await repository.performRawRequest(endpoint).get()
    }

    @Test func aStaticFileIsRevalidatedWithNginxsETag() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cache = try ResponseCache(configuration: .init(diskFolder: folder.url))
        let repository = try repository(cache)
        let first = try await get("small.json", from: repository)
        let second = try await get("small.json", from: repository)
        #expect(first.source == .network)
        #expect(first.headers["ETag"] != nil && first.headers["Last-Modified"] != nil)
        #expect(second.source == .revalidated)
        #expect(second.statusCode == 200)
        #expect(second.body == first.body)
        #expect(second.body.count == 2_101)

        // A new launch: the body comes from disk, the server only confirms it.
        let relaunched = try self.repository(try ResponseCache(configuration: .init(diskFolder: folder.url)))
        let third = try await get("small.json", from: relaunched)
        #expect(third.source == .revalidated)
        #expect(third.body == first.body)
    }

    @Test func aMegabyteIsKeptOnDiskTenAreTooLarge() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cache = try ResponseCache(configuration: .init(memoryEntryLimit: 0, diskFolder: folder.url))
        let repository = try repository(cache)
        let first = try await get("1m.bin", from: repository)
        let second = try await get("1m.bin", from: repository)
        #expect((first.source, second.source) == (.network, .revalidated))
        #expect(second.body == first.body)
        #expect(second.body.count == 1_048_576)
        #expect(folder.files().count == 1)

        // Above maximumBodyBytes (5 MiB by default) nothing is stored.
        let large = try await get("10m.bin", from: repository)
        let again = try await get("10m.bin", from: repository)
        #expect((large.source, again.source) == (.network, .network))
        #expect(folder.files().count == 1)
    }

    @Test func aTimeToLiveSparesEvenTheRevalidation() async throws {
        let repository = try repository(try ResponseCache())
        _ = try await get("small.json", from: repository, policy: CachePolicy(timeToLive: 60))
        #expect(try await get("small.json", from: repository, policy: CachePolicy(timeToLive: 60)).source == .cache)
    }
}

/// The cache against httpbin's caching endpoints.
@Suite(.serialized) struct HTTPBinCacheIntegrationTests {
    let servers: TestServers
    let repository: CacheRepository

    init() throws {
        servers = try TestServers.require()
        repository = CacheRepository(configuration: try TestServers.configuration(servers.httpbinURL, interceptors: [try ResponseCache()]))
    }

    private func get(_ path: String, _ query: [String: String] = [:], headers: HTTPHeaders = [:]) async throws -> TransportResponse {
        try await repository.performRawRequest(
            Endpoint<TransportResponse>.get(path, parameters: query.isEmpty ? nil : Parameters(dictionary: query), headers: headers)
                .withoutSession()
        ).get()
    }

    @Test func cacheWithAMaxAgeIsServedFromTheCache() async throws {
        let first = try await get("cache/60")
        #expect(first.headers["Cache-Control"] == "public, max-age=60")
        let second = try await get("cache/60")
        #expect(second.source == .cache)
        #expect(second.body == first.body)
    }

    @Test func cacheAnswersConditionalRequestsWith304() async throws {
        let first = try await get("cache")
        let second = try await get("cache")
        #expect((first.source, second.source) == (.network, .revalidated))
        #expect(second.body == first.body)
    }

    @Test func aRedirectsTargetIsNotStoredUnderTheURLThatRedirected() async throws {
        // /cache/60 is public for a minute; the URL that redirects there says nothing of its own.
        let query = ["url": "/cache/60", "id": UUID().uuidString]
        let first = try await get("redirect-to", query)
        #expect(first.headers["Cache-Control"] == "public, max-age=60")
        #expect(try await get("redirect-to", query).source == .network)
    }

    @Test func etagIsRevalidated() async throws {
        let tag = "tag-\(UUID().uuidString.prefix(8))"
        let first = try await get("etag/\(tag)")
        let second = try await get("etag/\(tag)")
        #expect((first.source, second.source) == (.network, .revalidated))
    }

    @Test func responseHeadersDriveTheRules() async throws {
        // max-age
        let cached = ["Cache-Control": "max-age=60", "X-Test": UUID().uuidString]
        _ = try await get("response-headers", cached)
        #expect(try await get("response-headers", cached).source == .cache)
        // no-store
        let neverStored = ["Cache-Control": "max-age=60, no-store", "X-Test": UUID().uuidString]
        _ = try await get("response-headers", neverStored)
        #expect(try await get("response-headers", neverStored).source == .network)
        // Vary on a request field
        let varying = ["Cache-Control": "max-age=60", "Vary": "X-Variant", "X-Test": UUID().uuidString]
        _ = try await get("response-headers", varying, headers: ["X-Variant": "a"])
        #expect(try await get("response-headers", varying, headers: ["X-Variant": "b"]).source == .network)
        #expect(try await get("response-headers", varying, headers: ["X-Variant": "a"]).source == .cache)
        // Vary: * is never reused
        let star = ["Cache-Control": "max-age=60", "Vary": "*", "X-Test": UUID().uuidString]
        _ = try await get("response-headers", star)
        #expect(try await get("response-headers", star).source == .network)
        // Expires in the past, no validator: fetched again
        let expired = ["Expires": "Thu, 01 Jan 1970 00:00:00 GMT", "X-Test": UUID().uuidString]
        _ = try await get("response-headers", expired)
        #expect(try await get("response-headers", expired).source == .network)
    }

    @Test func cookiesAServerSetsAreNotStoredNorServedFromTheCache() async throws {
        // Given: an answer fresh for a minute that sets a session cookie
        let query = ["Cache-Control": "max-age=60", "Set-Cookie": "sid=secret; Path=/", "X-Test": UUID().uuidString]
        // When
        let live = try await get("response-headers", query)
        let cached = try await get("response-headers", query)
        // Then: the live answer carries it; the stored one does not
        #expect(live.headers["Set-Cookie"] == "sid=secret; Path=/")
        #expect(cached.source == .cache)
        #expect(cached.headers["Set-Cookie"] == nil)
        #expect(cached.body == live.body)
    }

    @Test func aWriteToAURLInvalidatesItsReadsForEveryUser() async throws {
        // Given a read kept for a minute while nobody is logged in (the discriminator says nil)
        let user = Shared<String?>(nil)
        let cache = try ResponseCache(configuration: .init(discriminator: { _ in user.current }))
        let repository = CacheRepository(configuration: try TestServers.configuration(servers.httpbinURL, interceptors: [cache]))
        let path = "anything/cache-\(UUID().uuidString.prefix(8).lowercased())"
        let read = Endpoint<TransportResponse>.get(path).withoutSession().cached(for: 60)
        _ = try await repository.performRawRequest(read).get()
        #expect(try await repository.performRawRequest(read).get().source == .cache)

        // When a user posts to that URL
        user.set("alice")
        #expect(try await repository.performRawRequest(Endpoint<TransportResponse>.post(path).withoutSession()).get().statusCode == 200)

        // Then the shared read goes to the server again
        user.set(nil)
        #expect(try await repository.performRawRequest(read).get().source == .network)
    }

    @Test("A write whose answer names another URL of the server in Location makes that URL's stored reads obsolete")
    func aWriteInvalidatesTheURLItsLocationNames() async throws {
        let cache = try ResponseCache()
        let repository = CacheRepository(configuration: try TestServers.configuration(servers.httpbinURL, interceptors: [cache]))
        let path = "anything/cache-\(UUID().uuidString.prefix(8).lowercased())"
        let read = Endpoint<TransportResponse>.get(path).withoutSession().cached(for: 60)
        _ = try await repository.performRawRequest(read).get()
        #expect(try await repository.performRawRequest(read).get().source == .cache)

        // httpbin answers a POST to /response-headers with the query's fields as its own.
        let write = Endpoint<TransportResponse>(.post, "response-headers", query: ["Location": "/\(path)"]).withoutSession()
        let written = try await repository.performRawRequest(write).get()
        #expect(written.statusCode == 200 && written.headers["Location"] == "/\(path)")

        #expect(try await repository.performRawRequest(read).get().source == .network)
    }

    @Test func aCreatedAnswerWithoutALifetimeIsNotStoredEvenToStandInStale() async throws {
        // Given a cache that keeps answers to serve them stale
        let cache = try ResponseCache(configuration: .init(servesStaleOnConnectivityFailure: true))
        let repository = CacheRepository(configuration: try TestServers.configuration(servers.httpbinURL, interceptors: [cache]))

        // When httpbin answers 201 and 200, neither with caching headers
        let created = Endpoint<TransportResponse>.get("status/201").withoutSession()
        let ok = Endpoint<TransportResponse>.get("status/200").withoutSession()
        #expect(try await repository.performRawRequest(created).get().statusCode == 201)
        #expect(try await repository.performRawRequest(ok).get().statusCode == 200)

        // Then only the 200, heuristically cacheable, was kept (a cache-only call may use it stale)
        #expect(await repository.performRawRequest(created.cacheOnly()).failure?.isCacheMiss == true)
        #expect(try await repository.performRawRequest(ok.cacheOnly()).get().source == .stale)
    }
}

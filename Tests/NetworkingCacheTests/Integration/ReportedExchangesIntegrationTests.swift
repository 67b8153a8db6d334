import Foundation
import Networking
import NetworkingOffline
import NetworkingTestSupport
import Testing

@testable import NetworkingCache

/// Writes that reach the test API outside the cache's chain — items of a batch request, writes
/// an offline queue delivers later — make stale what they would have made stale going through
/// it: the server's hit counters prove the next read went to the network.
@Suite(.serialized) struct ReportedExchangesIntegrationTests {
    let servers: TestServers

    init() throws {
        servers = try TestServers.require()
    }

    /// A cached read route and a write route that invalidates it (which may be queued offline:
    /// then a repository without an `OfflineQueue` refuses it).
    static func routes(offline: Bool = true) throws -> RouteTable {
        try RouteTable([
            Route(name: "resource", path: "cache/resource/{key}", requiresSession: false, cacheTTL: 600),
            Route(
                name: "touch", method: .post, path: "cache/resource/{key}/touch", requiresSession: false,
                invalidatesCachedRouteNames: ["resource"], offline: offline),
            Route(name: "fail", method: .post, path: "status/404", requiresSession: false, invalidatesCachedRouteNames: ["resource"]),
        ])
    }

    static func succeeded(_ result: Result<Void, RepositoryError>) -> Bool {
        if case .success = result { return true }
        return false
    }

    static func read(_ key: String) -> Endpoint<RepositoryResponse<CacheFixtures.Resource>> {
        .route("resource", pathVariables: ["key": key])
    }

    @Test("A batch's items invalidate the routes they name, as the same writes sent alone would; a refused item leaves the cache alone")
    func batchItemsInvalidateRoutes() async throws {
        let cache = try ResponseCache()
        var configuration = try TestServers.configuration(servers.apiURL, interceptors: [cache])
        configuration.routes = try Self.routes(offline: false)
        let api = CacheFixtures.Repository(configuration: configuration)
        let key = CacheFixtures.uniqueKey("batch")
        _ = try await api.performRequest(Self.read(key)).get()
        #expect(try await api.performRequest(Self.read(key)).get().source == .cache)
        let client = BatchClient(repository: api, path: "batch")
        // Answered 404: a write that changed nothing makes nothing stale.
        var failing = Batch()
        let refused = failing.add(Endpoint<Void>.route("fail"))
        #expect(Self.succeeded(try await client.send(failing).get()[refused]) == false)
        #expect(try await api.performRequest(Self.read(key)).get().source == .cache)
        var batch = Batch()
        let touch = batch.add(Endpoint<Void>.route("touch", pathVariables: ["key": key]))
        #expect(Self.succeeded(try await client.send(batch).get()[touch]))
        let after = try await api.performRequest(Self.read(key)).get()
        #expect((after.source, after.value.version) == (.network, 2))
    }

    @Test(
        "A batch's reads of the cache go through the chain on their own: a stored answer without the network, a cache-only miss never sent")
    func batchReadsOfTheCacheGoThroughTheChain() async throws {
        let cache = try ResponseCache()
        var configuration = try TestServers.configuration(servers.apiURL, interceptors: [cache])
        configuration.routes = try Self.routes()
        let api = CacheFixtures.Repository(configuration: configuration)
        let client = BatchClient(repository: api, path: "batch")
        let (stored, missing, plain) = (
            CacheFixtures.uniqueKey("batch-ttl"), CacheFixtures.uniqueKey("batch-miss"), CacheFixtures.uniqueKey("batch-plain")
        )
        var batch = Batch()
        let read = batch.add(Endpoint<CacheFixtures.Resource>.route("resource", pathVariables: ["key": stored]))
        let onlyStored = batch.add(Endpoint<CacheFixtures.Resource>.route("resource", pathVariables: ["key": missing]).cacheOnly())
        let uncached = batch.add(Endpoint<CacheFixtures.Resource>.get("cache/resource/\(plain)").withoutSession())
        for _ in 0..<2 {
            let results = try await client.send(batch).get()
            #expect(try results[read].get().key == stored)
            #expect(try results[uncached].get().key == plain)
            guard case .failure(let miss) = results[onlyStored] else {
                Issue.record("expected a cache miss, got \(results[onlyStored])")
                continue
            }
            #expect(miss.isCacheMiss)
        }
        // The route's time to live stored the first answer and served the second; the cache-only
        // read never reached the server; the plain item went in both batch requests, unstored.
        #expect(try await api.hits(stored).requests == 1)
        #expect(try await api.hits(missing).requests == 0)
        #expect(try await api.hits(plain).requests == 2)

        // When the batch request fails, the read the cache answered keeps its answer.
        let failing = try await BatchClient(repository: api, path: "batch", query: ["fail": 503]).send(batch).get()
        #expect(try failing[read].get().key == stored)
        guard case .failure(let failed) = failing[uncached] else {
            Issue.record("expected the batch request's failure, got \(failing[uncached])")
            return
        }
        #expect(failed.context?.response?.statusCode == 503)
    }

    @Test("A batch's cache read comes after its writes: a write item that invalidates the read's route is reported first")
    func batchReadsSeeTheBatchsWrites() async throws {
        let cache = try ResponseCache()
        var configuration = try TestServers.configuration(servers.apiURL, interceptors: [cache])
        configuration.routes = try Self.routes(offline: false)
        let api = CacheFixtures.Repository(configuration: configuration)
        let key = CacheFixtures.uniqueKey("batch-order")
        _ = try await api.performRequest(Self.read(key)).get()
        var batch = Batch()
        let touch = batch.add(Endpoint<Void>.route("touch", pathVariables: ["key": key]))
        let read = batch.add(Endpoint<CacheFixtures.Resource>.route("resource", pathVariables: ["key": key]))
        let results = try await BatchClient(repository: api, path: "batch").send(batch).get()
        #expect(Self.succeeded(results[touch]))
        #expect(try results[read].get().version == 2, "not the stored answer the write made stale")
    }

    @Test("A batch item asking for a cache the repository lacks is refused, as it would be alone; the others are answered")
    func batchItemWithoutItsCacheIsRefused() async throws {
        let api = CacheFixtures.Repository(configuration: try TestServers.configuration(servers.apiURL, interceptors: []))
        let key = CacheFixtures.uniqueKey("batch-nocache")
        var batch = Batch()
        let cached = batch.add(Endpoint<CacheFixtures.Resource>.get("cache/resource/\(key)").withoutSession().cacheOnly())
        let plain = batch.add(Endpoint<CacheFixtures.Resource>.get("cache/resource/\(key)").withoutSession())
        let results = try await BatchClient(repository: api, path: "batch").send(batch).get()
        guard case .failure(.invalidRequest(let reason, _)) = results[cached] else {
            Issue.record("expected the cache-only item to be refused, got \(results[cached])")
            return
        }
        #expect(reason.contains("ResponseCache"))
        #expect(try results[plain].get().key == key)
        let hits = try await api.performRequest(Endpoint<CacheFixtures.Hits>.get("cache/hits/\(key)").withoutSession()).get()
        #expect(hits.requests == 1)
    }

    @Test(
        "A write queued offline invalidates its routes when the flush delivers it, through the chain or a batch", arguments: [false, true])
    func flushedWritesInvalidateRoutes(batched: Bool) async throws {
        let base = try #require(URL(string: servers.apiURL))
        let proxy = try OutageProxy(upstreamPort: base.port ?? 0)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(
            OfflineQueue.Configuration(folder: folder, retryDelay: 3600, batch: batched ? (path: "batch", limit: 10) : nil))
        let cache = try ResponseCache()
        var proxied = URLComponents(string: servers.apiURL)
        proxied?.port = proxy.port
        var configuration = try TestServers.configuration(try #require(proxied?.string), interceptors: [cache, queue])
        configuration.routes = try Self.routes()
        let api = CacheFixtures.Repository(configuration: configuration)
        queue.connect(api)
        let key = CacheFixtures.uniqueKey(batched ? "flush-batched" : "flush")
        _ = try await api.performRequest(Self.read(key)).get()
        proxy.goDown()
        let outcome = await queue.perform(Endpoint<Void>.route("touch", pathVariables: ["key": key]), with: api)
        guard case .queued = outcome else {
            Issue.record("expected the write to be queued, got \(outcome)")
            return
        }
        #expect(try await api.performRequest(Self.read(key)).get().source == .cache, "not delivered yet")
        try proxy.comeUp()
        let report = await queue.flush()
        #expect(report.delivered.count == 1)
        let after = try await api.performRequest(Self.read(key)).get()
        #expect((after.source, after.value.version) == (.network, 2))
    }
}

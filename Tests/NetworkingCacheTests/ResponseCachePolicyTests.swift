import Foundation
import Networking
import NetworkingCache
import NetworkingTestSupport
import Testing

/// Time to live, routes, invalidation, cache-only calls and configuration, through the real
/// pipeline against a stub transport.
@Suite struct ResponseCachePolicyTests {
    @Test func aTimeToLiveServesFromTheCacheUntilItEnds() async throws {
        // Given a cache with a test clock and an endpoint cached for 60 seconds
        let clock = TestClock()
        let cache = try ResponseCache(configuration: .init(clock: clock.networkingClock))
        let count = Shared(0)
        let transport = StubTransport(routes: [CacheHarness.counting("books", count: count)])
        let books = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("books").cached(for: 60)

        // When it is called three times within the minute, then after it
        let first = try await books.fetch(endpoint).get()
        clock.advance(by: 30)
        let second = try await books.fetch(endpoint).get()
        clock.advance(by: 29)
        let third = try await books.fetch(endpoint).get()
        clock.advance(by: 2)
        let fourth = try await books.fetch(endpoint).get()

        // Then only the first and the last reach the server, and each says where it came from
        #expect([first.source, second.source, third.source, fourth.source] == [.network, .cache, .cache, .network])
        #expect([first.n, second.n, third.n, fourth.n] == [1, 1, 1, 2])
        #expect(transport.requests.count == 2)
        #expect(second.headers["Age"] == "30")
    }

    @Test func routeSettingsCacheIgnoreQueriesAndInvalidateOtherRoutes() async throws {
        // Given WebApiClient-style routes: a list cached for 10 minutes whatever its query, and a
        // write that invalidates it
        let cache = try ResponseCache()
        let listCount = Shared(0)
        let transport = StubTransport(routes: [
            CacheHarness.counting("documents", count: listCount),
            .status(.post, "documents", 201, json: "{}"),
        ])
        let routes = try RouteTable([
            Route(name: "documentList", path: "documents", cacheTTL: 600, cacheIgnoreQueryParameters: true),
            Route(name: "createDocument", method: .post, path: "documents", invalidatesCachedRouteNames: ["documentList"]),
        ])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache, routes: routes), transport: transport)
        let page1 = Endpoint<RepositoryResponse<JSONValue>>.route("documentList", parameters: ["page": 1])
        let page2 = Endpoint<RepositoryResponse<JSONValue>>.route("documentList", parameters: ["page": 2])

        // When the list is read with two queries, a document is created, and the list is read again
        let first = try await repository.fetch(page1).get()
        let second = try await repository.fetch(page2).get()
        _ = try await repository.send(.route("createDocument")).get()
        let third = try await repository.fetch(page1).get()

        // Then the second read shared the first's entry, and the write invalidated it
        #expect([first.source, second.source, third.source] == [.network, .cache, .network])
        #expect(listCount.current == 2)
    }

    @Test("An endpoint built in code and named is made stale by a write naming it; an unnamed one is not")
    func namedEndpointsAreInvalidatedByName() async throws {
        let cache = try ResponseCache()
        let count = Shared(0)
        let transport = StubTransport(routes: [CacheHarness.counting("books", count: count), .status(.put, "books/1", 200, json: "{}")])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        let named = Endpoint<RepositoryResponse<JSONValue>>.get("books").named("bookList").cached(for: 600)
        let unnamed = Endpoint<RepositoryResponse<JSONValue>>.get("books").cached(for: 600)
        _ = try await repository.fetch(named).get()
        _ = try await repository.fetch(unnamed).get()
        _ = try await repository.send(Endpoint<Void>.put("books/1").invalidatingCachedRoutes(["bookList"])).get()
        #expect(try await repository.fetch(named).get().source == .network)
        #expect(try await repository.fetch(unnamed).get().source == .cache)
    }

    @Test func aReadThatInvalidatesOtherRoutesStillCachesItsOwnAnswer() async throws {
        // Given a feed cached for 10 minutes whose reading makes the stored badges obsolete
        let cache = try ResponseCache()
        let feedCount = Shared(0)
        let badgeCount = Shared(0)
        let transport = StubTransport(routes: [
            CacheHarness.counting("feed", count: feedCount), CacheHarness.counting("badges", count: badgeCount),
        ])
        let routes = try RouteTable([
            Route(name: "feed", path: "feed", cacheTTL: 600, invalidatesCachedRouteNames: ["badges"]),
            Route(name: "badges", path: "badges", cacheTTL: 600),
        ])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache, routes: routes), transport: transport)
        _ = try await repository.fetch(.route("badges")).get()

        // When the feed is read twice
        let first = try await repository.fetch(.route("feed")).get()
        let second = try await repository.fetch(.route("feed")).get()

        // Then the second read comes from the cache, and the first one removed the badges
        #expect([first.source, second.source] == [.network, .cache])
        #expect(feedCount.current == 1)
        #expect(try await repository.fetch(.route("badges")).get().source == .network)
        #expect(badgeCount.current == 2)
    }

    @Test func aReadThatInvalidatesItsOwnRouteSparesItsKeyOnlyWhenItsAnswerIsStored() async throws {
        // Given a feed that varies by language and whose reading invalidates the feed's stored
        // answers; the server forbids storing its third answer
        let cache = try ResponseCache()
        let count = Shared(0)
        let transport = StubTransport(routes: [
            CacheHarness.counting("feed", count: count) { _ in
                ["Vary": "Accept-Language", "Cache-Control": count.current == 3 ? "no-store" : "max-age=600"]
            }
        ])
        let routes = try RouteTable([Route(name: "feed", path: "feed", invalidatesCachedRouteNames: ["feed"])])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache, routes: routes), transport: transport)
        let english = Endpoint<RepositoryResponse<JSONValue>>.route("feed", headers: ["Accept-Language": "en"])
        let german = Endpoint<RepositoryResponse<JSONValue>>.route("feed", headers: ["Accept-Language": "de"])
        let french = Endpoint<RepositoryResponse<JSONValue>>.route("feed", headers: ["Accept-Language": "fr"])

        // When English and German are read (both stored: each spares its own key), then French,
        // whose answer is not stored
        _ = try await repository.fetch(english).get()
        _ = try await repository.fetch(german).get()
        #expect(try await repository.fetch(english).get().source == .cache)
        _ = try await repository.fetch(french).get()

        // Then French's read removed the other languages' answers too
        #expect(try await repository.fetch(english).get().source == .network)
        #expect(count.current == 4)
    }

    @Test func aZeroTimeToLiveTurnsCachingOff() async throws {
        let cache = try ResponseCache()
        let count = Shared(0)
        let transport = StubTransport(routes: [CacheHarness.counting("books", count: count) { _ in ["Cache-Control": "max-age=600"] }])
        let routes = try RouteTable([Route(name: "books", path: "books", cacheTTL: 0)])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache, routes: routes), transport: transport)
        for _ in 0..<2 { _ = try await repository.fetch(.route("books")).get() }
        #expect(count.current == 2)
        // The same with the cache given to the repository rather than the configuration.
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.routes = routes
        let own = CacheRepository(configuration: configuration, transport: transport, interceptors: [try ResponseCache()])
        for _ in 0..<2 { _ = try await own.fetch(.route("books")).get() }
        #expect(count.current == 4)
    }

    @Test func cacheOnlyNeverTouchesTheNetworkAndSaysWhenItMisses() async throws {
        let cache = try ResponseCache()
        let count = Shared(0)
        let transport = StubTransport(routes: [CacheHarness.counting("books", count: count)])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("books").cached(for: 60)

        // When the cache is asked before anything is stored
        let miss = await repository.fetch(endpoint.cacheOnly())
        // Then the call fails as a miss, with nothing sent
        let error = try #require(miss.failure)
        #expect(error.isCacheMiss)
        #expect(error.statusCode == 504)
        #expect(error.context?.response?.json?[string: "code"] == "not_cached")
        #expect(transport.requests.isEmpty)

        // When the answer has been fetched once, the cache-only call finds it
        _ = try await repository.fetch(endpoint).get()
        let hit = try await repository.fetch(endpoint.cacheOnly()).get()
        #expect(hit.source == .cache)
        #expect(transport.requests.count == 1)

        // A request's own only-if-cached works the same way; other errors are not misses
        let unknown = await repository.fetch(.get("authors", headers: ["Cache-Control": "only-if-cached"]))
        #expect(unknown.failure?.isCacheMiss == true)
        #expect(!RepositoryError.timeout(ErrorContext(request: RequestSummary(method: .get, url: URL(fileURLWithPath: "/")))).isCacheMiss)
    }

    @Test func aCacheOnlyMissIsNotRetried() async throws {
        // Given a configuration that retries a GET's 504 (the default policy), on a test clock
        let cache = try ResponseCache()
        let transport = StubTransport(routes: [CacheHarness.counting("books", count: Shared(0))])
        var configuration = try CacheHarness.configuration(cache: cache)
        configuration.retryPolicy = .default
        let clock = TestClock()
        configuration.clock = clock.networkingClock
        let repository = CacheRepository(configuration: configuration, transport: transport)
        // When a cache-only call misses
        let miss = await repository.fetch(Endpoint<RepositoryResponse<JSONValue>>.get("books").cached(for: 60).cacheOnly())
        // Then its made-up 504 is the call's answer at once: one attempt, no wait, nothing sent
        let error = try #require(miss.failure)
        #expect(error.isCacheMiss)
        #expect(error.context?.attempts == 1)
        #expect(clock.sleeps.isEmpty)
        #expect(transport.requests.isEmpty)
    }

    @Test func callsThatAskForCachingFailWithoutACache() async throws {
        // Given a repository without a ResponseCache
        let transport = StubTransport(routes: [.json(.get, "books", "{}")])
        let configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        let repository = CacheRepository(configuration: configuration, transport: transport)
        // When an endpoint asks for caching
        let result = await repository.fetch(Endpoint.get("books").cached(for: 60))
        // Then it fails before anything is sent, saying what to add
        guard case .invalidRequest(let reason, _)? = result.failure else {
            Issue.record("expected invalidRequest, got \(result)")
            return
        }
        #expect(reason.contains("ResponseCache"))
        #expect(transport.requests.isEmpty)
    }

    @Test func badConfigurationThrowsWhenTheCacheIsMade() throws {
        #expect(throws: RepositoryError.self) { try ResponseCache(configuration: .init(memoryByteLimit: -1)) }
        #expect(throws: RepositoryError.self) {
            try ResponseCache(configuration: .init(diskFolder: URL(string: "https://example.com/cache")))
        }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("not-a-folder")
        try Data().write(to: file)
        #expect(throws: RepositoryError.self) { try ResponseCache(configuration: .init(diskFolder: file)) }
    }

    @Test func reloadAndBypass() async throws {
        let cache = try ResponseCache()
        let count = Shared(0)
        let transport = StubTransport(routes: [CacheHarness.counting("books", count: count)])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("books").cached(for: 60)
        _ = try await repository.fetch(endpoint).get()
        // A reload asks the server and stores the new answer
        let reloaded = try await repository.fetch(endpoint.cachePolicy(CachePolicy(mode: .reload, timeToLive: 60))).get()
        #expect(reloaded.source == .network)
        #expect(try await repository.fetch(endpoint).get().n == 2)
        // A bypass neither reads nor writes
        let bypassed = try await repository.fetch(endpoint.cachePolicy(CachePolicy(mode: .bypass))).get()
        #expect(bypassed.n == 3)
        #expect(try await repository.fetch(endpoint).get().n == 2)
    }

    @Test func answersLargerThanTheLimitPassThroughUnstored() async throws {
        let cache = try ResponseCache(configuration: .init(maximumBodyBytes: 8))
        let count = Shared(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "big") { request throws(TransportError) in
                count.update { $0 += 1 }
                return TransportResponse(statusCode: 200, body: Data(count: 9), url: request.url)
            }
        ])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        for _ in 0..<2 { _ = try await repository.performRawRequest(Endpoint.get("big").cached(for: 60)).get() }
        #expect(count.current == 2)
    }
}

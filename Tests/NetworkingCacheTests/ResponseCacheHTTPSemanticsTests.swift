import Foundation
import Networking
import NetworkingCache
import NetworkingTestSupport
import Testing

/// RFC 9111 without a time to live, through the real pipeline against a stub transport.
@Suite struct ResponseCacheHTTPSemanticsTests {
    /// A repository over a stub whose `resource` route answers with `headers`, `304` when the
    /// request's `If-None-Match` equals the current `ETag`, and counts what it was sent.
    struct Server {
        let cache: ResponseCache
        let clock = TestClock()
        let count = Shared(0)
        let conditional = Shared(0)
        let version = Shared(1)
        let transport: StubTransport
        let repository: CacheRepository

        init(headers: @escaping @Sendable (Int) -> HTTPHeaders, configuration: ResponseCache.Configuration = .init()) throws {
            var settings = configuration
            settings.clock = clock.networkingClock
            cache = try ResponseCache(configuration: settings)
            let (count, conditional, version) = (count, conditional, version)
            transport = StubTransport(routes: [
                StubTransport.Route(.get, "resource") { request throws(TransportError) in
                    count.update { $0 += 1 }
                    let current = version.current
                    var fields = headers(current)
                    if request.headers["If-None-Match"] != nil || request.headers["If-Modified-Since"] != nil {
                        conditional.update { $0 += 1 }
                    }
                    if let etag = fields["ETag"], request.headers["If-None-Match"] == etag {
                        return TransportResponse(statusCode: 304, headers: fields, url: request.url)
                    }
                    fields["Content-Type"] = "application/json"
                    let body = #"{"n": \#(count.current), "version": \#(current), "lang": "\#(request.headers["Accept-Language"] ?? "")"}"#
                    return TransportResponse(statusCode: 200, headers: fields, body: Data(body.utf8), url: request.url)
                }
            ])
            repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        }

        func get(_ headers: HTTPHeaders = [:]) async throws -> RepositoryResponse<JSONValue> {
            try await repository.fetch(Endpoint.get("resource", headers: headers).withoutSession()).get()
        }
    }

    @Test func maxAgeIsFreshThenRevalidatedWithTheETag() async throws {
        let server = try Server(headers: { ["Cache-Control": "max-age=60", "ETag": "\"v\($0)\""] })
        let first = try await server.get()
        server.clock.advance(by: 59)
        let second = try await server.get()
        server.clock.advance(by: 2)
        let third = try await server.get()
        #expect([first.source, second.source, third.source] == [.network, .cache, .revalidated])
        #expect(third.statusCode == 200)
        #expect(third.n == 1)
        #expect(server.count.current == 2)
        #expect(server.transport.requests.last?.headers["If-None-Match"] == "\"v1\"")
        // The 304 restarted the entry's freshness.
        server.clock.advance(by: 30)
        #expect(try await server.get().source == .cache)
        // A new version is fetched whole once the entry is stale.
        server.version.set(2)
        server.clock.advance(by: 31)
        let changed = try await server.get()
        #expect(changed.source == .network)
        #expect(changed.value[int: "version"] == 2)
    }

    @Test func noCacheIsStoredButRevalidatedEveryTime() async throws {
        let server = try Server(headers: { ["Cache-Control": "no-cache", "ETag": "\"v\($0)\""] })
        let sources = try await [server.get(), server.get(), server.get()].map(\.source)
        #expect(sources == [.network, .revalidated, .revalidated])
        #expect(server.conditional.current == 2)
    }

    @Test func noStoreIsNeverStoredAndRemovesWhatWasThere() async throws {
        let noStore = Shared(false)
        let server = try Server(headers: { _ in
            noStore.current ? ["Cache-Control": "no-store"] : ["Cache-Control": "max-age=60"]
        })
        _ = try await server.get()
        #expect(try await server.get().source == .cache)
        // A request's no-store asks the server and keeps nothing new, but may read what is stored.
        #expect(try await server.get(["Cache-Control": "no-store"]).source == .cache)
        noStore.set(true)
        server.clock.advance(by: 61)
        #expect(try await server.get().source == .network)
        #expect(try await server.get().source == .network)
        #expect(server.count.current == 3)
    }

    @Test("An unstorable answer to one variant removes that variant, not the others")
    func anUnstorableAnswerRemovesOnlyItsVariant() async throws {
        let noStore = Shared(false)
        let server = try Server(headers: { _ in
            noStore.current
                ? ["Cache-Control": "no-store", "Vary": "Accept-Language"] : ["Cache-Control": "max-age=60", "Vary": "Accept-Language"]
        })
        _ = try await server.get(["Accept-Language": "fr"])
        _ = try await server.get(["Accept-Language": "en"])
        noStore.set(true)
        // A reload of the French answer brings one the server no longer lets be kept.
        #expect(try await server.get(["Accept-Language": "fr", "Cache-Control": "no-cache"]).source == .network)
        #expect(try await server.get(["Accept-Language": "fr"]).source == .network)
        let english = try await server.get(["Accept-Language": "en"])
        #expect(english.source == .cache)
        #expect(english.value[string: "lang"] == "en")
    }

    @Test func lastModifiedRevalidatesWithIfModifiedSince() async throws {
        let server = try Server(headers: { _ in ["Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"] })
        _ = try await server.get()
        _ = try await server.get()
        #expect(server.transport.requests.last?.headers["If-Modified-Since"] == "Mon, 01 Jan 2024 00:00:00 GMT")
    }

    @Test func expiresAndAgeDecideFreshness() async throws {
        // Expires 100 s after the server's Date; the answer arrived already 40 s old.
        let server = try Server(headers: { _ in
            ["Date": "Tue, 14 Nov 2023 22:13:20 GMT", "Expires": "Tue, 14 Nov 2023 22:15:00 GMT", "Age": "40"]
        })
        _ = try await server.get()  // The test clock starts at 1_700_000_000 = Tue, 14 Nov 2023 22:13:20 GMT
        server.clock.advance(by: 59)
        #expect(try await server.get().source == .cache)
        server.clock.advance(by: 2)
        #expect(try await server.get().source == .network)
    }

    @Test func varySplitsEntriesByTheNamedRequestFields() async throws {
        let server = try Server(headers: { _ in ["Cache-Control": "max-age=60", "Vary": "Accept-Language"] })
        let french = try await server.get(["Accept-Language": "fr"])
        let english = try await server.get(["Accept-Language": "en"])
        let frenchAgain = try await server.get(["Accept-Language": "fr"])
        let englishAgain = try await server.get(["Accept-Language": "en"])
        let none = try await server.get()
        #expect(
            [french.source, english.source, frenchAgain.source, englishAgain.source, none.source] == [
                .network, .network, .cache, .cache, .network,
            ])
        #expect(frenchAgain.value[string: "lang"] == "fr")
        #expect(englishAgain.value[string: "lang"] == "en")
    }

    @Test func varyStarIsNeverReused() async throws {
        let server = try Server(headers: { _ in ["Cache-Control": "max-age=60", "Vary": "*"] })
        #expect(try await [server.get(), server.get()].map(\.source) == [.network, .network])
    }

    @Test func answersWithoutAnythingToReuseAreNotStored() async throws {
        let server = try Server(headers: { _ in [:] })
        #expect(try await [server.get(), server.get()].map(\.source) == [.network, .network])
        #expect(server.conditional.current == 0)
    }

    @Test func aCreatedAnswerIsStoredOnlyWithExplicitFreshness() async throws {
        // Given a server answering 201 Created with only an ETag, and stale answers allowed
        let cache = try ResponseCache(configuration: .init(servesStaleOnConnectivityFailure: true))
        let fields = Shared<HTTPHeaders>(["ETag": "\"a\""])
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "created") { request throws(TransportError) in
                var headers = fields.current
                headers["Content-Type"] = "application/json"
                return TransportResponse(statusCode: 201, headers: headers, body: Data("{}".utf8), url: request.url)
            }
        ])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        let created = Endpoint<RepositoryResponse<JSONValue>>.get("created").withoutSession()

        // When it is read twice
        let sources = try await [repository.fetch(created).get(), repository.fetch(created).get()].map(\.source)

        // Then nothing was stored: no revalidation, and a cache-only call misses
        #expect(sources == [.network, .network])
        #expect(transport.requests.map { $0.headers["If-None-Match"] } == [nil, nil])
        #expect(await repository.fetch(created.cacheOnly()).failure?.isCacheMiss == true)

        // When the server gives it a lifetime, it is stored
        fields.set(["Cache-Control": "max-age=60"])
        _ = try await repository.fetch(created).get()
        #expect(try await repository.fetch(created).get().source == .cache)
        #expect(transport.requests.count == 3)
    }

    @Test func callersOwnConditionalsPassThrough() async throws {
        let server = try Server(headers: { ["Cache-Control": "max-age=60", "ETag": "\"v\($0)\""] })
        _ = try await server.get()
        let result = await server.repository.performRawRequest(
            Endpoint.get("resource", headers: ["If-None-Match": "\"v1\""]).withoutSession())
        // The server's 304 reaches the caller (as the error it is for a typed call), not the stored answer.
        #expect(result.failure?.statusCode == 304)
    }

    @Test func a304ForAnotherETagIsNotTrustedTheAnswerIsFetchedWhole() async throws {
        let cache = try ResponseCache()
        let count = Shared(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "resource") { request throws(TransportError) in
                count.update { $0 += 1 }
                if request.headers["If-None-Match"] != nil {
                    return TransportResponse(statusCode: 304, headers: ["ETag": "\"other\""], url: request.url)
                }
                return TransportResponse(
                    statusCode: 200, headers: ["ETag": "\"mine\"", "Content-Type": "application/json"],
                    body: Data(#"{"n": \#(count.current)}"#.utf8), url: request.url)
            }
        ])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        _ = try await repository.fetch(.get("resource")).get()
        let second = try await repository.fetch(.get("resource")).get()
        #expect(second.source == .network)
        #expect(second.n == 3)
        #expect(transport.requests.map { $0.headers["If-None-Match"] } == [nil, "\"mine\"", nil])
    }

    /// A repository over a stub whose `resource` route answers `200` with `fields` and a body
    /// counting the calls, or `304` with `notModified` when the request is conditional.
    static func revalidating(
        _ fields: HTTPHeaders, notModified: HTTPHeaders, clock: TestClock? = nil, url: (@Sendable (URL) -> URL)? = nil
    ) throws -> (CacheRepository, StubTransport) {
        var settings = ResponseCache.Configuration()
        if let clock { settings.clock = clock.networkingClock }
        let cache = try ResponseCache(configuration: settings)
        let count = Shared(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "resource") { request throws(TransportError) in
                count.update { $0 += 1 }
                let answered = url?(request.url) ?? request.url
                if request.headers["If-None-Match"] != nil {
                    return TransportResponse(statusCode: 304, headers: notModified, url: answered)
                }
                var headers = fields
                headers["Content-Type"] = "application/json"
                return TransportResponse(statusCode: 200, headers: headers, body: Data(#"{"n": \#(count.current)}"#.utf8), url: answered)
            }
        ])
        return (CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport), transport)
    }

    static let lastModified = "Mon, 01 Jan 2024 00:00:00 GMT"

    /// A repository over a stub whose `resource` route answers `200` with ``lastModified`` and no
    /// ETag, stale at once, and a body counting the calls, or `304` with `notModified` when asked
    /// with `If-Modified-Since`.
    static func revalidatingByDate(notModified: HTTPHeaders) throws -> (CacheRepository, StubTransport) {
        let count = Shared(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "resource") { request throws(TransportError) in
                count.update { $0 += 1 }
                if request.headers["If-Modified-Since"] != nil {
                    return TransportResponse(statusCode: 304, headers: notModified, url: request.url)
                }
                return TransportResponse(
                    statusCode: 200,
                    headers: ["Cache-Control": "max-age=0", "Last-Modified": lastModified, "Content-Type": "application/json"],
                    body: Data(#"{"n": \#(count.current)}"#.utf8), url: request.url)
            }
        ])
        return (CacheRepository(configuration: try CacheHarness.configuration(cache: try ResponseCache()), transport: transport), transport)
    }

    @Test(
        "A 304 with an ETag the stored answer never had selects it only when weak and beside its Last-Modified; else it is asked again without conditions",
        arguments: [("\"x\"", false), ("\"x\"", true), ("W/\"x\"", false), ("W/\"x\"", true)])
    func a304AddingAnETag(etag: String, sendsLastModified: Bool) async throws {
        let modified = Self.lastModified
        var notModified: HTTPHeaders = ["ETag": etag]
        if sendsLastModified { notModified["Last-Modified"] = modified }
        let (repository, transport) = try Self.revalidatingByDate(notModified: notModified)
        _ = try await repository.fetch(.get("resource")).get()
        let second = try await repository.fetch(.get("resource")).get()
        if etag.hasPrefix("W/") && sendsLastModified {
            #expect(second.source == .revalidated)
            #expect(second.n == 1)
        } else {
            #expect(second.source == .network)
            #expect(second.n == 3)
            #expect(transport.requests.map { $0.headers["If-Modified-Since"] } == [nil, modified, nil])
        }
    }

    @Test(
        "A 304 without an ETag whose Last-Modified is not the stored answer's selects nothing: asked again without conditions (RFC 9111 §4.3.4)",
        arguments: [("Tue, 02 Jan 2024 00:00:00 GMT", false), ("Monday, 01-Jan-24 00:00:00 GMT", true), (nil, true)])
    func a304WithAnotherLastModified(notModified: String?, selects: Bool) async throws {
        let (repository, _) = try Self.revalidatingByDate(notModified: notModified.map { ["Last-Modified": $0] } ?? [:])
        _ = try await repository.fetch(.get("resource")).get()
        let second = try await repository.fetch(.get("resource")).get()
        #expect(second.source == (selects ? .revalidated : .network))
        #expect(second.n == (selects ? 1 : 3))
    }

    @Test("A late 304 does not put back the answer it was sent for over a newer one a reload stored meanwhile")
    func aLate304KeepsTheNewerAnswer() async throws {
        let version = Shared(1)
        let held = Shared(false)
        let released = Shared(false)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "resource") { request throws(TransportError) in
                if let asked = request.headers["If-None-Match"] {
                    held.set(true)
                    for _ in 0..<15_000 where !released.current { try? await Task.sleep(for: .milliseconds(2)) }
                    return TransportResponse(statusCode: 304, headers: ["ETag": asked, "Cache-Control": "max-age=600"], url: request.url)
                }
                let current = version.current
                return TransportResponse(
                    statusCode: 200,
                    headers: ["ETag": "\"v\(current)\"", "Cache-Control": "max-age=0", "Content-Type": "application/json"],
                    body: Data(#"{"n": \#(current)}"#.utf8), url: request.url)
            }
        ])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: try ResponseCache()), transport: transport)
        _ = try await repository.fetch(.get("resource")).get()
        // A call revalidates v1 and waits for its 304; meanwhile a reload stores v2.
        let late = Task { try await repository.fetch(.get("resource")).get() }
        for _ in 0..<15_000 where !held.current { try await Task.sleep(for: .milliseconds(2)) }
        version.set(2)
        let reloaded = try await repository.fetch(Endpoint.get("resource").cachePolicy(CachePolicy(mode: .reload))).get()
        #expect(reloaded.n == 2)
        released.set(true)
        #expect(try await late.value.n == 1)
        // The stored answer is still v2, revalidated with its own tag.
        let next = try await repository.fetch(.get("resource")).get()
        #expect(next.n == 2)
        #expect(transport.requests.last?.headers["If-None-Match"] == "\"v2\"")
    }

    @Test("A 304 that says no-store removes the stored answer: it no longer stands in, even stale")
    func a304SayingNoStoreForgetsTheAnswer() async throws {
        let clock = TestClock()
        let (repository, transport) = try Self.revalidating(
            ["Cache-Control": "max-age=0", "ETag": "\"v1\""], notModified: ["ETag": "\"v1\"", "Cache-Control": "no-store"], clock: clock)
        _ = try await repository.fetch(.get("resource")).get()
        let revalidated = try await repository.fetch(.get("resource")).get()
        #expect(revalidated.source == .revalidated)
        let third = try await repository.fetch(.get("resource")).get()
        #expect(third.source == .network)
        #expect(transport.requests.map { $0.headers["If-None-Match"] } == [nil, "\"v1\"", nil])
    }

    @Test("A 304 from the resource a redirect led to does not refresh the stored answer: it is asked again without conditions")
    func a304AfterARedirectIsNotTheStoredAnswers() async throws {
        let clock = TestClock()
        let redirecting = Shared(false)
        let (repository, transport) = try Self.revalidating(
            ["Cache-Control": "max-age=60", "ETag": "\"v\""], notModified: ["ETag": "\"v\"", "Cache-Control": "max-age=600"], clock: clock,
            url: { url in redirecting.current ? url.deletingLastPathComponent().appendingPathComponent("elsewhere") : url })
        _ = try await repository.fetch(.get("resource")).get()
        clock.advance(by: 120)
        redirecting.update { $0 = true }
        let answer = try await repository.fetch(.get("resource")).get()
        #expect(answer.source == .network)
        #expect(transport.requests.count == 3)
        #expect(transport.requests.last?.headers["If-None-Match"] == nil)
    }

    @Test func a304WithoutADateRestartsTheAnswersAgeInsteadOfKeepingTheFirstOnes() async throws {
        let clock = TestClock()
        // The first answer's Date is the test clock's start; a 304 an hour later carries no Date.
        let (repository, transport) = try Self.revalidating(
            ["Date": "Tue, 14 Nov 2023 22:13:20 GMT", "Cache-Control": "max-age=60", "ETag": "\"v\"", "Age": "5"],
            notModified: ["ETag": "\"v\""], clock: clock)
        _ = try await repository.fetch(.get("resource")).get()
        clock.advance(by: 3_600)
        let revalidated = try await repository.fetch(.get("resource")).get()
        #expect(revalidated.source == .revalidated)
        #expect(revalidated.headers["Age"] == "0")
        #expect(revalidated.headers["Date"] == "Tue, 14 Nov 2023 23:13:20 GMT")
        clock.advance(by: 30)
        #expect(try await repository.fetch(.get("resource")).get().source == .cache, "fresh again for its max-age")
        #expect(transport.requests.count == 2)
    }

    @Test func a304ForAnotherWeakETagIsNotTrustedEither() async throws {
        let (repository, transport) = try Self.revalidating(["ETag": "W/\"a\""], notModified: ["ETag": "W/\"b\""])
        _ = try await repository.fetch(.get("resource")).get()
        let second = try await repository.fetch(.get("resource")).get()
        #expect(second.source == .network && second.n == 3)
        #expect(transport.requests.map { $0.headers["If-None-Match"] } == [nil, "W/\"a\"", nil])
    }

    @Test(
        "A weak ETag in a 304 selects a stored answer of the same opaque tag; a strong one only the same strong one (RFC 9111 §4.3.4)",
        arguments: [
            ("W/\"a\"", "\"a\"", false), ("W/\"a\"", "W/\"a\"", true), ("\"a\"", "\"a\"", true), ("\"a\"", "W/\"a\"", true),
        ])
    func strongAndWeakTagsIn304s(stored: String, notModified: String, selects: Bool) async throws {
        let (repository, transport) = try Self.revalidating(["ETag": stored], notModified: ["ETag": notModified])
        _ = try await repository.fetch(.get("resource")).get()
        let second = try await repository.fetch(.get("resource")).get()
        #expect(second.source == (selects ? .revalidated : .network))
        #expect(transport.requests.map { $0.headers["If-None-Match"] } == (selects ? [nil, stored] : [nil, stored, nil]))
    }

    @Test func anAnswerFromARedirectsTargetIsNotStoredUnderTheURLThatRedirected() async throws {
        let (repository, transport) = try Self.revalidating(
            ["Cache-Control": "max-age=600"], notModified: [:],
            url: { $0.deletingLastPathComponent().appendingPathComponent("releases/42") })
        let first = try await repository.fetch(.get("resource")).get()
        let second = try await repository.fetch(.get("resource")).get()
        #expect([first.source, second.source] == [.network, .network])
        #expect(transport.requests.count == 2)
    }

    @Test("A redirect that changes or drops a query item leads to another resource; a query item added on the way does not")
    func aRedirectWithinTheQuery() async throws {
        // /resource?v=latest → /resource?v=42: not stored under the URL that redirected
        let (moved, movedTransport) = try Self.revalidating(
            ["Cache-Control": "max-age=600"], notModified: [:],
            url: { URL(string: $0.absoluteString.replacingOccurrences(of: "v=latest", with: "v=42")) ?? $0 })
        let latest = Endpoint<RepositoryResponse<JSONValue>>.get("resource", parameters: ["v": "latest"])
        let redirected = try await [moved.fetch(latest).get(), moved.fetch(latest).get()]
        #expect(redirected.map(\.source) == [.network, .network])
        #expect(movedTransport.requests.count == 2)
        // /resource?page=2 answered from /resource?page=2&key=k (an interceptor's item): stored
        let (kept, keptTransport) = try Self.revalidating(
            ["Cache-Control": "max-age=600"], notModified: [:], url: { URL(string: $0.absoluteString + "&key=k") ?? $0 })
        let page = Endpoint<RepositoryResponse<JSONValue>>.get("resource", parameters: ["page": "2"])
        let answers = try await [kept.fetch(page).get(), kept.fetch(page).get()]
        #expect(answers.map(\.source) == [.network, .cache])
        #expect(keptTransport.requests.count == 1)
    }

    @Test("Calls that set their own Cookie never share an entry, even when the answer does not vary on it")
    func ownCookiesSeparateEntries() async throws {
        let (repository, transport) = try Self.revalidating(["Cache-Control": "private, max-age=60"], notModified: [:])
        func fetch(_ cookie: String) async throws -> ResponseSource {
            try await repository.fetch(Endpoint<RepositoryResponse<JSONValue>>.get("resource", headers: ["Cookie": cookie])).get().source
        }
        let sources = try await [fetch("sid=alice"), fetch("sid=bob"), fetch("sid=alice"), fetch("sid=bob")]
        #expect(sources == [.network, .network, .cache, .cache])
        #expect(transport.requests.count == 2)
    }

    @Test func anAnswerVaryingOnCookiesIsStoredOnlyWhenTheCacheSeesTheCookie() async throws {
        let (repository, transport) = try Self.revalidating(["Cache-Control": "private, max-age=60", "Vary": "Cookie"], notModified: [:])
        // Cookies from the cookie storage are added after the cache: it cannot keep users apart.
        let unseen = try await [repository.fetch(.get("resource")).get(), repository.fetch(.get("resource")).get()]
        #expect(unseen.map(\.source) == [.network, .network])
        // A Cookie the call sets itself is seen, and keys the variant.
        let own = Endpoint<RepositoryResponse<JSONValue>>.get("resource", headers: ["Cookie": "session=a"])
        let seen = try await [repository.fetch(own).get(), repository.fetch(own).get()]
        #expect(seen.map(\.source) == [.network, .cache])
        #expect(transport.requests.count == 3)
    }
}

import Foundation
import Networking
import Synchronization
import Testing

@testable import NetworkingCache

/// The cache against the test API's caching fixtures; the server's hit counters prove what
/// reached it. Every test uses keys of its own, so tests may run in parallel.
@Suite(.serialized) struct TestAPICacheIntegrationTests {
    let servers: TestServers
    let cache: ResponseCache
    let api: CacheFixtures.Repository

    init() throws {
        servers = try TestServers.require()
        cache = try ResponseCache()
        api = CacheFixtures.Repository(configuration: try TestServers.configuration(servers.apiURL, interceptors: [cache]))
    }

    @Test func maxAgeAnswersFromTheCacheAndTheServerSeesOneRequest() async throws {
        let key = CacheFixtures.uniqueKey("max-age")
        let first = try await api.resource(key, query: ["max_age": "60"]).get()
        let second = try await api.resource(key, query: ["max_age": "60"]).get()
        #expect(first.source == .network)
        #expect(second.source == .cache)
        #expect(second.value == first.value)
        #expect(try await api.hits(key) == .init(requests: 1, conditional: 0, notModified: 0))
    }

    @Test func anETagIsRevalidatedWithA304UntilTheResourceChanges() async throws {
        let key = CacheFixtures.uniqueKey("etag")
        let first = try await api.resource(key, query: ["etag": "1"]).get()
        let second = try await api.resource(key, query: ["etag": "1"]).get()
        #expect(first.source == .network)
        #expect(second.source == .revalidated)
        #expect(second.statusCode == 200)
        #expect(second.value == first.value)
        #expect(try await api.hits(key) == .init(requests: 2, conditional: 1, notModified: 1))
        try await api.touch(key)
        let third = try await api.resource(key, query: ["etag": "1"]).get()
        #expect(third.source == .network)
        #expect(third.value.version == 2)
        #expect(try await api.hits(key) == .init(requests: 3, conditional: 2, notModified: 1))
        // A weak ETag works alike.
        let weak = CacheFixtures.uniqueKey("weak")
        _ = try await api.resource(weak, query: ["etag": "weak"]).get()
        #expect(try await api.resource(weak, query: ["etag": "weak"]).get().source == .revalidated)
    }

    @Test func lastModifiedIsRevalidatedWithIfModifiedSince() async throws {
        let key = CacheFixtures.uniqueKey("last-modified")
        _ = try await api.resource(key, query: ["last_modified": "1"]).get()
        #expect(try await api.resource(key, query: ["last_modified": "1"]).get().source == .revalidated)
        #expect(try await api.hits(key) == .init(requests: 2, conditional: 1, notModified: 1))
    }

    @Test func noStoreIsNeverStoredNoCacheIsRevalidatedEveryTime() async throws {
        let stored = CacheFixtures.uniqueKey("no-store")
        for _ in 0..<3 { #expect(try await api.resource(stored, query: ["max_age": "600", "no_store": "1"]).get().source == .network) }
        #expect(try await api.hits(stored).requests == 3)

        let revalidated = CacheFixtures.uniqueKey("no-cache")
        var sources: [ResponseSource] = []
        for _ in 0..<3 {
            sources.append(try await api.resource(revalidated, query: ["max_age": "600", "no_cache": "1", "etag": "1"]).get().source)
        }
        #expect(sources == [.network, .revalidated, .revalidated])
        #expect(try await api.hits(revalidated) == .init(requests: 3, conditional: 2, notModified: 2))
    }

    @Test func expiresAndAgeDecideFreshness() async throws {
        let fresh = CacheFixtures.uniqueKey("expires")
        _ = try await api.resource(fresh, query: ["expires": "600"]).get()
        #expect(try await api.resource(fresh, query: ["expires": "600"]).get().source == .cache)
        let expired = CacheFixtures.uniqueKey("expired")
        _ = try await api.resource(expired, query: ["expires": "-10", "etag": "1"]).get()
        #expect(try await api.resource(expired, query: ["expires": "-10", "etag": "1"]).get().source == .revalidated)
        // Already 100 seconds old when it arrived, with a 60-second lifetime: stale at once.
        let old = CacheFixtures.uniqueKey("age")
        _ = try await api.resource(old, query: ["max_age": "60", "age": "100", "etag": "1"]).get()
        #expect(try await api.resource(old, query: ["max_age": "60", "age": "100", "etag": "1"]).get().source == .revalidated)
        #expect(try await api.hits(old).notModified == 1)
        // must-revalidate with a lifetime is fresh while it lasts.
        let strict = CacheFixtures.uniqueKey("must-revalidate")
        _ = try await api.resource(strict, query: ["max_age": "600", "must_revalidate": "1"]).get()
        #expect(try await api.resource(strict, query: ["max_age": "600", "must_revalidate": "1"]).get().source == .cache)
    }

    @Test func varySplitsEntriesByTheNamedRequestHeader() async throws {
        let key = CacheFixtures.uniqueKey("vary")
        let query = ["max_age": "600", "vary": "Accept-Language"]
        var answers: [RepositoryResponse<CacheFixtures.Resource>] = []
        for language in ["fr", "en", "fr", "en"] {
            answers.append(try await api.resource(key, query: query, headers: ["Accept-Language": language]).get())
        }
        #expect(answers.map(\.source) == [.network, .network, .cache, .cache])
        #expect(answers.map(\.value.varied) == ["fr", "en", "fr", "en"])
        #expect(try await api.hits(key).requests == 2)
    }

    /// The tenant of the current task, which ``TenantField`` sends as `X-Tenant`.
    enum Tenant {
        @TaskLocal static var current = "none"
    }

    /// Sets `X-Tenant` after the cache (the default position), as a server app does from a task-local.
    struct TenantField: Interceptor {
        func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
            async throws(RepositoryError) -> TransportResponse
        {
            var request = request
            request.headers["X-Tenant"] = Tenant.current
            return try await next(request)
        }
    }

    @Test func anAnswerVaryingOnAFieldSetAfterTheCacheIsNotStored() async throws {
        // Given an interceptor after the cache that sets X-Tenant, and answers that vary on it
        let key = CacheFixtures.uniqueKey("tenant")
        let query = ["max_age": "600", "vary": "X-Tenant"]
        let api = CacheFixtures.Repository(
            configuration: try TestServers.configuration(servers.apiURL, interceptors: [cache, TenantField()]))
        // When tenant A asks, then B, then A again
        var answers: [RepositoryResponse<CacheFixtures.Resource>] = []
        for tenant in ["A", "B", "A"] {
            answers.append(try await Tenant.$current.withValue(tenant) { try await api.resource(key, query: query).get() })
        }
        // Then each gets its own answer from the server: the cache never saw the field's value
        #expect(answers.map(\.value.varied) == ["A", "B", "A"])
        #expect(answers.map(\.source) == [.network, .network, .network])
        #expect(try await api.hits(key).requests == 3)
    }

    @Test func requestsWithDifferentAPIKeysDoNotShareAnswers() async throws {
        // Given answers any cache may keep, fetched with two API keys (nobody logged in)
        let key = CacheFixtures.uniqueKey("api-key")
        let query = ["max_age": "600"]
        var sources: [ResponseSource] = []
        for apiKey in ["A", "B", "A", "B"] {
            sources.append(try await api.resource(key, query: query, headers: ["X-Api-Key": apiKey]).get().source)
        }
        // Then each key has its own entry, still reused
        #expect(sources == [.network, .network, .cache, .cache])
        #expect(try await api.hits(key).requests == 2)
    }

    @Test(
        "A per-user token in a field of its own (X-Auth-Token, no session) keys its own entries: one user never gets another's private answer"
    )
    func requestsWithDifferentTokenFieldsDoNotShareAnswers() async throws {
        let key = CacheFixtures.uniqueKey("token-field")
        let query = ["max_age": "600", "private": "1"]
        var sources: [ResponseSource] = []
        for token in ["alice", "bob", "alice", "bob"] {
            sources.append(try await api.resource(key, query: query, headers: ["X-Auth-Token": token]).get().source)
        }
        #expect(sources == [.network, .network, .cache, .cache])
        #expect(try await api.hits(key).requests == 2)
        // Without an explicit permission, such an answer is not stored: it is an authorized one.
        let plain = CacheFixtures.uniqueKey("token-field-plain")
        for _ in 0..<2 {
            #expect(try await api.resource(plain, query: ["max_age": "600"], headers: ["X-Auth-Token": "alice"]).get().source == .network)
        }
    }

    @Test("A field the configuration names in secretFields (X-User) keeps users apart like a built-in token field")
    func configuredSecretFieldsKeyTheirOwnEntries() async throws {
        var configuration = try TestServers.configuration(servers.apiURL, interceptors: [cache])
        configuration.secretFields = ["X-User"]
        let api = CacheFixtures.Repository(configuration: configuration)
        let key = CacheFixtures.uniqueKey("secret-field")
        var sources: [ResponseSource] = []
        for user in ["alice", "bob", "alice", "bob"] {
            sources.append(try await api.resource(key, query: ["max_age": "600", "private": "1"], headers: ["X-User": user]).get().source)
        }
        #expect(sources == [.network, .network, .cache, .cache])
        #expect(try await api.hits(key).requests == 2)
        // Without an explicit permission, such an answer is not stored: it is an authorized one.
        let plain = CacheFixtures.uniqueKey("secret-field-plain")
        for _ in 0..<2 {
            #expect(try await api.resource(plain, query: ["max_age": "600"], headers: ["X-User": "alice"]).get().source == .network)
        }
    }

    @Test func keysDoNotCollideOnQueryItems() async throws {
        // WebApiClient keyed {a: "1b=2"} and {a: "1", b: "2"} alike.
        let key = CacheFixtures.uniqueKey("collision")
        let ttl = CachePolicy(timeToLive: 600)
        let single = try await api.resource(key, query: ["a": "1b=2"], policy: ttl).get()
        let pair = try await api.resource(key, query: ["a": "1", "b": "2"], policy: ttl).get()
        #expect(single.source == .network)
        #expect(pair.source == .network)
        #expect(try await api.resource(key, query: ["a": "1b=2"], policy: ttl).get().source == .cache)
        #expect(try await api.resource(key, query: ["a": "1", "b": "2"], policy: ttl).get().source == .cache)
        #expect(try await api.hits(key).requests == 2)
    }

    @Test func signedAnswersAreKeptPerUserAndOnlyWhenAllowed() async throws {
        // Given two users of the test API and one session switching between them
        let session = SessionManager<CacheFixtures.User>()
        let signed = CacheFixtures.Repository(
            configuration: try TestServers.configuration(servers.apiURL, interceptors: [cache]), sessionManager: session)
        let alice = try await api.signUp()
        let bob = try await api.signUp()
        let key = CacheFixtures.uniqueKey("private")
        let query = ["max_age": "600", "private": "1"]

        // When each reads the same private resource, twice
        try session.login(user: alice.user, token: alice.token)
        let aliceFirst = try await signed.resource(key, query: query, session: true).get()
        try session.logout()
        try session.login(user: bob.user, token: bob.token)
        let bobFirst = try await signed.resource(key, query: query, session: true).get()
        let bobSecond = try await signed.resource(key, query: query, session: true).get()
        try session.logout()
        try session.login(user: alice.user, token: alice.token)
        let aliceSecond = try await signed.resource(key, query: query, session: true).get()

        // Then each sees their own answer, from the server once and then from the cache
        #expect(aliceFirst.value.user == alice.user.id)
        #expect(bobFirst.value.user == bob.user.id)
        #expect(bobFirst.source == .network)
        #expect((bobSecond.source, bobSecond.value.user) == (.cache, bob.user.id))
        #expect((aliceSecond.source, aliceSecond.value.user) == (.cache, alice.user.id))
        #expect(try await api.hits(key).requests == 2)

        // A signed answer with only max-age is not stored
        let plain = CacheFixtures.uniqueKey("signed-max-age")
        _ = try await signed.resource(plain, query: ["max_age": "600"], session: true).get()
        #expect(try await signed.resource(plain, query: ["max_age": "600"], session: true).get().source == .network)
        #expect(try await api.hits(plain).requests == 2)
        // …unless the call has a time to live.
        let ttl = CacheFixtures.uniqueKey("signed-ttl")
        _ = try await signed.resource(ttl, policy: CachePolicy(timeToLive: 600), session: true).get()
        #expect(try await signed.resource(ttl, policy: CachePolicy(timeToLive: 600), session: true).get().source == .cache)
        #expect(try await api.hits(ttl).requests == 1)
    }

    @Test func cacheOnlyCallsNeverReachTheServer() async throws {
        let key = CacheFixtures.uniqueKey("cache-only")
        let query = ["max_age": "600"]
        let miss = await api.resource(key, query: query, policy: CachePolicy(mode: .cacheOnly))
        #expect(miss.failure?.isCacheMiss == true)
        _ = try await api.resource(key, query: query).get()
        #expect(try await api.resource(key, query: query, policy: CachePolicy(mode: .cacheOnly)).get().source == .cache)
        #expect(try await api.hits(key).requests == 1)
        // A time to live of 0 turns caching off: a cache-only call then finds nothing, stored answer or not.
        let off = await api.resource(key, query: query, policy: CachePolicy(mode: .cacheOnly, timeToLive: 0))
        #expect(off.failure?.isCacheMiss == true)
        #expect(off.failure.map { "\($0)" }?.contains("time to live of 0") == true)
        #expect(try await api.hits(key).requests == 1)
    }

    @Test func routesInvalidateEachOtherAfterASuccessfulWrite() async throws {
        var configuration = try TestServers.configuration(servers.apiURL, interceptors: [cache])
        configuration.routes = try RouteTable([
            Route(name: "resource", path: "cache/resource/{key}", requiresSession: false, cacheTTL: 600),
            Route(
                name: "touch", method: .post, path: "cache/resource/{key}/touch", requiresSession: false,
                invalidatesCachedRouteNames: ["resource"]),
        ])
        let routed = CacheFixtures.Repository(configuration: configuration)
        let key = CacheFixtures.uniqueKey("routes")
        let read = Endpoint<RepositoryResponse<CacheFixtures.Resource>>.route("resource", pathVariables: ["key": key])
        #expect(try await routed.performRequest(read).get().value.version == 1)
        #expect(try await routed.performRequest(read).get().source == .cache)
        try await routed.performRequest(Endpoint<Void>.route("touch", pathVariables: ["key": key])).get()
        let after = try await routed.performRequest(read).get()
        #expect((after.source, after.value.version) == (.network, 2))
        #expect(try await api.hits(key).requests == 2)
    }

    @Test func onDiskInvalidationLeavesNoFileAndADamagedEntryIsFetchedAgain() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        func diskRepository() throws -> CacheFixtures.Repository {
            let cache = try ResponseCache(configuration: .init(memoryEntryLimit: 0, diskFolder: folder.url))
            var configuration = try TestServers.configuration(servers.apiURL, interceptors: [cache])
            configuration.routes = try RouteTable([
                Route(name: "resource", path: "cache/resource/{key}", requiresSession: false, cacheTTL: 600),
                Route(
                    name: "page", path: "cache/resource/{key}", requiresSession: false, cacheTTL: 600,
                    cacheIgnoreQueryParameters: true),
                Route(
                    name: "touch", method: .post, path: "cache/resource/{key}/touch", requiresSession: false,
                    invalidatesCachedRouteNames: ["resource", "page"]),
            ])
            return CacheFixtures.Repository(configuration: configuration)
        }
        let routed = try diskRepository()
        let key = CacheFixtures.uniqueKey("disk")
        let read = Endpoint<RepositoryResponse<CacheFixtures.Resource>>.route("resource", pathVariables: ["key": key])
        func page(_ number: Int) -> Endpoint<RepositoryResponse<CacheFixtures.Resource>> {
            .route("page", pathVariables: ["key": key], parameters: ["page": number])
        }
        #expect(try await routed.performRequest(read).get().source == .network)
        // Query parameters ignored: page 2 is page 1's entry.
        #expect(try await routed.performRequest(page(1)).get().source == .network)
        #expect(try await routed.performRequest(page(2)).get().source == .cache)
        #expect(folder.files().count == 2)

        // A damaged file is dropped and fetched again by a new cache over the folder, never a crash.
        for name in folder.files() {
            let file = folder.url.appendingPathComponent(name)
            let bytes = try Data(contentsOf: file)
            try bytes.prefix(bytes.count / 2).write(to: file)
        }
        let reopened = try diskRepository()
        #expect(try await reopened.performRequest(read).get().source == .network)
        #expect(try await reopened.performRequest(read).get().source == .cache)
        #expect(try await api.hits(key).requests == 3)

        // A successful write removes both routes' entries: no file is left behind.
        try await reopened.performRequest(Endpoint<Void>.route("touch", pathVariables: ["key": key])).get()
        #expect(folder.files().isEmpty)
        let after = try await reopened.performRequest(read).get()
        #expect((after.source, after.value.version) == (.network, 2))
    }

    @Test func anAnswerSignedByAnInterceptorAfterTheCacheIsKeptOnlyWithADiscriminator() async throws {
        // Given: no session; an app's interceptor (after the cache) signs as whoever is current
        let alice = try await api.signUp()
        let bob = try await api.signUp()
        let signer = BearerSigner()
        let unowned = CacheFixtures.Repository(configuration: try TestServers.configuration(servers.apiURL, interceptors: [cache, signer]))
        for vary in [true, false] {
            let key = CacheFixtures.uniqueKey("self-signed")
            var query = ["max_age": "600", "private": "1"]
            if vary { query["vary"] = "Authorization" }
            // When alice, then bob, read the same private resource
            signer.signAs(alice.token)
            let first = try await unowned.resource(key, query: query).get()
            signer.signAs(bob.token)
            let second = try await unowned.resource(key, query: query).get()
            // Then bob gets his own answer: nothing said whose alice's was, so it was not kept
            #expect(first.value.user == alice.user.id)
            #expect((second.source, second.value.user) == (.network, bob.user.id), "vary: \(vary)")
            #expect(try await api.hits(key).requests == 2)
        }
        // With a discriminator naming the signer's user, each user's answer is kept apart.
        let ownedCache = try ResponseCache(configuration: ResponseCache.Configuration(discriminator: { _ in signer.token }))
        let owned = CacheFixtures.Repository(
            configuration: try TestServers.configuration(servers.apiURL, interceptors: [ownedCache, signer]))
        let key = CacheFixtures.uniqueKey("self-signed-owned")
        let query = ["max_age": "600", "private": "1", "vary": "Authorization"]
        signer.signAs(alice.token)
        _ = try await owned.resource(key, query: query).get()
        signer.signAs(bob.token)
        let bobFirst = try await owned.resource(key, query: query).get()
        signer.signAs(alice.token)
        let aliceAgain = try await owned.resource(key, query: query).get()
        #expect((bobFirst.source, bobFirst.value.user) == (.network, bob.user.id))
        #expect((aliceAgain.source, aliceAgain.value.user) == (.cache, alice.user.id))
    }

    @Test func concurrentCallsSignedByAnInterceptorAfterTheCacheDoNotShareAnAnswer() async throws {
        // Given: one cache, two repositories whose own interceptors sign as two users, no discriminator
        let alice = try await api.signUp()
        let bob = try await api.signUp()
        let cache = self.cache
        let bothWaited = Flag()
        let holdBack = HoldBack {
            if cache.coalescer.inFlight.callers >= 2 { bothWaited.set() }
            return bothWaited.isSet
        }
        let (aliceSigner, bobSigner) = (BearerSigner(), BearerSigner())
        aliceSigner.signAs(alice.token)
        bobSigner.signAs(bob.token)
        let asAlice = CacheFixtures.Repository(
            configuration: try TestServers.configuration(servers.apiURL, interceptors: [cache, aliceSigner, holdBack]))
        let asBob = CacheFixtures.Repository(
            configuration: try TestServers.configuration(servers.apiURL, interceptors: [cache, bobSigner, holdBack]))
        let key = CacheFixtures.uniqueKey("coalesced-self-signed")
        // When both read the same resource at once
        let aliceCall = Task { await asAlice.resource(key) }
        let bobCall = Task { await asBob.resource(key) }
        let (aliceAnswer, bobAnswer) = (try await aliceCall.value.get(), try await bobCall.value.get())
        // Then each gets their own: the one who joined the other's exchange sends its own
        #expect(aliceAnswer.value.user == alice.user.id)
        #expect(bobAnswer.value.user == bob.user.id)
        #expect(try await api.hits(key).requests == 2)
    }

    @Test func anAnswerThatArrivesAfterItsUserLoggedOutIsNotStored() async throws {
        // Given: alice's call held after the cache, before the session signs
        let session = SessionManager<CacheFixtures.User>()
        let held = Flag()
        let released = Flag()
        let signed = CacheFixtures.Repository(
            configuration: try TestServers.configuration(
                servers.apiURL, interceptors: [cache, HoldBack(position: .beforeSigning, reached: held) { released.isSet }]),
            sessionManager: session)
        let alice = try await api.signUp()
        let bob = try await api.signUp()
        let key = CacheFixtures.uniqueKey("switched")
        let query = ["max_age": "600", "private": "1"]
        try session.login(user: alice.user, token: alice.token)
        let call = Task { await signed.resource(key, query: query, session: true) }
        for _ in 0..<15_000 where !held.isSet { try await Task.sleep(for: .milliseconds(2)) }
        // When alice logs out and bob logs in before it is signed
        try session.logout()
        try session.login(user: bob.user, token: bob.token)
        released.set()
        let switched = try await call.value.get()
        // Then the answer (bob's) is not kept under alice: she gets her own when she is back
        #expect(switched.value.user == bob.user.id)
        try session.logout()
        try session.login(user: alice.user, token: alice.token)
        let aliceAgain = try await signed.resource(key, query: query, session: true).get()
        #expect((aliceAgain.source, aliceAgain.value.user) == (.network, alice.user.id))
    }

    @Test func concurrentIdenticalGetsReachTheServerOnce() async throws {
        // A step after the cache holds the request back until all eight callers wait for it; the
        // answer is never stored, so only coalescing can keep the others from the server.
        let key = CacheFixtures.uniqueKey("coalesced")
        let cache = self.cache
        let slowed = CacheFixtures.Repository(
            configuration: try TestServers.configuration(
                servers.apiURL, interceptors: [cache, HoldBack { cache.coalescer.inFlight.callers >= 8 }]))
        let tasks = (0..<8).map { _ in Task { await slowed.resource(key, query: ["no_store": "1"]) } }
        var versions: [Int] = []
        for task in tasks { versions.append(try await task.value.get().value.version) }
        #expect(versions == Array(repeating: 1, count: 8))
        #expect(try await api.hits(key).requests == 1)
    }

    @Test func concurrentGetsWithDifferentPoliciesDoNotShareAnAnswer() async throws {
        // The same request, once under the response's headers (it has none: nothing is kept) and
        // once with a time to live: each is sent and handled under its own policy, so the second
        // is stored.
        let key = CacheFixtures.uniqueKey("coalesced-policies")
        let cache = self.cache
        let slowed = CacheFixtures.Repository(
            configuration: try TestServers.configuration(
                servers.apiURL, interceptors: [cache, HoldBack { cache.coalescer.inFlight.exchanges >= 2 }]))
        let plain = Task { await slowed.resource(key) }
        let kept = Task { await slowed.resource(key, policy: CachePolicy(timeToLive: 60)) }
        _ = try await (plain.value.get(), kept.value.get())
        #expect(try await api.hits(key).requests == 2)
        let again = try await slowed.resource(key, policy: CachePolicy(timeToLive: 60)).get()
        #expect(again.source == .cache)
        #expect(try await api.hits(key).requests == 2)
    }

    @Test("A polled call with a time to live: the 202s are never stored (each poll reaches the server), the final answer is")
    func pollingThroughTheCacheStoresOnlyTheFinalAnswer() async throws {
        struct Job: Decodable, Sendable, Equatable {
            let status: String
            let attempts: Int
        }
        var configuration = try TestServers.configuration(servers.apiURL, interceptors: [cache])
        configuration.secondsBetweenPolls = 0.01
        let polling = CacheFixtures.Repository(configuration: configuration)
        let endpoint = Endpoint<RepositoryResponse<Job>>.get(
            "poll/\(CacheFixtures.uniqueKey("poll"))", parameters: ["ready_after": 2]
        ).withoutSession().cached(for: 60)
        let done = try await polling.performPollingRequest(endpoint).get()
        #expect(done.value == Job(status: "done", attempts: 3))
        #expect(done.source == .network)
        let again = try await polling.performPollingRequest(endpoint).get()
        #expect(again.value == done.value)
        #expect(again.source == .cache)
    }
}

/// Holds every request back (for at most 30 seconds) until `released` says so, setting
/// `reached` when one arrives.
struct HoldBack: Interceptor {
    var position: InterceptorPosition = .afterSigning
    var reached: Flag?
    let released: @Sendable () -> Bool

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        reached?.set()
        for _ in 0..<15_000 where !released() { try? await Task.sleep(for: .milliseconds(2)) }
        return try await next(request)
    }
}

/// A flag set once, read from any task.
final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// An app's own signing step after the cache: `Authorization: Bearer` with the current token.
final class BearerSigner: Interceptor {
    private let current = Mutex<String?>(nil)
    var token: String? { current.withLock { $0 } }
    func signAs(_ token: String) { current.withLock { $0 = token } }

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        var request = request
        if let token { request.headers["Authorization"] = "Bearer \(token)" }
        return try await next(request)
    }
}

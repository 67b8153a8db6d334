import Foundation
import Networking
import NetworkingCache
import NetworkingOffline
import NetworkingTestSupport
import Testing

/// Whose answers a call sees (WebApiClient issue #2), and which signed answers are stored.
@Suite struct ResponseCacheDiscriminatorTests {
    /// A stub that answers `me` with the bearer's name, `headers` added.
    static func transport(count: Shared<Int>, headers: HTTPHeaders = [:]) -> StubTransport {
        StubTransport(routes: [
            StubTransport.Route(.get, "me") { request throws(TransportError) in
                count.update { $0 += 1 }
                let user = (request.headers["Authorization"] ?? "nobody").replacingOccurrences(of: "Bearer ", with: "")
                var fields = headers
                fields["Content-Type"] = "application/json"
                return TransportResponse(statusCode: 200, headers: fields, body: Data(#"{"user":"\#(user)"}"#.utf8), url: request.url)
            }
        ])
    }

    @Test func switchingUsersNeverShowsAnotherUsersAnswer() async throws {
        // Given alice logged in, and an answer cached for 10 minutes
        let session = StubSession(user: "alice")
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cache = try ResponseCache(configuration: .init(diskFolder: folder.url))
        let count = Shared(0)
        let repository = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cache), sessionManager: session, transport: Self.transport(count: count))
        let me = Endpoint<RepositoryResponse<JSONValue>>.get("me").cached(for: 600)
        let alice = try await repository.fetch(me).get()

        // When bob logs in on the same device
        session.logIn("bob")
        let bob = try await repository.fetch(me).get()
        let bobAgain = try await repository.fetch(me).get()
        session.logIn("alice")
        let aliceAgain = try await repository.fetch(me).get()

        // Then each sees only their own answer, each cached separately
        #expect(alice.value[string: "user"] == "alice")
        #expect(bob.value[string: "user"] == "bob")
        #expect(bob.source == .network)
        #expect(bobAgain.value[string: "user"] == "bob")
        #expect(bobAgain.source == .cache)
        #expect(aliceAgain.value[string: "user"] == "alice")
        #expect(aliceAgain.source == .cache)
        #expect(count.current == 2)
        // Nothing stored holds a token: the cache sits before signing.
        #expect(folder.files().count == 2)
        for file in folder.files() {
            let bytes = try Data(contentsOf: folder.url.appendingPathComponent(file))
            #expect(bytes.range(of: Data("Bearer".utf8)) == nil)
        }
    }

    /// Logs `user` in before the rest of the chain runs: a switch of users between the cache
    /// (which keys the call) and the session (which signs it).
    struct SwitchBeforeSigning: Interceptor {
        let session: StubSession
        let user: String
        var position: InterceptorPosition { .beforeSigning }

        func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
            async throws(RepositoryError) -> TransportResponse
        {
            session.logIn(user)
            return try await next(request)
        }
    }

    @Test(
        "Users switched and switched back while a call was under way: the other user's answer is not stored as the first one's",
        arguments: [false, true])
    func aSwitchAndBackWhileUnderWay(ownDiscriminator: Bool) async throws {
        let session = StubSession(user: "alice")
        let own: @Sendable (RequestContext) -> String? = { context in context.session?.sessionIdentity.map { "own-" + $0 } }
        let cache = try ResponseCache(configuration: .init(discriminator: ownDiscriminator ? own : nil))
        let count = Shared(0)
        var configuration = try CacheHarness.configuration(cache: cache)
        configuration.interceptors.append(SwitchBeforeSigning(session: session, user: "bob"))
        // Bob's request is signed; alice is back before the answer arrives.
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "me") { request throws(TransportError) in
                count.update { $0 += 1 }
                session.logIn("alice")
                let user = (request.headers["Authorization"] ?? "nobody").replacingOccurrences(of: "Bearer ", with: "")
                return TransportResponse(
                    statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"user":"\#(user)"}"#.utf8),
                    url: request.url)
            }
        ])
        let repository = CacheRepository(configuration: configuration, sessionManager: session, transport: transport)
        let me = Endpoint<RepositoryResponse<JSONValue>>.get("me").cached(for: 600)
        let switched = try await repository.fetch(me).get()
        #expect(switched.value[string: "user"] == "bob")
        #expect(await repository.fetch(me.cacheOnly()).failure?.isCacheMiss == true, "bob's answer was kept as alice's")
        #expect(count.current == 1)
    }

    @Test(
        "A call pinned to a user who logged out (an offline queue's, a batch's) never reads the next user's answers, nor its own",
        arguments: [false, true])
    func aCallPinnedToAnotherUserSkipsTheCache(ownDiscriminator: Bool) async throws {
        let session = StubSession(user: "alice")
        let own: @Sendable (RequestContext) -> String? = { context in context.session?.sessionIdentity.map { "own-" + $0 } }
        let cache = try ResponseCache(configuration: .init(discriminator: ownDiscriminator ? own : nil))
        let count = Shared(0)
        let repository = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cache), sessionManager: session, transport: Self.transport(count: count))
        let me = Endpoint<RepositoryResponse<JSONValue>>.get("me").cached(for: 600)
        _ = try await repository.fetch(me).get()
        session.logIn("bob")
        _ = try await repository.fetch(me).get()

        let alices = await repository.fetch(me.with(SessionIdentityKey.self, "user:alice"))
        #expect(alices.failure.map { if case .unauthenticatedSession = $0 { true } else { false } } == true, "got \(alices)")
        #expect(await repository.fetch(me.cacheOnly().with(SessionIdentityKey.self, "user:alice")).failure?.isCacheMiss == true)
        #expect(try await repository.fetch(me.with(SessionIdentityKey.self, "user:bob")).get().source == .cache, "bob's own call")
        #expect(count.current == 2)
    }

    @Test("A session that names its user only as it signs: an app's discriminator keys its answers, which are stored")
    func aSignerNamedOnlyInTheAuthorization() async throws {
        let session = StubSession(user: "alice", identifies: false, namesSigner: true)
        let cache = try ResponseCache(configuration: .init(discriminator: { _ in "tenant" }))
        let count = Shared(0)
        let repository = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cache), sessionManager: session, transport: Self.transport(count: count))
        let me = Endpoint<RepositoryResponse<JSONValue>>.get("me").cached(for: 600)
        #expect(try await [repository.fetch(me).get(), repository.fetch(me).get()].map(\.source) == [.network, .cache])
    }

    @Test func nobodyLoggedInOrAnAnonymousSessionIsNeverCached() async throws {
        let cache = try ResponseCache()
        let count = Shared(0)
        let transport = Self.transport(count: count)
        let anonymous = StubSession(user: "carol", identifies: false)
        let repository = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cache), sessionManager: anonymous, transport: transport)
        let me = Endpoint<RepositoryResponse<JSONValue>>.get("me").cached(for: 600)
        #expect(try await [repository.fetch(me).get(), repository.fetch(me).get()].map(\.source) == [.network, .network])
        #expect(await repository.fetch(me.cacheOnly()).failure?.isCacheMiss == true)

        let loggedOut = StubSession(user: nil)
        let other = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cache), sessionManager: loggedOut, transport: transport)
        guard case .unauthenticatedSession? = await other.fetch(me).failure else {
            Issue.record("a logged-out call must fail as before, not be answered from the cache")
            return
        }
    }

    @Test func signedAnswersNeedExplicitPermissionWithoutATimeToLive() async throws {
        let session = StubSession(user: "alice")
        for (headers, stored) in [
            (["Cache-Control": "max-age=60"], false), (["Cache-Control": "max-age=60, private"], true),
            (["Cache-Control": "max-age=60, public"], true), (["Cache-Control": "s-maxage=60, max-age=60"], true),
            (["Cache-Control": "max-age=60, must-revalidate"], true),
        ] as [(HTTPHeaders, Bool)] {
            let cache = try ResponseCache()
            let count = Shared(0)
            let repository = CacheRepository(
                configuration: try CacheHarness.configuration(cache: cache), sessionManager: session,
                transport: Self.transport(count: count, headers: headers))
            _ = try await repository.fetch(.get("me")).get()
            let second = try await repository.fetch(.get("me")).get()
            #expect(second.source == (stored ? .cache : .network), "\(headers)")
        }
    }

    @Test func ownAuthorizationHeadersKeepCredentialsApart() async throws {
        let cache = try ResponseCache()
        let count = Shared(0)
        let repository = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cache), transport: Self.transport(count: count))
        let one = Endpoint<RepositoryResponse<JSONValue>>.get("me", headers: ["Authorization": "Bearer one"]).withoutSession().cached(
            for: 60)
        let two = Endpoint<RepositoryResponse<JSONValue>>.get("me", headers: ["Authorization": "Bearer two"]).withoutSession().cached(
            for: 60)
        #expect(try await repository.fetch(one).get().value[string: "user"] == "one")
        #expect(try await repository.fetch(two).get().value[string: "user"] == "two")
        #expect(try await repository.fetch(one).get().source == .cache)
        // Without a time to live or permission, an authorized answer is not stored.
        let plain = Endpoint<RepositoryResponse<JSONValue>>.get("me", headers: ["Authorization": "Bearer one"]).withoutSession()
        let cacheable = try ResponseCache()
        let other = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cacheable),
            transport: Self.transport(count: count, headers: ["Cache-Control": "max-age=60"]))
        #expect(try await [other.fetch(plain).get(), other.fetch(plain).get()].map(\.source) == [.network, .network])
    }

    @Test func aDiscriminatorOfYourOwnAndRemovingOneUsersEntries() async throws {
        let tenant = Shared("acme")
        let cache = try ResponseCache(configuration: .init(discriminator: { _ in tenant.current }))
        let count = Shared(0)
        let repository = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cache), transport: Self.transport(count: count))
        let me = Endpoint<RepositoryResponse<JSONValue>>.get("me").withoutSession().cached(for: 60)
        _ = try await repository.fetch(me).get()
        tenant.set("globex")
        #expect(try await repository.fetch(me).get().source == .network)
        cache.removeEntries(for: "acme")
        tenant.set("acme")
        #expect(try await repository.fetch(me).get().source == .network)
        tenant.set("globex")
        #expect(try await repository.fetch(me).get().source == .cache)
        cache.removeAll()
        #expect(try await repository.fetch(me).get().source == .network)
    }

    @Test func aWriteToAURLInvalidatesItsReadsForEveryUser() async throws {
        // Given an answer stored while nobody is logged in (the discriminator says nil: shared)
        let user = Shared<String?>(nil)
        let cache = try ResponseCache(configuration: .init(discriminator: { _ in user.current }))
        let count = Shared(0)
        let transport = StubTransport(routes: [
            CacheHarness.counting("documents", count: count) { _ in ["Cache-Control": "max-age=600"] },
            .status(.post, "documents", 201, json: "{}"),
            .status(.put, "documents", 303, headers: ["Location": "/documents"]),
            .status(.delete, "documents", 404, json: "{}"),
        ])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        let list = Endpoint<RepositoryResponse<JSONValue>>.get("documents", parameters: ["page": 1]).withoutSession()
        _ = try await repository.fetch(list).get()
        #expect(try await repository.fetch(list).get().source == .cache)

        // When alice posts to the same URL
        user.set("alice")
        _ = try await repository.send(Endpoint<Void>.post("documents").withoutSession()).get()

        // Then the shared answer is fetched again
        user.set(nil)
        #expect(try await repository.fetch(list).get().source == .network)

        // A write answered with a redirect (3xx: not an error) invalidates too; one answered with an error does not
        user.set("alice")
        _ = await repository.send(Endpoint<Void>.put("documents").withoutSession())
        user.set(nil)
        #expect(try await repository.fetch(list).get().source == .network)
        user.set("alice")
        _ = await repository.send(Endpoint<Void>.delete("documents").withoutSession())
        user.set(nil)
        #expect(try await repository.fetch(list).get().source == .cache)
        #expect(count.current == 3)
    }

    @Test(
        "A write's Location and Content-Location on the same origin make their stored reads obsolete; another origin's, or an error's, do not"
    )
    func aWriteInvalidatesTheURLsItsAnswerNames() async throws {
        let cache = try ResponseCache()
        let count = Shared(0)
        let fresh: @Sendable (TransportRequest) -> HTTPHeaders = { _ in ["Cache-Control": "max-age=600"] }
        let transport = StubTransport(routes: [
            CacheHarness.counting("documents/7", count: count, headers: fresh),
            CacheHarness.counting("documents/8", count: count, headers: fresh),
            CacheHarness.counting("documents/9", count: count, headers: fresh),
            // A relative Location (resolved against the write's URL) and an absolute Content-Location.
            .status(
                .post, "documents", 201, json: "{}",
                headers: ["Location": "documents/7", "Content-Location": "https://api.example.com/documents/8"]),
            .status(.put, "documents", 201, json: "{}", headers: ["Location": "https://other.example.com/documents/9"]),
            .status(.patch, "documents", 409, json: "{}", headers: ["Location": "documents/9"]),
        ])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        func source(_ path: String) async throws -> ResponseSource {
            try await repository.fetch(Endpoint<RepositoryResponse<JSONValue>>.get(path).withoutSession()).get().source
        }
        for path in ["documents/7", "documents/8", "documents/9"] { _ = try await source(path) }

        _ = try await repository.send(Endpoint<Void>.post("documents").withoutSession()).get()
        _ = try await repository.send(Endpoint<Void>.put("documents").withoutSession()).get()
        _ = await repository.send(Endpoint<Void>.patch("documents").withoutSession())

        #expect(try await source("documents/7") == .network)
        #expect(try await source("documents/8") == .network)
        #expect(try await source("documents/9") == .cache)
    }

    @Test func invalidationOnlyTouchesTheCurrentUsersEntries() async throws {
        let session = StubSession(user: "alice")
        let cache = try ResponseCache()
        let count = Shared(0)
        // The write goes to another URL than the list: a write to the list's own URL would remove
        // its reads for every user (RFC 9111 §4.4), which is not what this test is about.
        let transport = StubTransport(routes: [
            CacheHarness.counting("documents", count: count), .status(.post, "documents/drafts", 201, json: "{}"),
        ])
        let routes = try RouteTable([
            Route(name: "documentList", path: "documents", cacheTTL: 600),
            Route(name: "createDocument", method: .post, path: "documents/drafts", invalidatesCachedRouteNames: ["documentList"]),
        ])
        let repository = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cache, routes: routes), sessionManager: session, transport: transport)
        _ = try await repository.fetch(.route("documentList")).get()
        session.logIn("bob")
        _ = try await repository.fetch(.route("documentList")).get()
        _ = try await repository.send(.route("createDocument")).get()
        #expect(try await repository.fetch(.route("documentList")).get().source == .network)
        session.logIn("alice")
        #expect(try await repository.fetch(.route("documentList")).get().source == .cache)
        // Removing a route for everybody reaches alice too.
        cache.removeEntries(ofRoutes: ["documentList"])
        #expect(try await repository.fetch(.route("documentList")).get().source == .network)
    }

    @Test(
        "A batch item's write invalidates the routes of the user who signed the batch, not of one who logged in meanwhile",
        arguments: [false, true])
    func batchReportsForItsSigner(ownDiscriminator: Bool) async throws {
        let session = StubSession(user: "alice")
        let own: @Sendable (RequestContext) -> String? = { context in context.session?.sessionIdentity.map { "own-" + $0 } }
        let cache = try ResponseCache(configuration: .init(discriminator: ownDiscriminator ? own : nil))
        let count = Shared(0)
        let transport = StubTransport(routes: [
            CacheHarness.counting("documents", count: count),
            StubTransport.Route(.post, "batch") { _ throws(TransportError) in
                // Alice's batch is answered after bob logged in.
                session.logIn("bob")
                return TransportResponse(
                    statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(#"[{"code": 201, "body": "{}"}]"#.utf8))
            },
        ])
        let routes = try RouteTable([
            Route(name: "documentList", path: "documents", cacheTTL: 600),
            Route(name: "createDocument", method: .post, path: "documents/drafts", invalidatesCachedRouteNames: ["documentList"]),
        ])
        let repository = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cache, routes: routes), sessionManager: session, transport: transport)
        session.logIn("bob")
        _ = try await repository.fetch(.route("documentList")).get()
        session.logIn("alice")
        _ = try await repository.fetch(.route("documentList")).get()
        var batch = Batch()
        let create = batch.add(Endpoint<Void>.route("createDocument"))
        try await BatchClient(repository: repository).send(batch).get()[create].get()
        // An app's discriminator cannot be asked about alice once bob is in: the list goes for everybody.
        #expect(
            try await repository.fetch(.route("documentList")).get().source == (ownDiscriminator ? .network : .cache),
            "bob's list was dropped for alice's write")
        session.logIn("alice")
        #expect(try await repository.fetch(.route("documentList")).get().source == .network, "alice's list outlived her write")
    }
}

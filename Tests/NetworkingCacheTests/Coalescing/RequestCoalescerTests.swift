import Foundation
import Networking
import NetworkingTestSupport
import Testing

@testable import NetworkingCache

/// Concurrent identical GETs share one exchange, through the real pipeline.
@Suite struct RequestCoalescerTests {
    /// A stub whose `slow` route waits until `open` is set, noting whether its task was cancelled.
    struct SlowServer {
        let open = Shared(false)
        let started = Shared(0)
        let cancelled = Shared(0)
        let transport: StubTransport

        init() {
            let (open, started, cancelled) = (open, started, cancelled)
            transport = StubTransport(routes: [
                StubTransport.Route(.get, "slow") { request throws(TransportError) in
                    started.update { $0 += 1 }
                    while !open.current {
                        if Task.isCancelled {
                            cancelled.update { $0 += 1 }
                            throw .cancelled
                        }
                        try? await Task.sleep(for: .milliseconds(2))
                    }
                    let user = request.headers["Authorization"] ?? "nobody"
                    return TransportResponse(
                        statusCode: 200, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"],
                        body: Data(#"{"user":"\#(user)","n":\#(started.current)}"#.utf8), url: request.url)
                }
            ])
        }
    }

    /// Waits (without blocking a thread) until `condition` holds, for at most 30 seconds.
    private func eventually(_ condition: () -> Bool) async {
        for _ in 0..<15_000 where !condition() { try? await Task.sleep(for: .milliseconds(2)) }
    }

    @Test func concurrentIdenticalGetsShareOneExchange() async throws {
        let server = SlowServer()
        let cache = try ResponseCache()
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: server.transport)
        let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("slow").withoutSession()
        let tasks = (0..<6).map { _ in Task { await repository.fetch(endpoint) } }
        await eventually { cache.coalescer.inFlight.callers == 6 }
        server.open.set(true)
        var results: [RepositoryResponse<JSONValue>] = []
        for task in tasks { results.append(try await task.value.get()) }
        #expect(server.transport.requests.count == 1)
        #expect(Set(results.map(\.n)) == [1])
        #expect(cache.coalescer.inFlight.exchanges == 0)
    }

    @Test func differentUsersDoNotShare() async throws {
        let server = SlowServer()
        let cache = try ResponseCache()
        let alice = StubSession(user: "alice")
        let bob = StubSession(user: "bob")
        let configuration = try CacheHarness.configuration(cache: cache)
        let asAlice = CacheRepository(configuration: configuration, sessionManager: alice, transport: server.transport)
        let asBob = CacheRepository(configuration: configuration, sessionManager: bob, transport: server.transport)
        let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("slow")
        let first = Task { await asAlice.fetch(endpoint) }
        let second = Task { await asBob.fetch(endpoint) }
        let third = Task { await asAlice.fetch(endpoint) }
        await eventually { cache.coalescer.inFlight.callers == 3 }
        #expect(cache.coalescer.inFlight.exchanges == 2)
        server.open.set(true)
        #expect(try await first.value.get().value[string: "user"] == "Bearer alice")
        #expect(try await second.value.get().value[string: "user"] == "Bearer bob")
        #expect(try await third.value.get().value[string: "user"] == "Bearer alice")
        #expect(server.transport.requests.count == 2)
    }

    @Test func anAnswerVaryingOnAFieldSetAfterTheCacheIsNotShared() async throws {
        // Given a slow answer that varies on X-Tenant, which an interceptor after the cache sets
        // from each task's tenant
        let open = Shared(false)
        let started = Shared(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "tenant") { request throws(TransportError) in
                started.update { $0 += 1 }
                while !open.current { try? await Task.sleep(for: .milliseconds(2)) }
                return TransportResponse(
                    statusCode: 200, headers: ["Content-Type": "application/json", "Vary": "X-Tenant"],
                    body: Data(#"{"tenant":"\#(request.headers["X-Tenant"] ?? "")"}"#.utf8), url: request.url)
            }
        ])
        let cache = try ResponseCache()
        var configuration = try CacheHarness.configuration(cache: cache)
        configuration.interceptors.append(TestAPICacheIntegrationTests.TenantField())
        let repository = CacheRepository(configuration: configuration, transport: transport)
        let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("tenant").withoutSession()
        // When tenants A and B ask at once (one exchange for the cache, which sees the same request)
        let a = Task { await TestAPICacheIntegrationTests.Tenant.$current.withValue("A") { await repository.fetch(endpoint) } }
        let b = Task { await TestAPICacheIntegrationTests.Tenant.$current.withValue("B") { await repository.fetch(endpoint) } }
        await eventually { cache.coalescer.inFlight.callers == 2 }
        open.set(true)
        // Then the one who joined sends its own request rather than take the other tenant's answer
        #expect(try await a.value.get().value[string: "tenant"] == "A")
        #expect(try await b.value.get().value[string: "tenant"] == "B")
        #expect(transport.requests.count == 2)
    }

    @Test func aCancelledCallerDoesNotCancelTheExchangeForTheOthers() async throws {
        for cancelledIndex in [0, 1] {  // the leader, then a follower
            let server = SlowServer()
            let cache = try ResponseCache()
            let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: server.transport)
            let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("slow").withoutSession()
            let leader = Task { await repository.fetch(endpoint) }
            await eventually { server.started.current == 1 }
            let followers = (0..<2).map { _ in Task { await repository.fetch(endpoint) } }
            await eventually { cache.coalescer.inFlight.callers == 3 }
            let all = [leader] + followers
            all[cancelledIndex].cancel()
            if cancelledIndex == 1 {
                // A cancelled follower returns at once, while the exchange is still running.
                guard case .cancelled? = await all[1].value.failure else {
                    Issue.record("the cancelled follower should fail as cancelled")
                    return
                }
                #expect(server.started.current == 1 && !server.open.current)
            }
            server.open.set(true)
            for (index, task) in all.enumerated() {
                let result = await task.value
                if index == cancelledIndex {
                    guard case .cancelled? = result.failure else {
                        Issue.record("caller \(index) should be cancelled, got \(result)")
                        continue
                    }
                } else {
                    #expect(try result.get().n == 1)
                }
            }
            #expect(server.cancelled.current == 0)
            #expect(server.transport.requests.count == 1)
        }
    }

    @Test func whenEveryCallerHasGoneTheExchangeIsCancelled() async throws {
        let server = SlowServer()
        let cache = try ResponseCache()
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: server.transport)
        let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("slow").withoutSession()
        let tasks = (0..<3).map { _ in Task { await repository.fetch(endpoint) } }
        await eventually { cache.coalescer.inFlight.callers == 3 && server.started.current == 1 }
        for task in tasks { task.cancel() }
        for task in tasks {
            guard case .cancelled? = await task.value.failure else {
                Issue.record("every caller should be cancelled")
                continue
            }
        }
        #expect(server.cancelled.current == 1)
        // A new caller starts afresh.
        server.open.set(true)
        #expect(try await repository.fetch(endpoint).get().n == 2)
    }

    @Test func coalescingCanBeTurnedOff() async throws {
        let server = SlowServer()
        let cache = try ResponseCache(configuration: .init(coalescesRequests: false))
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: server.transport)
        let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("slow").withoutSession()
        let tasks = (0..<3).map { _ in Task { await repository.fetch(endpoint) } }
        await eventually { server.started.current == 3 }
        server.open.set(true)
        for task in tasks { _ = try await task.value.get() }
        #expect(server.transport.requests.count == 3)
    }
}

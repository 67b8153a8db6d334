import Foundation
import Networking
import NetworkingTestSupport
import Testing

@testable import NetworkingCache

/// Which answers in flight a removal keeps out of the cache: those of the entries it removes,
/// and no others.
@Suite struct ResponseCacheRemovalTests {
    /// A stub whose `GET`s answer (cacheable for 10 minutes) only once `open` is set, and whose
    /// `POST`s answer `201` at once.
    struct GatedServer {
        let open = Shared(false)
        let started = Shared(0)
        let transport: StubTransport

        init(reads: [String], writes: [String]) {
            let (open, started) = (open, started)
            let gated = reads.map { path in
                StubTransport.Route(.get, path) { request throws(TransportError) in
                    started.update { $0 += 1 }
                    while !open.current {
                        if Task.isCancelled { throw .cancelled }
                        try? await Task.sleep(for: .milliseconds(2))
                    }
                    return TransportResponse(
                        statusCode: 200, headers: ["Content-Type": "application/json", "Cache-Control": "max-age=600"],
                        body: Data(#"{"path":"\#(path)"}"#.utf8), url: request.url)
                }
            }
            transport = StubTransport(routes: gated + writes.map { StubTransport.Route.status(.post, $0, 201, json: "{}") })
        }
    }

    /// Waits (without blocking a thread) until `condition` holds, for at most 30 seconds.
    private func eventually(_ condition: () -> Bool) async {
        for _ in 0..<15_000 where !condition() { try? await Task.sleep(for: .milliseconds(2)) }
    }

    @Test func aWriteToAnotherURLDoesNotKeepAnswersInFlightOutOfTheCache() async throws {
        // Given two reads of different URLs waiting for their answers
        let server = GatedServer(reads: ["a", "b"], writes: ["c"])
        let cache = try ResponseCache()
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: server.transport)
        let a = Endpoint<RepositoryResponse<JSONValue>>.get("a").withoutSession()
        let b = Endpoint<RepositoryResponse<JSONValue>>.get("b").withoutSession()
        let readA = Task { await repository.fetch(a) }
        let readB = Task { await repository.fetch(b) }
        await eventually { server.started.current == 2 }

        // When a write to a third URL succeeds meanwhile, and then both answers arrive
        _ = try await repository.send(Endpoint<Void>.post("c").withoutSession()).get()
        server.open.set(true)
        let (first, second) = try await (readA.value.get(), readB.value.get())

        // Then both answers were stored
        #expect([first.source, second.source] == [.network, .network])
        #expect(try await repository.fetch(a).get().source == .cache)
        #expect(try await repository.fetch(b).get().source == .cache)
        #expect(server.transport.requests.count == 3)
        // …and nothing about them is tracked any more.
        #expect(cache.pendingStores.count == 0)
    }

    @Test func aWriteToTheSameURLStillKeepsTheAnswerInFlightOut() async throws {
        // Given a read waiting for its answer
        let server = GatedServer(reads: ["a"], writes: ["a"])
        let cache = try ResponseCache()
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: server.transport)
        let a = Endpoint<RepositoryResponse<JSONValue>>.get("a").withoutSession()
        let read = Task { await repository.fetch(a) }
        await eventually { server.started.current == 1 }

        // When a write to its URL succeeds meanwhile, and then the answer arrives
        _ = try await repository.send(Endpoint<Void>.post("a").withoutSession()).get()
        server.open.set(true)
        _ = try await read.value.get()

        // Then the answer, older than the write, was not stored
        #expect(try await repository.fetch(a).get().source == .network)
        #expect(try await repository.fetch(a).get().source == .cache)
        #expect(cache.pendingStores.count == 0)
    }
}

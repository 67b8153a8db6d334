import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

/// `preventUserInteraction` as activity events, deterministically: a test clock (waits return at
/// once) and a transport that answers only when the test says so.
@Suite("Network activity events")
struct NetworkActivityEventsTests {
    private func repository(
        activity: NetworkActivity, clock: NetworkingClock, transport: StubTransport
    ) throws -> TestRepository {
        let routes = try RouteTable([
            Route(name: "login", method: .post, path: "auth/login", requiresSession: false, preventUserInteraction: true),
            Route(name: "books", path: "books"),
        ])
        var configuration = try routedConfiguration(routes)
        configuration.activity = activity
        configuration.clock = clock
        return TestRepository(configuration: configuration, transport: transport)
    }

    /// A repository whose transport records the count it sees as it answers `GET books` with `body`.
    private func countingRepository(_ activity: NetworkActivity, answering body: Data) throws -> (Recorder<Int>, TestRepository) {
        let seen = Recorder<Int>()
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "books") { request throws(TransportError) in
                seen.record(activity.inFlight)
                return TransportResponse(statusCode: body.isEmpty ? 204 : 200, headers: [:], body: body, url: request.url)
            }
        ])
        return (seen, try repository(activity: activity, clock: .live, transport: transport))
    }

    /// The events of one call, up to and including its `.finished`.
    private func events(
        of stream: AsyncStream<ActivityEvent>, named name: String?
    ) async -> [ActivityEvent] {
        var seen: [ActivityEvent] = []
        for await event in stream where event.name == name {
            seen.append(event)
            if event.kind == .finished { break }
        }
        return seen
    }

    @Test("A blocking route's call reports started, slow after slowCallDelay, then finished")
    func slowCall() async throws {
        // Given
        let clock = TestClock()
        let activity = NetworkActivity(slowCallDelay: 2)
        let gate = Gate()
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "auth/login") { request throws(TransportError) in
                await gate.wait()
                return TransportResponse(statusCode: 204, headers: [:], body: Data(), url: request.url)
            }
        ])
        let repository = try repository(activity: activity, clock: clock.networkingClock, transport: transport)
        let stream = activity.events()
        var iterator = stream.makeAsyncIterator()
        // When: the call runs until the test has seen its slow event
        let call = Task { await repository.performRequest(Endpoint<Void>.route("login")) }
        let started = await iterator.next()
        let slow = await iterator.next()
        gate.open()
        let finished = await iterator.next()
        // Then
        #expect(await call.value.failure == nil)
        #expect([started?.kind, slow?.kind, finished?.kind] == [.started, .slow, .finished])
        #expect([started, slow, finished].allSatisfy { $0?.name == "login" && $0?.preventsUserInteraction == true })
        #expect(Set([started?.call.id, slow?.call.id, finished?.call.id]).count == 1)
        #expect(clock.sleeps == [.seconds(2)])
    }

    @Test("A request sent through the send(_:context:) seam counts while it is in flight, as any call does")
    func sendSeamCounts() async throws {
        let activity = NetworkActivity(slowCallDelay: 60)
        let (seen, repository) = try countingRepository(activity, answering: Data())
        let request = try repository.makeRequest(for: Endpoint<Void>.get("books"))
        // When
        let result = await repository.send(request, context: RequestContext(requiresSession: false, name: "batch"))
        // Then
        #expect(result.failure == nil)
        #expect(seen.all == [1])
        #expect(activity.inFlight == 0)
    }

    // That its body goes on counting after the head is handed over is tested against a real
    // stream (ServerSentEventsIntegrationTests.leavingTheLoop): a stub's body has ended by then.
    @Test("A streamed answer counts once while it waits for its head, and not at all once its body is read")
    func streamedCountsOnce() async throws {
        let activity = NetworkActivity(slowCallDelay: 60)
        let (seen, repository) = try countingRepository(activity, answering: Data("abc".utf8))
        // When
        let chunks = try await repository.performRequest(Endpoint<ResponseChunks>.get("books")).get()
        var body = Data()
        for try await chunk in chunks { body.append(chunk) }
        // Then
        #expect(seen.all == [1])
        #expect(body == Data("abc".utf8))
        for _ in 0..<3000 where activity.inFlight > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(activity.inFlight == 0)
    }

    @Test("A fast blocking call reports started and finished, without slow")
    func fastCall() async throws {
        let activity = NetworkActivity(slowCallDelay: 60)
        let transport = StubTransport(routes: [.status(.post, "auth/login", 204)])
        let repository = try repository(activity: activity, clock: .live, transport: transport)
        let stream = activity.events()
        #expect(await repository.performRequest(Endpoint<Void>.route("login")).failure == nil)
        let seen = await events(of: stream, named: "login")
        #expect(seen.map(\.kind) == [.started, .finished])
        #expect(seen.allSatisfy { $0.preventsUserInteraction })
    }

    @Test("Calls of unmarked routes and plain endpoints never get a slow event, nor a timer")
    func unmarked() async throws {
        // Given: waits of the clock return at once, so a timer would fire at once
        let clock = TestClock()
        let activity = NetworkActivity(slowCallDelay: 0)
        let transport = StubTransport(routes: [.status(.get, "books", 204)])
        let repository = try repository(activity: activity, clock: clock.networkingClock, transport: transport)
        let stream = activity.events()
        // When
        #expect(await repository.performRequest(Endpoint<Void>.route("books")).failure == nil)
        #expect(await repository.performRequest(Endpoint<Void>.get("books")).failure == nil)
        // Then
        let routed = await events(of: stream, named: "books")
        let plain = await events(of: stream, named: nil)
        #expect(routed.map(\.kind) == [.started, .finished])
        #expect(routed.allSatisfy { !$0.preventsUserInteraction })
        #expect(plain.map(\.kind) == [.started, .finished])
        #expect(clock.sleeps.isEmpty)
    }

    @Test("A call that fails on the wire still finishes")
    func failedCall() async throws {
        let activity = NetworkActivity(slowCallDelay: 60)
        let transport = StubTransport(routes: [.failure(.post, "auth/login", .network(.connectionRefused))])
        let repository = try repository(activity: activity, clock: .live, transport: transport)
        let stream = activity.events()
        #expect(await repository.performRequest(Endpoint<Void>.route("login")).failure != nil)
        #expect(await events(of: stream, named: "login").map(\.kind) == [.started, .finished])
        #expect(activity.inFlight == 0)
    }

    @Test("The in-flight counts stream still reports each call")
    func counts() async throws {
        let activity = NetworkActivity()
        let transport = StubTransport(routes: [.status(.get, "books", 204)])
        let repository = try repository(activity: activity, clock: .live, transport: transport)
        let updates = activity.updates()
        #expect(await repository.performRequest(Endpoint<Void>.route("books")).failure == nil)
        var seen: [Int] = []
        for await count in updates {
            seen.append(count)
            if seen.count == 3 { break }
        }
        #expect(seen == [0, 1, 0])
    }

    @Test("The events stream ends when its NetworkActivity is released")
    func streamEnds() async {
        var activity: NetworkActivity? = NetworkActivity()
        let stream = activity?.events() ?? AsyncStream(unfolding: { nil })
        activity = nil
        var count = 0
        for await _ in stream { count += 1 }
        #expect(count == 0)
        #expect(activity == nil)
    }

    @Test("slowCallDelay defaults to 4 seconds; a negative or NaN one is zero")
    func slowCallDelay() {
        #expect(NetworkActivity().slowCallDelay == 4)
        #expect(NetworkActivity(slowCallDelay: 0.1).slowCallDelay == 0.1)
        #expect(NetworkActivity(slowCallDelay: -1).slowCallDelay == 0)
        #expect(NetworkActivity(slowCallDelay: .nan).slowCallDelay == 0)
    }
}

/// Suspends callers of `wait()` until `open()`; callers after that pass at once.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let passes = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if passes { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

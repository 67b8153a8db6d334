import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

@Suite("Test clock")
struct TestClockTests {
    @Test("immediate: a wait returns at once, moves the time and is recorded")
    func immediate() async throws {
        let clock = TestClock(start: Date(timeIntervalSince1970: 0))
        try await clock.networkingClock.sleep(.seconds(5))
        #expect(clock.now == Date(timeIntervalSince1970: 5))
        #expect(clock.sleeps == [.seconds(5)])
        #expect(clock.pendingSleeps == 0)
    }

    @Test("manual: a wait lasts until the time is moved to its end, and the earliest ends first")
    func manual() async throws {
        let clock = TestClock(start: Date(timeIntervalSince1970: 0), mode: .manual)
        let ended = Ended()
        let long = Task {
            try await clock.networkingClock.sleep(.seconds(10))
            ended.append(10)
        }
        #expect(await clock.waitForSleeps(1))
        let short = Task {
            try await clock.networkingClock.sleep(.seconds(3))
            ended.append(3)
        }
        #expect(await clock.waitForSleeps(2))
        var spins = 0
        while clock.pendingSleeps < 2, spins < 1_000_000 {
            spins += 1
            await Task.yield()
        }
        clock.advance(by: 2)
        #expect(clock.pendingSleeps == 2)
        clock.advance(by: 1)
        try await short.value
        #expect(ended.all == [3])
        #expect(clock.pendingSleeps == 1)
        clock.advance(by: 7)
        try await long.value
        #expect(ended.all == [3, 10])
        #expect(clock.now == Date(timeIntervalSince1970: 10))
        #expect(clock.sleeps == [.seconds(10), .seconds(3)])
        // A wait of nothing does not wait.
        try await clock.networkingClock.sleep(.zero)
    }

    @Test("manual: cancelling a waiting task ends its wait with CancellationError and takes it off the clock")
    func manualCancel() async throws {
        let clock = TestClock(mode: .manual)
        let waiting = Task { try await clock.networkingClock.sleep(.seconds(60)) }
        #expect(await clock.waitForSleeps())
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(clock.pendingSleeps == 0)
        // Cancelled before it waits: it never joins the clock.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.networkingClock.sleep(.seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(clock.pendingSleeps == 0)
    }

    @Test("manual: a retry's backoff is sent when the test moves the time past it")
    func retryBackoff() async throws {
        let clock = TestClock(start: Date(timeIntervalSince1970: 0), mode: .manual)
        let attempts = Mutex(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "items") { _ throws(TransportError) in
                let attempt = attempts.withLock {
                    $0 += 1
                    return $0
                }
                return TransportResponse(statusCode: attempt == 1 ? 503 : 200, body: Data("[1]".utf8))
            }
        ])
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.clock = clock.networkingClock
        configuration.retryPolicy = RetryPolicy(random: { 1 })
        let repository = AbstractRepository(configuration: configuration, transport: transport)
        let call = Task { () -> Result<[Int], RepositoryError> in await repository.performRequest(.get("items")) }

        #expect(await clock.waitForSleeps())
        #expect(clock.sleeps == [.milliseconds(500)])
        clock.advance(by: 0.4)
        #expect(clock.pendingSleeps == 1)
        #expect(attempts.withLock { $0 } == 1)
        clock.advance(by: 0.1)

        #expect(try await call.value.get() == [1])
        #expect(attempts.withLock { $0 } == 2)
    }

    /// The waits that ended, in order.
    final class Ended: Sendable {
        private let entries = Mutex<[Int]>([])
        var all: [Int] { entries.withLock { $0 } }
        func append(_ entry: Int) { entries.withLock { $0.append(entry) } }
    }
}

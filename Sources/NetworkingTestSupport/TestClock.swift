import Foundation
import Networking
import Synchronization

/// A clock for tests: waits return at once (unless the task is cancelled) and move the clock's
/// time forward by the amount waited, and every wait is recorded — so retry backoff, polling and
/// token expiry are tested without sleeping.
///
/// ```swift
/// let clock = TestClock()
/// var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
/// configuration.clock = clock.networkingClock
/// configuration.retryPolicy = .default
/// // … make calls …
/// #expect(clock.sleeps == [.seconds(1), .seconds(2)])
/// ```
///
/// Every wait on the clock returns at once, including those of timers that run beside a call:
/// a `preventUserInteraction` call's slow-call timer (`NetworkActivity.slowCallDelay`, which
/// then reports `.slow` at once and adds its wait to ``sleeps``), and an offline queue's retry
/// timer, which would try again and again without pause while its requests keep failing — give
/// a queue that is tested that way the live clock, or stop it (drop it) when the test ends.
///
/// Thread-safe.
public final class TestClock: Sendable {
    private struct State {
        var now: Date
        var sleeps: [Duration] = []
    }

    private let state: Mutex<State>

    /// Creates a clock whose time starts at `start`.
    public init(start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Mutex(State(now: start))
    }

    /// The clock's current time.
    public var now: Date { state.withLock { $0.now } }

    /// Every wait asked for, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// Moves the time forward without a wait being asked for.
    public func advance(by seconds: TimeInterval) {
        state.withLock { $0.now.addTimeInterval(seconds) }
    }

    /// The clock to put in a configuration or a session manager.
    public var networkingClock: NetworkingClock {
        NetworkingClock(
            now: { [self] in now },
            sleep: { [self] duration in
                try Task.checkCancellation()
                state.withLock {
                    $0.sleeps.append(duration)
                    $0.now.addTimeInterval(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
                }
                await Task.yield()
                try Task.checkCancellation()
            })
    }
}

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
/// configuration.retryPolicy = RetryPolicy(random: { 1 })    // no jitter: the longest waits
/// // … make a call the server answers 503 three times …
/// #expect(clock.sleeps == [.milliseconds(500), .seconds(1)])
/// ```
///
/// Every wait on such a clock returns at once, including those of timers that run beside a call:
/// a `preventUserInteraction` call's slow-call timer (`NetworkActivity.slowCallDelay`, which
/// then reports `.slow` at once and adds its wait to ``sleeps``), and an offline queue's retry
/// timer, which would try again and again without pause while its requests keep failing. For
/// those, make the clock ``Mode/manual``: a wait then lasts until the test moves the time past
/// its end with ``advance(by:)``, so the test decides when the timer fires;
/// ``waitForSleeps(_:within:)`` tells the test when a wait has begun.
///
/// Thread-safe.
public final class TestClock: Sendable {
    /// Whether waits end by themselves or when the test moves the time.
    public enum Mode: Sendable {
        /// A wait returns at once and moves the time forward by its length (the default).
        case immediate
        /// A wait lasts until ``TestClock/advance(by:)`` moves the time to its end (or its task
        /// is cancelled); the time moves only then.
        case manual
    }

    /// A wait suspended until the time reaches `end`.
    private struct Sleeper {
        let id: UInt64
        let end: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleeps: [Duration] = []
        var sleepers: [Sleeper] = []
        /// Waits begun and not suspended yet; one cancelled in between is taken out.
        var starting: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>
    /// How waits end.
    public let mode: Mode

    /// Creates a clock whose time starts at `start`.
    public init(start: Date = Date(timeIntervalSince1970: 1_700_000_000), mode: Mode = .immediate) {
        state = Mutex(State(now: start))
        self.mode = mode
    }

    /// The clock's current time.
    public var now: Date { state.withLock { $0.now } }

    /// Every wait asked for, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// How many waits are suspended now (always 0 in ``Mode/immediate``).
    public var pendingSleeps: Int { state.withLock { $0.sleepers.count } }

    /// Moves the time forward without a wait being asked for; in ``Mode/manual``, the waits that
    /// end by then return (resumed in the order of their ends; each task then reads the new time).
    /// A timer that sets itself again within the span fires once: advance step by step to see
    /// each of its turns.
    public func advance(by seconds: TimeInterval) {
        let due = state.withLock { state -> [Sleeper] in
            state.now.addTimeInterval(seconds)
            let now = state.now
            let due = state.sleepers.filter { $0.end <= now }.sorted { $0.end < $1.end }
            state.sleepers.removeAll { $0.end <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits until at least `count` waits have been asked for in all (``sleeps``, those that
    /// ended included), looking every millisecond of real time: a test starts a call, waits for
    /// its backoff to begin, then moves the time (``Mode/manual``).
    ///
    /// - Returns: `false` when `limit` (real time) passed first or the task was cancelled — the
    ///   code under test never waited — so that a test fails instead of hanging.
    @discardableResult
    public func waitForSleeps(_ count: Int = 1, within limit: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while sleeps.count < count {
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    /// The clock to put in a configuration or a session manager.
    public var networkingClock: NetworkingClock {
        NetworkingClock(
            now: { [self] in now },
            sleep: { [self] duration in
                try Task.checkCancellation()
                let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
                switch mode {
                case .immediate:
                    state.withLock {
                        $0.sleeps.append(duration)
                        $0.now.addTimeInterval(seconds)
                    }
                    await Task.yield()
                case .manual:
                    try await suspend(for: duration, seconds: seconds)
                }
                try Task.checkCancellation()
            })
    }

    /// A wait in ``Mode/manual``: suspended until the time reaches its end.
    private func suspend(for duration: Duration, seconds: Double) async throws {
        let (id, end) = state.withLock { state in
            state.sleeps.append(duration)
            state.nextID += 1
            state.starting.insert(state.nextID)
            return (state.nextID, state.now.addingTimeInterval(max(0, seconds)))
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    guard state.starting.remove(id) != nil else { return .failure(CancellationError()) }
                    if state.now >= end { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, end: end, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    // Not suspended yet: it fails as it would be; or it has ended already.
                    state.starting.remove(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}

import Foundation

/// The time source of everything that waits or reads the time: retry backoff, polling, token
/// expiry, refresh windows and log timings.
///
/// ``live`` uses the system clock; tests inject a clock that records waits and returns at once
/// (`NetworkingTestSupport`'s `TestClock`), so they never sleep.
public struct NetworkingClock: Sendable {
    /// The current date.
    public var now: @Sendable () -> Date
    /// Waits for a duration; throws `CancellationError` when the task is cancelled.
    public var sleep: @Sendable (Duration) async throws -> Void

    /// Creates a clock from its two functions.
    public init(now: @escaping @Sendable () -> Date, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// The system clock and `Task.sleep`.
    public static let live = NetworkingClock(now: { Date() }, sleep: { try await Task.sleep(for: $0) })
}

extension Duration {
    /// The duration in seconds as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The longest wait or timeout the library makes of a number of seconds: 10^12 s (about
    /// 31,700 years), well inside what `Duration` and a clock's instants hold.
    static let longestSeconds: TimeInterval = 1e12

    /// `seconds` to the millisecond, within `0...longestSeconds` (`NaN` is zero). Timeouts, poll
    /// intervals and `Retry-After` values come from callers and servers; `Duration.seconds(_:)`
    /// would trap on an infinite or huge one.
    static func clampedSeconds(_ seconds: TimeInterval) -> Duration {
        guard seconds > 0 else { return .zero }
        return .milliseconds(Int64((min(seconds, longestSeconds) * 1000).rounded()))
    }
}

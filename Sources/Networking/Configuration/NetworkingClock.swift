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
}

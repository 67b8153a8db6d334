import Dispatch

/// A one-shot timer on a dispatch queue, for deadlines that must fire on time even when Swift's
/// cooperative pool is busy or blocked by the app (a sleeping task would wait for a free thread).
/// It runs while someone holds it: a timer nobody holds is cancelled.
///
/// Thread-safety (hence `@unchecked Sendable`): a dispatch source may be cancelled from any thread,
/// and the source is set up completely before `init` returns.
final class DeadlineTimer: @unchecked Sendable {
    private let source: any DispatchSourceTimer

    /// Schedules `action` after `seconds` (clamped to a century, the furthest a deadline can be).
    init(after seconds: Double, action: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: .global())
        source.setEventHandler(handler: action)
        source.schedule(deadline: .now() + (seconds >= 0 ? min(seconds, 3e9) : 0))
        source.resume()
    }

    deinit {
        source.cancel()
    }

    /// Stops the timer; `action` does not run unless it has started already.
    func cancel() {
        source.cancel()
    }
}

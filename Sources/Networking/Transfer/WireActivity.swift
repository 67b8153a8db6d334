import Synchronization

/// A count of signs of life on one streamed call's wire — a head, a chunk, the end — bumped by
/// its ``ChunkSink`` as the transport hands them over, and when its request last went to the
/// transport. A watchdog compares two readings to tell a silent connection from a reader that
/// is merely slow to run (a busy cooperative pool), which a timer alone cannot.
final class WireActivity: Sendable {
    private struct State {
        var count: UInt64 = 0
        var sentAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// The current reading: it changes with every sign of life.
    var reading: UInt64 { state.withLock { $0.count } }

    /// When the request last went to the transport (each retry sends it again); `nil` before.
    var sentAt: ContinuousClock.Instant? { state.withLock { $0.sentAt } }

    /// Records a sign of life.
    func bump() {
        state.withLock { $0.count &+= 1 }
    }

    /// Records that the request goes to the transport now: the wait for its answer starts.
    func sent() {
        let now = ContinuousClock.now
        state.withLock { $0.sentAt = now }
    }
}

/// The ``WireActivity`` a streamed call's sinks report to (one per attempt otherwise): how an
/// event stream watches its connection from the request on, head included.
enum WireActivityOption: RequestOptionKey {
    static let defaultValue: WireActivity? = nil
}

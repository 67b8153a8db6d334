import Synchronization

/// A count of signs of life on one streamed call's wire — a head, a chunk, the end — bumped by
/// its ``ChunkSink`` as the transport hands them over, and when its request last went to the
/// transport. A watchdog compares two readings to tell a silent connection from a reader that
/// is merely slow to run (a busy cooperative pool), which a timer alone cannot.
final class WireActivity: Sendable {
    private struct State {
        var count: UInt64 = 0
        var sentAt: ContinuousClock.Instant?
        var bytesSent: Int64 = 0
    }

    private let state = Mutex(State())
    /// Whether the body's bytes going out count too (``sending(_:)``): only for a watch that
    /// reads ``sentAt`` (an event stream's), since the report costs a callback per chunk.
    let countsUpload: Bool

    init(countsUpload: Bool = false) {
        self.countsUpload = countsUpload
    }

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
        state.withLock {
            $0.sentAt = now
            $0.bytesSent = 0
        }
    }

    /// Records the transport's count of body bytes sent so far: while a large body goes out, the
    /// wait for its answer starts over with each change (a slow upload is not a silent server;
    /// a body sent again from its start after a redirect counts too); a count that did not move
    /// (a progress report while the server thinks) changes nothing.
    func sending(_ bytesSent: Int64) {
        let now = ContinuousClock.now
        state.withLock {
            guard bytesSent != $0.bytesSent else { return }
            $0.bytesSent = bytesSent
            $0.sentAt = now
        }
    }
}

/// The ``WireActivity`` a streamed call's sinks report to (one per attempt otherwise): how an
/// event stream watches its connection from the request on, head included.
enum WireActivityOption: RequestOptionKey {
    static let defaultValue: WireActivity? = nil
}

import Synchronization

/// A count of signs of life on one streamed call's wire — a head, a chunk, the end — bumped by
/// its ``ChunkSink`` as the transport hands them over. A watchdog compares two readings to tell
/// a silent connection from a reader that is merely slow to run (a busy cooperative pool), which
/// a timer alone cannot.
final class WireActivity: Sendable {
    private let count = Mutex<UInt64>(0)

    /// The current reading: it changes with every sign of life.
    var reading: UInt64 { count.withLock { $0 } }

    /// Records a sign of life.
    func bump() {
        count.withLock { $0 &+= 1 }
    }
}

/// The ``WireActivity`` a streamed call's sinks report to (one per attempt otherwise): how an
/// event stream watches its connection from the request on, head included.
enum WireActivityOption: RequestOptionKey {
    static let defaultValue: WireActivity? = nil
}

import Synchronization

/// A streamed body's count in ``NetworkActivity``: it starts when the head is handed to the caller
/// (until then the call itself counts, so a call waiting for its head counts once) and ends when
/// the body's transfer ends, in whichever order the two come.
final class StreamedBodyActivity: Sendable {
    /// Where the body is: its head not yet handed over, counted, or its transfer over.
    private enum Phase { case waiting, counting, ended }

    private let activity: NetworkActivity
    private let call: ActivityEvent.Call
    private let phase = Mutex(Phase.waiting)

    /// The count of `call` (the body's own) in `activity`, not started yet.
    init(activity: NetworkActivity, call: ActivityEvent.Call) {
        self.activity = activity
        self.call = call
    }

    /// The head goes to the caller: the body counts from now on, unless its transfer has ended.
    func handOver() {
        // The activity's own lock is taken inside this one, never the other way round: an end
        // cannot slip between the phase and the count.
        phase.withLock { phase in
            guard phase == .waiting else { return }
            phase = .counting
            activity.begin(call)
        }
    }

    /// The body's transfer ended (read, failed or cancelled).
    func end() {
        phase.withLock { phase in
            if phase == .counting { activity.end(call) }
            phase = .ended
        }
    }
}

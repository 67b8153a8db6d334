import Dispatch

/// Runs the disk tier's slow work — a stored answer's `fsync`s, a removal that lists the whole
/// folder — on a thread of Dispatch's global pool, so that Swift's cooperative threads (one per
/// core) go on serving other requests meanwhile. Dispatch bounds its threads and adds one when
/// those it has are blocked, so a burst of stores neither starts a thread each nor waits in one
/// line. (Networking's own helper for this is internal: the cache uses only its public API.)
enum DiskThread {
    /// Runs `work` there; the calling task waits for it. Not cancellable: a store or a removal is
    /// never left half done.
    static func run(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                work()
                continuation.resume()
            }
        }
    }
}

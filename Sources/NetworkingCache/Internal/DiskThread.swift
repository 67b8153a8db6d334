import Foundation

/// Runs the disk tier's slow work — a stored answer's `fsync`s, a removal that lists the whole
/// folder — on a thread of its own, so that Swift's cooperative threads (one per core) go on
/// serving other requests meanwhile; the calling task waits for it. The work is not cancellable:
/// a store or a removal is never left half done.
enum DiskThread {
    static func run(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                work()
                continuation.resume()
            }
        }
    }
}

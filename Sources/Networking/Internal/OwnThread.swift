import Foundation
import Synchronization

/// Runs blocking work — reading and hashing a file of gigabytes — on a thread of its own, so that
/// Swift's cooperative threads (one per core) are never held by disk reads; the caller suspends
/// until it is done. Cancelling the calling task sets the work's ``CancelFlag``, which the work
/// checks between pieces to stop early.
enum OwnThread {
    static func run<T: Sendable>(_ work: @escaping @Sendable (CancelFlag) -> T) async -> T {
        let cancelled = CancelFlag()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
                Thread.detachNewThread { continuation.resume(returning: work(cancelled)) }
            }
        } onCancel: {
            cancelled.set()
        }
    }
}

/// Tells work on its own thread that its call was cancelled.
final class CancelFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    var isSet: Bool { flag.load(ordering: .relaxed) }

    func set() { flag.store(true, ordering: .relaxed) }
}

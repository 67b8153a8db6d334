import Foundation
import Synchronization

/// One thread with a 256 MiB stack that runs the heavy checks queued to it, one after another.
final class LargeStackWorker: Sendable {
    static let shared = LargeStackWorker()

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let available = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                available.wait()
                let job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                job?()
            }
        }
        thread.stackSize = 256 << 20
        thread.start()
    }

    func enqueue(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(job) }
        available.signal()
    }
}

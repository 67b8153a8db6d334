import Foundation
import Synchronization
import Testing

@testable import Networking

@Suite("Deadline timer")
struct DeadlineTimerTests {
    @Test("It fires once after its delay, on a dispatch thread, even while the calling task waits")
    func fires() async {
        let fired = Mutex(0)
        let start = ContinuousClock.now
        let timer = Mutex<DeadlineTimer?>(nil)
        let elapsed = await withCheckedContinuation { (continuation: CheckedContinuation<Duration, Never>) in
            let held = DeadlineTimer(after: 0.05) {
                fired.withLock { $0 += 1 }
                continuation.resume(returning: ContinuousClock.now - start)
            }
            timer.withLock { $0 = held }
        }
        #expect(elapsed >= .milliseconds(50))
        try? await Task.sleep(for: .milliseconds(100))
        #expect(fired.withLock { $0 } == 1)
    }

    @Test("A cancelled timer, or one nobody holds, never fires; any delay is accepted")
    func cancelled() async {
        let fired = Mutex(0)
        let cancelled = DeadlineTimer(after: 0.05) { fired.withLock { $0 += 1 } }
        cancelled.cancel()
        _ = DeadlineTimer(after: 0.05) { fired.withLock { $0 += 1 } }
        let unbounded = [-1, .nan, 1e300, .infinity].map { DeadlineTimer(after: $0) {} }
        try? await Task.sleep(for: .milliseconds(150))
        #expect(fired.withLock { $0 } == 0)
        withExtendedLifetime((cancelled, unbounded)) {}
    }
}

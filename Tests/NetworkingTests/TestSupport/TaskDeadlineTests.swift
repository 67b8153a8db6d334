import Foundation
import NetworkingTestSupport
import Testing

/// `Task.value(within:)`, which the suites use to fail a test that would hang instead of stalling the run.
@Suite("Task deadline")
struct TaskDeadlineTests {
    @Test("A value in time is returned; a late one gives nil at the limit")
    func valueOrNil() async {
        let quick = Task { 7 }
        #expect(await quick.value(within: .seconds(60)) == 7)
        let never = Task { () async -> Int in
            try? await Task.sleep(for: .seconds(3600))
            return 1
        }
        defer { never.cancel() }
        let started = ContinuousClock.now
        #expect(await never.value(within: .milliseconds(50)) == nil)
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test("Cancelling the task that waits ends the wait with nil at once, not at the limit")
    func cancelledWaiter() async {
        let never = Task { () async -> Int in
            try? await Task.sleep(for: .seconds(3600))
            return 1
        }
        defer { never.cancel() }
        let waiter = Task { await never.value(within: .seconds(3600)) }
        waiter.cancel()
        // The outer wait's own timer (not the cancellation under test) bounds the test.
        let outer = Task { await waiter.value }
        let result = await outer.value(within: .seconds(60))
        #expect(result == .some(.none), "the cancelled wait went on")
    }
}

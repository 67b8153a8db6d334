import Foundation
import Synchronization

/// A task's value, or `nil` once `limit` has passed without one: a test of something that used
/// to hang then fails instead of stalling the whole run (the task is left to itself).
func value<Value: Sendable>(of task: Task<Value, Never>, within limit: Duration) async -> Value? {
    await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
        let waiting = FirstAnswer(continuation)
        Task { waiting.resume(returning: await task.value) }
        Task {
            try? await Task.sleep(for: limit)
            waiting.resume(returning: nil)
        }
    }
}

/// Resumes a continuation with the first answer given; later ones are dropped.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(returning value: Value) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}

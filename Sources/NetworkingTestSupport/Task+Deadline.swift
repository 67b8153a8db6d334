import Synchronization

extension Task where Failure == Never {
    /// The task's value, or `nil` once `limit` has passed without one: a test of something that
    /// could hang (a cancellation, a wait for a server) then fails at once instead of stalling the
    /// whole run. The task is not cancelled; it is left to itself.
    ///
    /// ```swift
    /// let waiting = Task { await queue.outcome(of: ticket) }
    /// waiting.cancel()
    /// #expect(await waiting.value(within: .seconds(10)) != nil)
    /// ```
    public func value(within limit: Duration) async -> Success? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Success?, Never>) in
            let waiting = FirstAnswer(continuation)
            Task<Void, Never> { waiting.resume(returning: await self.value) }
            Task<Void, Never> {
                try? await Task<Never, Never>.sleep(for: limit)
                waiting.resume(returning: nil)
            }
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

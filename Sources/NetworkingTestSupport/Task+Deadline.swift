import Synchronization

extension Task where Failure == Never {
    /// The task's value, or `nil` once `limit` has passed without one: a test of something that
    /// could hang (a cancellation, a wait for a server) then fails at once instead of stalling the
    /// whole run. The task is not cancelled; it is left to itself. Cancelling the task that waits
    /// ends the wait with `nil` too, and a value in time stops the timer.
    ///
    /// ```swift
    /// let waiting = Task { await queue.outcome(of: ticket) }
    /// waiting.cancel()
    /// #expect(await waiting.value(within: .seconds(10)) != nil)
    /// ```
    public func value(within limit: Duration) async -> Success? {
        let answer = FirstAnswer<Success?>()
        let timer = Task<Void, Never> {
            try? await Task<Never, Never>.sleep(for: limit)
            answer.resume(returning: nil)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Success?, Never>) in
                answer.wait(continuation)
                Task<Void, Never> { answer.resume(returning: await self.value) }
            }
        } onCancel: {
            answer.resume(returning: nil)
        }
    }
}

/// Hands the first answer given to the one waiter, whether it comes before or after the waiter;
/// later answers are dropped.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Value, Never>)
        case answered(Value)
        case done
    }

    private let state = Mutex<State>(.idle)

    func wait(_ continuation: CheckedContinuation<Value, Never>) {
        let early = state.withLock { state -> [Value] in
            guard case .answered(let value) = state else {
                state = .waiting(continuation)
                return []
            }
            state = .done
            return [value]
        }
        if let value = early.first { continuation.resume(returning: value) }
    }

    func resume(returning value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            switch state {
            case .idle:
                state = .answered(value)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .answered, .done:
                return nil
            }
        }
        waiter?.resume(returning: value)
    }
}

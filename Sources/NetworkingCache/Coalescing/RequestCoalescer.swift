import Foundation
import Networking
import Synchronization

/// Shares one exchange among concurrent identical requests: the first caller starts it, the
/// others wait for its outcome.
///
/// The exchange runs in a task of its own, so a caller that is cancelled gets
/// ``Networking/RepositoryError/cancelled(_:)`` without cancelling it for the others; only when
/// every caller has gone is it cancelled. A cancelled follower returns at once. The leader's
/// exchange runs the rest of the leader's own chain (the `next` an interceptor is given, which
/// must not outlive its call), so a cancelled leader returns when the exchange ends. Requests are identical when everything about them is —
/// method, URL, headers, body, timeout, security — and they are signed alike and share the cache
/// key (hence the discriminator: two users never share an exchange) and the cache policy.
///
/// Thread-safe: a `Mutex` guards the table of exchanges in flight, and each exchange's waiters;
/// neither is held while the exchange runs or a waiter resumes.
final class RequestCoalescer: Sendable {
    /// What makes two requests the same exchange.
    struct Identity: Hashable, Sendable {
        let request: TransportRequest
        let isSigned: Bool
        /// What the answer is stored under (whose, too: the key holds the discriminator) and how
        /// (a call that stores for an hour must not take the answer of one that stores nothing).
        let key: CacheKey
        let policy: EffectivePolicy
    }

    private let flights = Mutex<[Identity: Flight]>([:])

    init() {}

    /// How many exchanges are in flight, and how many callers wait for them.
    var inFlight: (exchanges: Int, callers: Int) {
        let all = flights.withLock { Array($0.values) }
        return (all.count, all.reduce(0) { $0 + $1.members })
    }

    /// The outcome of `operation`, run once for every concurrent caller with the same `identity` —
    /// except that a caller who joined runs its own `operation` when the shared answer is not
    /// `isShareable` (it varies on something this caller's request may not share).
    ///
    /// - Throws: the operation's error, or `cancelled` when this caller's task is cancelled first.
    func run(
        _ identity: Identity, cancelled: RepositoryError,
        operation: @escaping @Sendable () async throws(RepositoryError) -> TransportResponse,
        isShareable: (TransportResponse) -> Bool = { _ in true }
    ) async throws(RepositoryError) -> TransportResponse {
        let (flight, isLeader) = flights.withLock { flights -> (Flight, Bool) in
            if let flight = flights[identity], flight.join() { return (flight, false) }
            let flight = Flight()
            flights[identity] = flight
            return (flight, true)
        }
        guard isLeader else {
            guard let result = await flight.wait() else { throw cancelled }
            if case .success(let response) = result, !isShareable(response) { return try await operation() }
            return try result.get()
        }
        let task = Task {
            let result: Result<TransportResponse, RepositoryError>
            do throws(RepositoryError) {
                result = .success(try await operation())
            } catch {
                result = .failure(error)
            }
            self.flights.withLock { flights in
                if flights[identity] === flight { flights[identity] = nil }
            }
            flight.finish(result)
        }
        flight.start(task)
        let result = await flight.wait()
        // The leader's `operation` runs the rest of the leader's chain, which must not outlive
        // the leader's call: a cancelled leader waits for the exchange to end (at once when
        // everybody has gone, since it is then cancelled) before it returns.
        await task.value
        guard let result else { throw cancelled }
        return try result.get()
    }
}

/// One exchange in flight and the callers waiting for it.
private final class Flight: Sendable {
    private struct State {
        var result: Result<TransportResponse, RepositoryError>?
        var waiters: [UInt64: CheckedContinuation<Result<TransportResponse, RepositoryError>?, Never>] = [:]
        /// Waiters cancelled before they were registered.
        var cancelledEarly: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
        /// Callers still interested: the leader and every caller that joined, less the cancelled.
        var members = 1
        var task: Task<Void, Never>?
        /// Every caller has gone: the exchange is cancelled, and no one may join it.
        var abandoned = false
    }

    private let state = Mutex(State())

    /// Callers still interested.
    var members: Int { state.withLock { $0.members } }

    /// Adds a caller; `false` when the exchange was abandoned (start a new one).
    func join() -> Bool {
        state.withLock { state in
            guard !state.abandoned else { return false }
            state.members += 1
            return true
        }
    }

    /// Records the task running the exchange (cancelled at once if everyone has gone already).
    func start(_ task: Task<Void, Never>) {
        let abandoned = state.withLock { state -> Bool in
            state.task = task
            return state.abandoned
        }
        if abandoned { task.cancel() }
    }

    /// Hands the outcome to every waiter.
    func finish(_ result: Result<TransportResponse, RepositoryError>) {
        let waiters = state.withLock { state in
            state.result = result
            state.task = nil
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// The outcome, or `nil` when the calling task is cancelled first.
    func wait() async -> Result<TransportResponse, RepositoryError>? {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<TransportResponse, RepositoryError>?, Never>) in
                enum Now {
                    case wait
                    case resume(Result<TransportResponse, RepositoryError>?)
                }
                let now = state.withLock { state -> Now in
                    if let result = state.result { return .resume(result) }
                    if state.cancelledEarly.remove(id) != nil { return .resume(nil) }
                    state.waiters[id] = continuation
                    return .wait
                }
                if case .resume(let value) = now { continuation.resume(returning: value) }
            }
        } onCancel: {
            let (waiter, task) = state.withLock {
                state -> (CheckedContinuation<Result<TransportResponse, RepositoryError>?, Never>?, Task<Void, Never>?) in
                guard state.result == nil else { return (nil, nil) }
                let waiter = state.waiters.removeValue(forKey: id)
                if waiter == nil { state.cancelledEarly.insert(id) }
                state.members -= 1
                guard state.members <= 0 else { return (waiter, nil) }
                state.abandoned = true
                return (waiter, state.task)
            }
            waiter?.resume(returning: nil)
            task?.cancel()
        }
    }
}

import Dispatch
import Foundation
import Synchronization

extension AbstractRepository {
    /// Sends the endpoint and blocks the calling thread until the decoded result arrives or
    /// `maximumWait` seconds pass: for scripts and command-line tools written without `async`
    /// (WebApiClient's `blockingRequestAPI`).
    ///
    /// When the wait runs out, the request is cancelled and the result is
    /// ``RepositoryError/timeout(_:)`` — unless its answer arrives before the cancellation takes
    /// effect (within two seconds more), which is returned as it is; an infinite `maximumWait` waits (up to a year), a negative
    /// or NaN one is an ``RepositoryError/invalidRequest(reason:request:)``. Blocking a thread of Swift concurrency or of a transport
    /// could deadlock, so a call from async code or from a transport's callback returns
    /// ``RepositoryError/invalidRequest(reason:request:)`` at once instead; use
    /// ``performRequest(_:)-3hmh1`` with `await` there. On an app's main thread, a call that needs
    /// that thread (a `@MainActor` interceptor or handler) cannot go on while it waits and ends
    /// with ``RepositoryError/timeout(_:)``.
    public func performBlockingRequest<T: Decodable & Sendable>(_ endpoint: Endpoint<T>, maximumWait: TimeInterval)
        -> Result<T, RepositoryError>
    {
        blocking(endpoint, maximumWait: maximumWait) { await self.performRequest(endpoint) }
    }

    /// Sends the endpoint, ignores the body, and blocks until done or `maximumWait` seconds pass;
    /// see ``performBlockingRequest(_:maximumWait:)-(Endpoint<T>,_)``.
    public func performBlockingRequest(_ endpoint: Endpoint<Void>, maximumWait: TimeInterval) -> Result<Void, RepositoryError> {
        blocking(endpoint, maximumWait: maximumWait) { await self.performRequest(endpoint) }
    }

    private func blocking<Response, T: Sendable>(
        _ endpoint: Endpoint<Response>, maximumWait: TimeInterval,
        _ operation: @escaping @Sendable () async -> Result<T, RepositoryError>
    ) -> Result<T, RepositoryError> {
        let summary: RequestSummary
        do {
            summary = try builder.build(configuration.routes.resolve(endpoint, in: configuration)).summary
        } catch {
            return .failure(error)
        }
        if let reason = BlockingGuard.reasonNotToBlock() {
            return .failure(.invalidRequest(reason: reason, request: summary))
        }
        guard maximumWait >= 0 else {
            return .failure(
                .invalidRequest(reason: "maximumWait must be zero or a positive number of seconds, not \(maximumWait)", request: summary))
        }
        let outcome = Mutex<Result<T, RepositoryError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = Task.detached {
            let result = await operation()
            outcome.withLock { $0 = result }
            done.signal()
        }
        // At most a year: DispatchTime traps on a wait it cannot represent.
        let waitSeconds = min(maximumWait, 365 * 24 * 3600)
        if done.wait(timeout: .now() + waitSeconds) == .timedOut {
            task.cancel()
            // Cancellation ends the call promptly; wait briefly so the timeout can carry its context.
            _ = done.wait(timeout: .now() + 2)
            switch outcome.withLock({ $0 }) {
            case .failure(.cancelled(let context?))?: return .failure(.timeout(context))
            case .failure(.cancelled)?, nil: return .failure(.timeout(ErrorContext(request: summary)))
            // The answer came before the cancellation took effect: a write the server carried out
            // must not be reported as a timeout (the caller would send it again).
            case let finished?: return finished
            }
        }
        return outcome.withLock { $0 } ?? .failure(.timeout(ErrorContext(request: summary)))
    }
}

/// Knows the threads on which blocking would deadlock.
enum BlockingGuard {
    private static let transportThreadKey = "networking.transport-thread"

    /// Marks the current thread as a transport thread for the rest of its life.
    static func markCurrentThreadAsTransport() {
        Thread.current.threadDictionary[transportThreadKey] = true
    }

    /// Runs user code (a progress handler, a body sink) that a transport calls from its own thread, so that a
    /// blocking request made from it is refused instead of waiting for the transport.
    static func runningTransportCallback<Result>(_ body: () -> Result) -> Result {
        let dictionary = Thread.current.threadDictionary
        let previous = dictionary[transportThreadKey]
        dictionary[transportThreadKey] = true
        defer { dictionary[transportThreadKey] = previous }
        return body()
    }

    /// Why the current thread must not block, or `nil` when it may.
    static func reasonNotToBlock() -> String? {
        if withUnsafeCurrentTask(body: { $0 != nil }) {
            return
                "a blocking request was made from async code, where blocking a thread can deadlock Swift concurrency; use `await performRequest` instead"
        }
        if Thread.current.threadDictionary[transportThreadKey] as? Bool == true {
            return
                "a blocking request was made on a transport's own thread, which would wait for itself; use `await performRequest` instead"
        }
        return nil
    }
}

import Synchronization

/// Counts the requests in flight, for a spinner, a network activity indicator, or a command-line
/// progress line — the originals' "network activity indicator" without UIKit.
///
/// Every call counts once from the moment it enters the pipeline until its result is delivered,
/// retries and token refreshes included. Share one instance between repositories
/// (``NetworkActivity/shared`` is the default of every configuration).
///
/// ```swift
/// for await count in NetworkActivity.shared.updates() {
///     spinner.isHidden = count == 0
/// }
/// ```
///
/// Thread-safe.
public final class NetworkActivity: Sendable {
    private struct State {
        var inFlight = 0
        var subscribers = Subscribers<Int>()
    }

    /// The instance configurations use unless told otherwise.
    public static let shared = NetworkActivity()

    private let state = Mutex(State())

    /// Creates a separate counter.
    public init() {}

    deinit {
        state.withLock { $0.subscribers.finishAll() }
    }

    /// The number of requests in flight now.
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// The current count at once, then every change. Each call returns a new stream; it ends when
    /// the activity is released or the consuming task is cancelled.
    public func updates() -> AsyncStream<Int> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(64))
        let id = state.withLock { state -> Int in
            continuation.yield(state.inFlight)
            return state.subscribers.add(continuation)
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.subscribers.remove(id) }
        }
        return stream
    }

    func begin() { change(by: 1) }

    func end() { change(by: -1) }

    private func change(by delta: Int) {
        state.withLock { state in
            state.inFlight += delta
            state.subscribers.yield(state.inFlight)
        }
    }
}

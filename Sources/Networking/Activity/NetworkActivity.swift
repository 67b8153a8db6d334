import Foundation
import Synchronization

/// Counts the requests in flight, for a spinner, a network activity indicator, or a command-line
/// progress line — the originals' "network activity indicator" without UIKit — and reports each
/// call's start and end, for calls that should keep the user waiting (WebApiClient's overlay).
///
/// Every call counts once from the moment it enters the pipeline until its result is delivered,
/// retries and token refreshes included — a call the cache answers too, briefly (debounce a
/// spinner that should not flash). A streamed answer (``ResponseChunks``, an event stream) goes on
/// counting once its head is delivered, as a call of its own (another ``ActivityEvent/Call/id``,
/// never blocking the user), until its transfer ends: an open event stream keeps the count above 0
/// while it is connected (not while it waits to reconnect). Share one instance between
/// repositories (``NetworkActivity/shared`` is the default of every configuration).
///
/// Each stream runs until the instance is released (`shared`, never), so give each loop a task:
///
/// ```swift
/// Task { @MainActor in
///     for await count in NetworkActivity.shared.updates() {
///         spinner.isHidden = count == 0
///     }
/// }
/// Task { @MainActor in
///     for await event in NetworkActivity.shared.events() where event.preventsUserInteraction {
///         switch event.kind {
///         case .slow: showOverlay()          // still running after slowCallDelay (4 s)
///         case .finished: hideOverlay()
///         case .started: break
///         }
///     }
/// }
/// ```
///
/// Thread-safe.
public final class NetworkActivity: Sendable {
    private struct State {
        var inFlight = 0
        var running: Set<UUID> = []
        var counts = Subscribers<Int>()
        var events = Subscribers<ActivityEvent>()
    }

    /// The instance configurations use unless told otherwise.
    public static let shared = NetworkActivity()

    /// How long a call that prevents user interaction runs before a ``ActivityEvent/Kind/slow``
    /// event is reported for it, in seconds. Default 4 (WebApiClient's).
    public let slowCallDelay: TimeInterval

    private let state = Mutex(State())

    /// Creates a separate counter. A `slowCallDelay` that is negative or NaN is zero.
    public init(slowCallDelay: TimeInterval = 4) {
        self.slowCallDelay = slowCallDelay >= 0 ? slowCallDelay : 0
    }

    deinit {
        let (counts, events) = state.withLock { ($0.counts, $0.events) }
        counts.finishAll()
        events.finishAll()
    }

    /// The number of requests in flight now.
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// The current count at once, then every change. Each call returns a new stream; it ends when
    /// the activity is released or the consuming task is cancelled.
    public func updates() -> AsyncStream<Int> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(64))
        let id = state.withLock { state -> Int in
            continuation.yield(state.inFlight)
            return state.counts.add(continuation)
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.counts.remove(id) }
        }
        return stream
    }

    /// Every call's start and end (and, for calls that prevent user interaction, a `slow` event
    /// when they run long), from now on. Each call returns a new stream.
    ///
    /// Nothing is dropped, however far the reader falls behind (an overlay that missed a call's
    /// end would never hide), so events wait in memory until read: read the stream for as long
    /// as it is kept, or let it go.
    public func events() -> AsyncStream<ActivityEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ActivityEvent.self, bufferingPolicy: .unbounded)
        let id = state.withLock { $0.events.add(continuation) }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.events.remove(id) }
        }
        return stream
    }

    /// Notes a call's start; ``end(_:)`` must follow.
    func begin(_ call: ActivityEvent.Call) {
        state.withLock { state in
            state.inFlight += 1
            state.running.insert(call.id)
            state.counts.yield(state.inFlight)
            state.events.yield(ActivityEvent(kind: .started, call: call))
        }
    }

    /// Notes that a call still runs after ``slowCallDelay``, unless it has ended.
    func slow(_ call: ActivityEvent.Call) {
        state.withLock { state in
            guard state.running.contains(call.id) else { return }
            state.events.yield(ActivityEvent(kind: .slow, call: call))
        }
    }

    /// Notes a call's end.
    func end(_ call: ActivityEvent.Call) {
        state.withLock { state in
            state.inFlight -= 1
            state.running.remove(call.id)
            state.counts.yield(state.inFlight)
            state.events.yield(ActivityEvent(kind: .finished, call: call))
        }
    }
}

/// A call starting, running long, or ending, as ``NetworkActivity/events()`` reports it.
public struct ActivityEvent: Sendable, Hashable {
    /// What happened.
    public enum Kind: Sendable, Hashable {
        /// The call started.
        case started
        /// A call that prevents user interaction still runs after ``NetworkActivity/slowCallDelay``.
        case slow
        /// The call ended (successfully or not).
        case finished
    }

    /// The call an event is about.
    public struct Call: Sendable, Hashable {
        /// Identifies the call across its events.
        public let id: UUID
        /// The route's (or endpoint's) name, when it has one.
        public let name: String?
        /// Whether the app should keep the user from interacting while it runs
        /// (``Route/preventUserInteraction``).
        public let preventsUserInteraction: Bool
    }

    /// What happened.
    public let kind: Kind
    /// The call.
    public let call: Call

    /// The route's (or endpoint's) name, when it has one.
    public var name: String? { call.name }
    /// Whether the call prevents user interaction.
    public var preventsUserInteraction: Bool { call.preventsUserInteraction }
}

import Foundation
import Synchronization

/// A `text/event-stream` response read as events while it arrives (server-sent events): a
/// streaming completion's tokens, a feed of changes, a job's progress.
///
/// ```swift
/// struct Delta: Decodable { var text: String }
///
/// func complete(_ prompt: String) async throws {
///     let events = try await repository.performRequest(
///         Endpoint<ServerSentEvents>(.post, "completions", parameters: ["prompt": prompt, "stream": true])).get()
///     for try await event in events where event.data != "[DONE]" {
///         print(try event.decoded(as: Delta.self).text, terminator: "")
///     }
/// }
/// ```
///
/// The call returns once a 2xx head with `Content-Type: text/event-stream` is in; any other
/// answer fails as a call does (a 2xx of another type with
/// ``RepositoryError/invalidResponse(reason:context:)``). The sequence then yields each event as
/// its blank line arrives, parsed as the WHATWG specification says (any line ending, a byte order
/// mark, comments, `id`, `retry`). Without a ``NetworkingConfiguration/timeout`` of the endpoint's
/// own, an event stream has none: it may stay open as long as the server keeps it.
///
/// **When the stream ends.** By default the sequence ends with the body, or throws the call's
/// error when the connection breaks. An endpoint made with
/// ``Endpoint/reconnecting(after:maximumAttempts:)`` reconnects instead, as a browser's
/// `EventSource` does: after the delay (or the server's `retry:`), it sends the request again with
/// `Last-Event-ID`, and the sequence goes on with the new connection's events. Only a clean end or
/// a lost connection reconnect; a non-2xx answer ends the sequence with its error, and a
/// `204 No Content` ends it normally (a server's way to say "no more").
///
/// Reading follows ``ResponseChunks``: one task at a time, a bounded amount of unread data, and
/// dropping the sequence or cancelling the reading task cancels the transfer. An event (its lines
/// and the line being read) may hold at most ``maximumEventSize`` bytes: a larger one ends the
/// sequence with ``RepositoryError/responseTooLarge(limit:context:)``.
public final class ServerSentEvents: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent
    public typealias Failure = RepositoryError

    /// The most bytes one event, with its field names and the line being read, may hold: 8 MiB.
    public static let maximumEventSize = 8 * 1024 * 1024

    /// Opens the stream again, with the last event ID; `nil` when the server answers 204.
    typealias Connect = @Sendable (_ lastEventID: String?) async -> Result<ResponseChunks?, RepositoryError>

    private struct State {
        /// The connection being read, if any.
        var chunks: ResponseChunks?
        var iterated = false
        var cancelled = false
    }

    private let state: Mutex<State>
    private let reconnection: Reconnection?
    private let connect: Connect
    private let clock: NetworkingClock
    private let request: RequestSummary

    init(
        first: ResponseChunks?, request: RequestSummary, reconnection: Reconnection?, clock: NetworkingClock,
        connect: @escaping Connect
    ) {
        state = Mutex(State(chunks: first))
        self.request = request
        self.reconnection = reconnection
        self.clock = clock
        self.connect = connect
    }

    /// Cancels the transfer and any reconnection; a reader waiting for an event gets
    /// ``RepositoryError/cancelled(_:)`` (one waiting to reconnect, once its wait is over).
    /// Cancelling the reading task does the same, at once.
    public func cancel() {
        state.withLock { state in
            state.cancelled = true
            return state.chunks
        }?.cancel()
    }

    public func makeAsyncIterator() -> Iterator {
        let isFirst = state.withLock { state in
            defer { state.iterated = true }
            return !state.iterated
        }
        return Iterator(events: self, isFirst: isFirst)
    }

    /// The connection being read; `nil` before a reconnection, or once cancelled.
    fileprivate var chunks: ResponseChunks? {
        state.withLock { $0.cancelled ? nil : $0.chunks }
    }

    /// Makes `chunks` the connection being read; `false` (and cancels them) once cancelled.
    fileprivate func read(_ chunks: ResponseChunks?) -> Bool {
        let cancelled = state.withLock { state in
            state.chunks = state.cancelled ? nil : chunks
            return state.cancelled
        }
        if cancelled { chunks?.cancel() }
        return !cancelled
    }

    fileprivate var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// How an ended or broken event stream is opened again: see
    /// ``Endpoint/reconnecting(after:maximumAttempts:)``.
    public struct Reconnection: Sendable, Hashable {
        /// The wait before each attempt, until the server sets its own with `retry:`.
        public var delay: Duration
        /// How many attempts in a row may bring no event (find no connection, or a connection
        /// that ends before an event) before the sequence gives up: with the last attempt's error,
        /// or at the end of a stream that ended cleanly.
        public var maximumAttempts: Int

        /// Reconnects after `delay`, giving up after `maximumAttempts` attempts in a row without
        /// an event.
        public init(delay: Duration, maximumAttempts: Int) {
            self.delay = delay
            self.maximumAttempts = maximumAttempts
        }
    }

    /// Reads the events in order, reconnecting when the endpoint asks for it.
    public struct Iterator: AsyncIteratorProtocol {
        private let events: ServerSentEvents
        private var parser = ServerSentEventParser(maximumEventSize: ServerSentEvents.maximumEventSize)
        private var pending: [ServerSentEvent] = []
        private var nextPending = 0
        private var finished = false
        /// Reconnections in a row that brought no event, and the last one's error.
        private var failedAttempts = 0
        private var lastFailure: RepositoryError?
        /// Why this iterator yields nothing (the sequence was iterated before).
        private let refusal: RepositoryError?

        fileprivate init(events: ServerSentEvents, isFirst: Bool) {
            self.events = events
            refusal =
                isFirst
                ? nil : .invalidRequest(reason: "a ServerSentEvents sequence is read once, by one task", request: events.request)
            // A 204 to the first request: nothing to read, nothing to reconnect to.
            finished = isFirst && events.chunks == nil && !events.isCancelled
        }

        public mutating func next() async throws(RepositoryError) -> ServerSentEvent? {
            if let refusal { throw refusal }
            while true {
                if nextPending < pending.count {
                    defer { nextPending += 1 }
                    return pending[nextPending]
                }
                if finished { return nil }
                if events.isCancelled { try fail(.cancelled(ErrorContext(request: events.request))) }
                guard let chunks = events.chunks else {
                    try await reconnect()
                    continue
                }
                let chunk: Data?
                do throws(RepositoryError) {
                    var reader = chunks.makeAsyncIterator()
                    chunk = try await reader.next()
                } catch {
                    try connectionEnded(error)
                    continue
                }
                guard let chunk else {
                    try connectionEnded(nil)
                    continue
                }
                do throws(ServerSentEventParser.Failure) {
                    pending = try parser.parse(chunk)
                    nextPending = 0
                } catch {
                    chunks.cancel()
                    try fail(.responseTooLarge(limit: ServerSentEvents.maximumEventSize, context: ErrorContext(request: events.request)))
                }
                if !pending.isEmpty {
                    failedAttempts = 0
                    lastFailure = nil
                }
            }
        }

        /// Ends the sequence after what is pending.
        private mutating func finish() {
            finished = true
            _ = events.read(nil)
        }

        /// Ends the sequence with `error`.
        private mutating func fail(_ error: RepositoryError) throws(RepositoryError) -> Never {
            finish()
            throw error
        }

        /// The connection ended, cleanly (`nil`) or with `error`: the sequence ends, fails, or
        /// goes on to reconnect.
        private mutating func connectionEnded(_ error: RepositoryError?) throws(RepositoryError) {
            _ = events.read(nil)
            parser.reset()
            guard let reconnection = events.reconnection, error.map(Self.isLostConnection) ?? true else {
                if let error { try fail(error) }
                return finish()
            }
            if let error { lastFailure = error }
            guard failedAttempts < reconnection.maximumAttempts else {
                if let failure = lastFailure {
                    try fail(failure)
                } else if failedAttempts > 0 {
                    try fail(
                        .invalidResponse(
                            reason: "the event stream ended without an event \(failedAttempts) times in a row",
                            context: ErrorContext(request: events.request)))
                }
                return finish()
            }
        }

        /// Waits the reconnection time, then opens the stream again with the last event ID.
        private mutating func reconnect() async throws(RepositoryError) {
            guard let reconnection = events.reconnection else { return finish() }
            do {
                try await events.clock.sleep(parser.reconnectionDelay ?? reconnection.delay)
            } catch {
                try fail(.cancelled(ErrorContext(request: events.request)))
            }
            if events.isCancelled { try fail(.cancelled(ErrorContext(request: events.request))) }
            failedAttempts += 1
            switch await events.connect(parser.lastEventID.isEmpty ? nil : parser.lastEventID) {
            case .success(let chunks?):
                guard events.read(chunks) else { try fail(.cancelled(ErrorContext(request: events.request))) }
            case .success(nil):
                finish()
            case .failure(let error):
                try connectionEnded(error)
            }
        }

        /// Whether `error` says the connection was lost or never made (reconnecting may help), as
        /// opposed to an answer, a refusal or a cancellation.
        private static func isLostConnection(_ error: RepositoryError) -> Bool {
            switch error {
            case .noNetworkConnection, .timeout: true
            default: false
            }
        }
    }
}

extension Endpoint where Response == ServerSentEvents {
    /// A copy that reconnects when the event stream ends or its connection is lost, as a browser's
    /// `EventSource` does, sending the last event ID as `Last-Event-ID`.
    ///
    /// - Parameters:
    ///   - delay: the wait before each attempt; a `retry:` field of the server's replaces it.
    ///   - maximumAttempts: how many attempts in a row may fail (find no connection, or a
    ///     connection that ends before any byte) before the sequence fails; default 5.
    ///
    /// Reconnect only what is safe to send again: a feed's `GET`, not a `POST` that starts work.
    public func reconnecting(after delay: Duration = .seconds(3), maximumAttempts: Int = 5) -> Endpoint {
        with(ServerSentEventsReconnection.self, ServerSentEvents.Reconnection(delay: delay, maximumAttempts: maximumAttempts))
    }
}

/// The option ``Endpoint/reconnecting(after:maximumAttempts:)`` sets.
enum ServerSentEventsReconnection: RequestOptionKey {
    static let defaultValue: ServerSentEvents.Reconnection? = nil
}

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
/// The call returns once a 200 head with `Content-Type: text/event-stream` is in; any other
/// answer fails as a call does (another 2xx, or a 200 of another type, with
/// ``RepositoryError/invalidResponse(reason:context:)``; a 204 is an empty sequence). The sequence then yields each event as
/// its blank line arrives, parsed as the WHATWG specification (and a browser's `EventSource`)
/// says: any line ending, a byte order mark, comments, `id`, `retry`.
///
/// **The timeout is an idle timeout.** The endpoint's `timeout` (or the configuration's) bounds
/// the wait for the head once the request is sent and every silence between bytes, not the whole
/// stream, which may stay open as long as the server keeps it. Comments count: a server that sends
/// a heartbeat (`: ping`) more often than the timeout keeps a quiet stream open, and a connection
/// that went dead without a word (a network change, a NAT that forgot it) ends with
/// ``RepositoryError/timeout(_:)``, or reconnects. An endpoint timeout of `.infinity` waits
/// forever.
///
/// **When the stream ends.** By default the sequence ends with the body, or throws the call's
/// error when the connection breaks. An endpoint made with
/// ``Endpoint/reconnecting(after:maximumAttempts:maximumDelay:backsOff:onConnectionChange:)`` reconnects instead, as an `EventSource` does:
/// after a clean end or a broken connection it waits (the server's `retry:` wins over the delay,
/// up to ``Reconnection/maximumDelay``, and at least ``Reconnection/shortestServerDelay`` unless
/// the delay is shorter; a failed attempt's `Retry-After` is waited too, up to the same limit;
/// with ``Reconnection/backsOff``, waits double with each failed attempt and are spread at random),
/// sends the request again with `Last-Event-ID` (the ID of the last event received whole, or
/// the endpoint's own `Last-Event-ID` until an event brings one), and the sequence goes on with
/// the new connection's events. A `204 No Content` ends it normally (a server's way to say "no
/// more"); a failed attempt (see ``Reconnection/maximumAttempts``) is retried; any other answer
/// ends the sequence with its error. The first request is not repeated: its failure is the
/// call's.
///
/// Reading follows ``ResponseChunks``: the sequence is read once, a bounded amount of unread data
/// waits, and dropping the sequence or its iterator (leaving the loop), or cancelling the reading
/// task, cancels the transfer. An open stream counts as a call in flight for
/// ``NetworkActivity`` while its body is read. An event (its data and the line being read) may
/// hold at most ``maximumEventSize`` bytes: a larger one ends the sequence, after the events
/// before it, with ``RepositoryError/invalidResponse(reason:context:)`` (it does not reconnect),
/// as a line too long ends ``ResponseLines``.
public final class ServerSentEvents: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent
    public typealias Failure = RepositoryError

    /// The most bytes one event, its data and the line being read, may hold: 8 MiB.
    public static let maximumEventSize = 8 * 1024 * 1024

    /// How long a connection must have kept bringing bytes for its end not to count as a failed
    /// attempt, when it brought no event (a quiet feed the server or a load balancer recycles):
    /// 30 s (``ServerSentEventsHealthyConnection``; tests shorten it).
    let healthyConnection: Duration

    /// Opens the stream again, with the last event ID, its sink reporting to `wire`; `nil` when
    /// the server answers 204.
    typealias Connect = @Sendable (_ lastEventID: String?, _ wire: WireActivity) async -> Result<ResponseChunks?, RepositoryError>

    private struct State {
        /// The connection being read, if any.
        var chunks: ResponseChunks?
        /// Cancels a reconnection's wait or request, which `cancel()` must reach.
        var pending: (@Sendable () -> Void)?
        var iterated = false
        var cancelled = false
    }

    private let state: Mutex<State>
    private let reconnection: Reconnection?
    /// A random number in `0..<1`, for the spread of a backing-off wait.
    private let random: @Sendable () -> Double
    /// Told when a reconnection begins and when it is accepted.
    private let onConnectionChange: ConnectionHandler?
    private let connect: Connect
    private let clock: NetworkingClock
    /// The longest silence before the connection counts as lost; `nil`: none.
    let idleTimeout: Duration?
    let request: RequestSummary
    /// The `Last-Event-ID` the endpoint set, the stream's until an event brings its own.
    let startingEventID: String

    init(
        first: ResponseChunks?, request: RequestSummary, reconnection: Reconnection?, idleTimeout: Duration?,
        startingEventID: String, healthyConnection: Duration, clock: NetworkingClock,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        onConnectionChange: ConnectionHandler? = nil, connect: @escaping Connect
    ) {
        state = Mutex(State(chunks: first))
        self.random = random
        self.onConnectionChange = onConnectionChange
        self.healthyConnection = healthyConnection
        self.request = request
        self.startingEventID = startingEventID
        self.reconnection = reconnection
        self.idleTimeout = idleTimeout
        self.clock = clock
        self.connect = connect
    }

    /// Cancels the transfer and any reconnection (its wait included); a reader waiting for an
    /// event gets ``RepositoryError/cancelled(_:)``. Cancelling the reading task does the same.
    public func cancel() {
        let (chunks, pending) = state.withLock { state in
            state.cancelled = true
            return (state.chunks, state.pending)
        }
        chunks?.cancel(waking: .cancelled(ErrorContext(request: request)))
        pending?()
    }

    public func makeAsyncIterator() -> Iterator {
        let isFirst = state.withLock { state in
            defer { state.iterated = true }
            return !state.iterated
        }
        return Iterator(events: self, isFirst: isFirst)
    }

    /// The connection being read (`nil` before a reconnection), or `nil` and `true` once cancelled.
    fileprivate var current: (chunks: ResponseChunks?, cancelled: Bool) {
        state.withLock { ($0.cancelled ? nil : $0.chunks, $0.cancelled) }
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

    /// Whether a reconnection is waiting or connecting (for tests).
    var isReconnecting: Bool { state.withLock { $0.pending != nil } }

    /// Runs `operation` (a reconnection's wait or request) in a task that `cancel()` and the
    /// reading task's cancellation reach; `nil` when it threw. Check ``current`` after it.
    fileprivate func cancellable<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async -> T? {
        let task = Task { try await operation() }
        let cancelled = state.withLock { state in
            if !state.cancelled { state.pending = { task.cancel() } }
            return state.cancelled
        }
        if cancelled { task.cancel() }
        defer { state.withLock { $0.pending = nil } }
        return await withTaskCancellationHandler {
            try? await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// `operation`'s result, or ``RepositoryError/timeout(_:)`` (and `operation` cancelled) when
    /// `limit` passes first: the wait for an answer (the next bytes are watched by their sink,
    /// ``ChunkSink/next(idleLimit:timeout:)``). When `wire` (the
    /// call's) saw a head, bytes or the end meanwhile, they came in time and only the task was
    /// slow to run (a busy cooperative pool): the timer starts over instead. The wait for an
    /// answer counts from its request's sending: steps before it (the pipeline's, a busy pool's)
    /// are not the server's silence, and a request not sent yet is not late.
    static func within<T: Sendable>(
        _ limit: Duration?, request: RequestSummary, wire: WireActivity,
        _ operation: @escaping @Sendable () async -> Result<T, RepositoryError>
    ) async -> Result<T, RepositoryError> {
        guard let limit else { return await operation() }
        let before = wire.reading
        // Real time, as a transport's timeout: a silence on the wire, not a wait the library chose.
        return await withTaskGroup(of: WatchedOutcome<T>.self) { group in
            group.addTask { .done(await operation()) }
            group.addTask {
                var seen = before
                var wait = limit
                while true {
                    guard (try? await Task.sleep(for: wait)) != nil else { return .overruled }
                    wait = limit
                    // Bytes came in time: the reader has them; watch the next silence.
                    let reading = wire.reading
                    if reading != seen {
                        seen = reading
                        continue
                    }
                    // Silence, counted from the request's sending when that came later (a retry, a
                    // busy pool before it), and not at all before the first.
                    guard let sentAt = wire.sentAt else {
                        if reading == 0 { continue }
                        return .timedOut
                    }
                    let due = sentAt + limit
                    guard due <= .now else {
                        wait = ContinuousClock.now.duration(to: due)
                        continue
                    }
                    return .timedOut
                }
            }
            while let outcome = await group.next() {
                switch outcome {
                case .done(let result):
                    group.cancelAll()
                    return result
                case .overruled:
                    continue
                case .timedOut:
                    // Cancelled, the operation ends its transfer: whatever it brings back is dropped.
                    group.cancelAll()
                    return .failure(.timeout(ErrorContext(request: request)))
                }
            }
            return .failure(.cancelled(ErrorContext(request: request)))
        }
    }

    /// How an ended or broken event stream is opened again: see
    /// ``Endpoint/reconnecting(after:maximumAttempts:maximumDelay:backsOff:onConnectionChange:)``.
    public struct Reconnection: Sendable, Hashable {
        /// The wait before each attempt, until the server sets its own with `retry:` (no shorter
        /// than ``shortestServerDelay``, unless this is).
        public var delay: Duration
        /// How many attempts in a row may fail before the sequence gives up: with the last
        /// attempt's error (no connection, a 502, 503 or 504), or with
        /// ``RepositoryError/invalidResponse(reason:context:)`` when its connection ended
        /// without an event. An attempt fails when it finds no connection (or no network for the
        /// token refresh it needed), is answered 502, 503 or 504, times out, or its connection
        /// ends without bringing an event, unless it kept bringing bytes (heartbeats) for
        /// 30 seconds: a quiet feed its server recycles. An event resets the count.
        public var maximumAttempts: Int
        /// The longest wait a server's `retry:` may set: a longer one is cut to it, or to
        /// ``delay`` when that is longer. A server asks for a longer wait to shed load, but a
        /// `retry:` of years (a bug, or a hostile server) would otherwise park the reader until
        /// its task is cancelled. ``delay`` itself is not cut.
        public var maximumDelay: Duration
        /// Whether waits grow after failed attempts and are spread at random: each failed attempt
        /// in a row doubles the wait (``delay``, or the server's `retry:`), up to
        /// ``maximumDelay``, and every wait is drawn between half of it and all of it, never below
        /// ``shortestServerDelay`` (unless ``delay`` is; a zero delay stays zero; the draw is
        /// the configuration's `retryPolicy.random`); a failed attempt's `Retry-After` is spread
        /// above itself instead (up to half as long again, within ``maximumDelay``), never below.
        /// So the clients of a server that restarted neither come back all at once nor keep
        /// knocking every few seconds while it is down.
        /// Default `false`: every wait is ``delay`` or the server's `retry:`, as a browser's
        /// `EventSource` waits.
        public var backsOff: Bool

        /// The shortest wait a server's `retry:` may set, unless ``delay`` is shorter: a
        /// `retry: 0` on a stream that sends an event and closes would otherwise reconnect in a
        /// tight loop (each event resets the count of failed attempts).
        public static let shortestServerDelay = Duration.milliseconds(250)

        /// Reconnects after `delay`, giving up after `maximumAttempts` failed attempts in a row;
        /// a server's `retry:` waits at most `maximumDelay`; with `backsOff`, waits grow and are
        /// spread (see ``backsOff``).
        public init(delay: Duration, maximumAttempts: Int, maximumDelay: Duration = .seconds(300), backsOff: Bool = false) {
            self.delay = delay
            self.maximumAttempts = maximumAttempts
            self.maximumDelay = maximumDelay
            self.backsOff = backsOff
        }
    }

    /// What happened to the connection of a stream that reconnects: for a "Reconnecting…" line
    /// while events pause.
    public enum ConnectionChange: Sendable {
        /// The connection ended — cleanly (`cause` is `nil`), or with `cause` — or an attempt to
        /// open it again failed, and the stream opens again after `delay`. `attempt` counts the
        /// attempts since the last event (1 for the first).
        case reconnecting(attempt: Int, after: Duration, cause: RepositoryError?)
        /// A reconnection was accepted: its events follow.
        case reconnected
    }

    /// Told of a stream's ``ConnectionChange``s, in the task that reads the events, before the
    /// wait begins and once a reconnection is accepted.
    public typealias ConnectionHandler = @Sendable (ConnectionChange) -> Void

    /// Reads the events in order, reconnecting when the endpoint asks for it.
    public struct Iterator: AsyncIteratorProtocol {
        private let events: ServerSentEvents
        private var parser: ServerSentEventParser
        private var pending: [ServerSentEvent] = []
        private var nextPending = 0
        private var finished = false
        /// Reconnections in a row that failed, and the last one's error.
        private var failedAttempts = 0
        private var lastFailure: RepositoryError?
        /// How the last connection or attempt ended: `nil` when cleanly.
        private var endedWith: RepositoryError?
        /// The wait, in seconds, the last attempt's answer asked for with `Retry-After`.
        private var askedToWait: TimeInterval?
        /// When the connection being read was accepted.
        private var connectedAt = ContinuousClock.now
        /// When the connection being read last brought bytes.
        private var lastBytesAt = ContinuousClock.now
        /// Cancels the transfer when the (only valid) iterator goes away: a loop left early.
        private let owner: Owner?
        /// Why this iterator yields nothing (the sequence was iterated before).
        private let refusal: RepositoryError?
        /// The error that ends the sequence once the pending events are read.
        private var failure: RepositoryError?

        fileprivate init(events: ServerSentEvents, isFirst: Bool) {
            self.events = events
            parser = ServerSentEventParser(
                maximumEventSize: ServerSentEvents.maximumEventSize, lastEventID: events.startingEventID)
            owner = isFirst ? Owner(events) : nil
            refusal =
                isFirst ? nil : .invalidRequest(reason: "a ServerSentEvents sequence is read once", request: events.request)
            // A 204 to the first request: nothing to read, nothing to reconnect to.
            let current = events.current
            finished = isFirst && current.chunks == nil && !current.cancelled
        }

        public mutating func next() async throws(RepositoryError) -> ServerSentEvent? {
            if let refusal { throw refusal }
            // A cancelled reader (its task, or `cancel()`) gets no more of what was buffered or
            // parsed, nor an error that was to follow them: the stream ends now.
            if Task.isCancelled || events.current.cancelled, !finished || nextPending < pending.count || failure != nil {
                events.cancel()
                pending.removeAll()
                nextPending = 0
                failure = nil
                try fail(.cancelled(ErrorContext(request: events.request)))
            }
            while true {
                if nextPending < pending.count {
                    defer { nextPending += 1 }
                    return pending[nextPending]
                }
                if let failure {
                    self.failure = nil
                    throw failure
                }
                if finished { return nil }
                let current = events.current
                if current.cancelled { try fail(.cancelled(ErrorContext(request: events.request))) }
                guard let chunks = current.chunks else {
                    try await reconnect()
                    continue
                }
                // The sink watches the silence itself: one timer per connection, not a task per chunk.
                let timeout = RepositoryError.timeout(ErrorContext(request: events.request))
                let idleTimeout = events.idleTimeout
                let cancelled = RepositoryError.cancelled(ErrorContext(request: events.request))
                let read = await withTaskCancellationHandler {
                    await chunks.sink.next(idleLimit: idleTimeout, timeout: timeout)
                } onCancel: {
                    chunks.cancel(waking: cancelled)
                }
                let chunk: Data?
                switch read {
                case .success(let data): chunk = data
                case .failure(.invalidRequest(let reason, let request)):
                    // Another copy of this iterator is reading: its transfer is not this one's to end.
                    throw .invalidRequest(reason: reason, request: request)
                case .failure(let error):
                    chunks.cancel()
                    try connectionEnded(error, midBody: true)
                    continue
                }
                guard let chunk else {
                    try connectionEnded(nil, midBody: true)
                    continue
                }
                if !chunk.isEmpty { lastBytesAt = .now }
                pending.removeAll(keepingCapacity: true)
                nextPending = 0
                do throws(ServerSentEventParser.Failure) {
                    try parser.parse(chunk, into: &pending)
                } catch {
                    // The events the chunk completed before the one too large are delivered first.
                    chunks.cancel()
                    finish()
                    failure = .invalidResponse(
                        reason: "an event of the stream is larger than \(ServerSentEvents.maximumEventSize) bytes",
                        context: ErrorContext(request: events.request))
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

        /// The connection ended, cleanly (`nil`) or with `error` (`midBody`: after its head was
        /// accepted): the sequence ends, fails, or goes on to reconnect.
        private mutating func connectionEnded(_ error: RepositoryError?, midBody: Bool) throws(RepositoryError) {
            _ = events.read(nil)
            parser.reset()
            endedWith = error
            // An answer refused before its body (a 503) may say when to come back; a body that broke
            // was a 200's.
            askedToWait =
                midBody ? nil : error?.context?.response.flatMap { RetryPolicy.retryAfter(in: $0, now: events.clock.now()) }
            guard let reconnection = events.reconnection, error.map({ Self.isTransient($0, midBody: midBody) }) ?? true else {
                if let error { try fail(error) }
                return finish()
            }
            // The last attempt's end is the one reported: a clean end after an earlier 503 too.
            lastFailure = error
            // A connection that kept bringing bytes (heartbeats) for a while was a good one: a quiet
            // feed its server recycles. One that fell silent early (a proxy holding the body back)
            // was not, however long the idle timeout let it stay.
            if midBody, connectedAt.duration(to: lastBytesAt) >= events.healthyConnection {
                failedAttempts = 0
            }
            guard failedAttempts < reconnection.maximumAttempts else {
                if let failure = lastFailure {
                    try fail(failure)
                } else if failedAttempts > 0 {
                    try fail(
                        .invalidResponse(
                            reason:
                                "the event stream's connection ended without an event, after \(failedAttempts) failed attempts in a row",
                            context: ErrorContext(request: events.request)))
                }
                return finish()
            }
        }

        /// Waits the reconnection time, then opens the stream again with the last event ID; both
        /// steps end at once, with ``RepositoryError/cancelled(_:)``, on `cancel()`.
        private mutating func reconnect() async throws(RepositoryError) {
            guard let reconnection = events.reconnection else { return finish() }
            let clock = events.clock
            // A server asking for a longer wait than the endpoint's own never gets a shorter one,
            // nor, asking for a shorter one, less than ``Reconnection/shortestServerDelay``.
            let longest = Swift.max(reconnection.maximumDelay, reconnection.delay, .zero)
            let shortest = Swift.max(Swift.min(reconnection.delay, Reconnection.shortestServerDelay), .zero)
            var delay = parser.reconnectionDelay.map { Swift.min(Swift.max($0, shortest), longest) } ?? reconnection.delay
            // Drawn only when backing off: the draw is the retry policy's, whose own sequence a
            // test may script.
            var spread = reconnection.backsOff ? events.random() : nil
            if let draw = spread, !(0...1).contains(draw) { spread = draw.isNaN ? 1 : Swift.min(Swift.max(draw, 0), 1) }
            if let spread {
                // Doubled per failed attempt in a row (the factor stops at 2^20: past the longest
                // wait for any delay of a second or more), then drawn between half and all of it,
                // never below the shortest wait a server's `retry:` may set.
                let grown = Swift.min(delay.seconds * Double(1 << Swift.min(failedAttempts, 20)), longest.seconds)
                delay = Swift.max(.clampedSeconds(grown * (0.5 + 0.5 * spread)), shortest)
            }
            // A 503's (502's, 504's) `Retry-After` is the server's word for this attempt: waited, up to the
            // longest wait; backing off, spread above it (up to half as long again), never below.
            if let asked = askedToWait {
                let floor = asked * (1 + 0.5 * (spread ?? 0))
                delay = Swift.max(delay, Swift.min(.clampedSeconds(floor), longest))
                askedToWait = nil
            }
            let wait = delay
            events.onConnectionChange?(.reconnecting(attempt: failedAttempts + 1, after: wait, cause: endedWith))
            let slept = await events.cancellable { try await clock.sleep(wait) } != nil
            guard slept, !events.current.cancelled else { try fail(.cancelled(ErrorContext(request: events.request))) }
            failedAttempts += 1
            let (connect, limit, request) = (events.connect, events.idleTimeout, events.request)
            let lastEventID = parser.lastEventID.isEmpty ? nil : parser.lastEventID
            let opened = await events.cancellable {
                let wire = WireActivity(countsUpload: true)
                return await ServerSentEvents.within(limit, request: request, wire: wire) { await connect(lastEventID, wire) }
            }
            guard let opened, !events.current.cancelled else {
                if case .success(let chunks?) = opened { chunks.cancel() }
                try fail(.cancelled(ErrorContext(request: events.request)))
            }
            switch opened {
            case .success(let chunks?):
                guard events.read(chunks) else { try fail(.cancelled(ErrorContext(request: events.request))) }
                connectedAt = .now
                lastBytesAt = connectedAt
                events.onConnectionChange?(.reconnected)
            case .success(nil):
                finish()
            case .failure(let error):
                try connectionEnded(error, midBody: false)
            }
        }

        /// Whether reconnecting may help after `error`: any failure of a body under way but a
        /// cancellation or a reader too far behind (a transport's unread limit); before a head, no connection or a gateway's 5xx
        /// (mapped to a custom error or not).
        private static func isTransient(_ error: RepositoryError, midBody: Bool) -> Bool {
            switch error {
            case .cancelled, .responseTooLarge: false
            case .noNetworkConnection, .timeout: true
            case .requestError, .customError: [502, 503, 504].contains(error.statusCode ?? 0) || midBody
            // A reconnection's token refresh that found no network: as good as no connection.
            case .sessionRefreshFailed(.refresherFailed(let cause), _): isTransient(cause, midBody: midBody)
            case .sessionRefreshFailed(.timedOut, _): true
            default: midBody
            }
        }

        /// Cancels the sequence when the iterator that reads it is dropped.
        private final class Owner: Sendable {
            let events: ServerSentEvents
            init(_ events: ServerSentEvents) { self.events = events }
            deinit { events.cancel() }
        }
    }
}

extension Endpoint where Response == ServerSentEvents {
    /// A copy that reconnects when the event stream ends or its connection breaks, as a browser's
    /// `EventSource` does, sending the ID of the last event received whole as `Last-Event-ID`.
    ///
    /// - Parameters:
    ///   - delay: the wait before each attempt; a `retry:` field of the server's replaces it (never
    ///     below ``ServerSentEvents/Reconnection/shortestServerDelay``, or `delay` when shorter).
    ///   - maximumAttempts: how many attempts in a row may fail (find no connection, get a 502,
    ///     503 or 504, or a connection that ends without an event: see
    ///     ``ServerSentEvents/Reconnection/maximumAttempts``) before the sequence fails; default 5.
    ///   - maximumDelay: the longest wait a server's `retry:` (or a 503's `Retry-After`) may ask
    ///     for, or backing off may grow to; a longer one is cut to it (never below `delay`).
    ///     Default 5 minutes.
    ///   - backsOff: whether each failed attempt in a row doubles the wait and every wait is
    ///     drawn between half of it and all of it (``ServerSentEvents/Reconnection/backsOff``).
    ///     Default `false`.
    ///   - onConnectionChange: told when the stream waits to reconnect, and why, and when a
    ///     reconnection is accepted (``ServerSentEvents/ConnectionChange``), in the reading task.
    ///
    /// Reconnect only what is safe to send again: a feed's `GET`, not a `POST` that starts work.
    /// A streamed request body (``RequestBody/stream(_:length:)``) cannot be sent twice: such an
    /// endpoint fails with ``RepositoryError/invalidRequest(reason:request:)`` before sending.
    public func reconnecting(
        after delay: Duration = .seconds(3), maximumAttempts: Int = 5, maximumDelay: Duration = .seconds(300),
        backsOff: Bool = false, onConnectionChange: ServerSentEvents.ConnectionHandler? = nil
    ) -> Endpoint {
        with(
            ServerSentEventsReconnection.self,
            ServerSentEvents.Reconnection(
                delay: delay, maximumAttempts: maximumAttempts, maximumDelay: maximumDelay, backsOff: backsOff)
        )
        .with(ServerSentEventsConnectionHandler.self, onConnectionChange)
    }
}

/// The handler ``Endpoint/reconnecting(after:maximumAttempts:maximumDelay:backsOff:onConnectionChange:)`` sets.
enum ServerSentEventsConnectionHandler: RequestOptionKey {
    static let defaultValue: ServerSentEvents.ConnectionHandler? = nil
}

/// The option ``Endpoint/reconnecting(after:maximumAttempts:maximumDelay:backsOff:onConnectionChange:)`` sets.
enum ServerSentEventsReconnection: RequestOptionKey {
    static let defaultValue: ServerSentEvents.Reconnection? = nil
}

/// How long an event stream's connection must keep bringing bytes to count as healthy (see
/// ``ServerSentEvents/Reconnection/maximumAttempts``); tests shorten it.
enum ServerSentEventsHealthyConnection: RequestOptionKey {
    static let defaultValue = Duration.seconds(30)
}

/// How a watched wait ended: see `ServerSentEvents.within`.
private enum WatchedOutcome<T: Sendable>: Sendable {
    /// The operation finished first.
    case done(Result<T, RepositoryError>)
    /// The limit passed without a sign of life.
    case timedOut
    /// The timer stood down: the wait was cancelled.
    case overruled
}

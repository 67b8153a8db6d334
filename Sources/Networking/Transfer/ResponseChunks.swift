import Foundation
import Synchronization

/// A response body as it arrives, chunk by chunk: an asynchronous sequence of `Data` that a
/// caller reads while the transfer runs, for bodies too large to hold or that never end (logs,
/// server-sent events).
///
/// ```swift
/// func follow() async throws {
///     // The timeout covers the whole exchange: a body that never ends needs none (and a
///     // stream has no idle timeout but its endpoint's own: silence does not end it).
///     let log = try await repository.performRequest(Endpoint<ResponseChunks>(.get, "logs/live", timeout: .infinity)).get()
///     for try await chunk in log { print(String(decoding: chunk, as: UTF8.self), terminator: "") }
/// }
/// ```
///
/// At most about 1 MiB waits unread: beyond it, ``LibcurlTransport`` stops reading from the
/// network until the reader catches up. ``URLSessionTransport`` cannot pause, so it keeps
/// buffering, up to its ``URLSessionTransport/maximumResponseSize`` unread (100 MiB by default;
/// at least 4 MiB): a reader that falls further behind ends the transfer with
/// ``RepositoryError/responseTooLarge(limit:context:)`` after the chunks already in.
///
/// The sequence ends when the body is complete, or throws the call's ``RepositoryError`` when the
/// transfer fails midway. Dropping the sequence (or cancelling the
/// task that reads it) cancels the transfer; a cancelled reading task gets
/// ``RepositoryError/cancelled(_:)`` at once, not the chunks buffered before. It can be iterated once, by one task at a time: a
/// second task asking for a chunk while one waits gets ``RepositoryError/invalidRequest(reason:request:)``.
public final class ResponseChunks: AsyncSequence, Sendable {
    public typealias Element = Data
    public typealias Failure = RepositoryError

    let sink: ChunkSink
    private let transfer = Mutex<Task<Void, Never>?>(nil)

    init(method: HTTPMethod, unreadLimit: Int, wire: WireActivity = WireActivity()) {
        sink = ChunkSink(method: method, unreadLimit: unreadLimit, wire: wire)
    }

    deinit {
        transfer.withLock { $0 }?.cancel()
    }

    /// Keeps the task that drives the transfer, to cancel it when the sequence goes away.
    func drive(with task: Task<Void, Never>) {
        transfer.withLock { $0 = task }
    }

    /// Cancels the transfer; the sequence then ends with ``RepositoryError/cancelled(_:)`` once
    /// the transport stops, after the chunks already buffered (a body already whole ends as it
    /// is). Cancelling the reading task instead ends it at once, without them.
    public func cancel() {
        transfer.withLock { $0 }?.cancel()
    }

    /// Cancels the transfer and ends the body with `error` at once: a reader waiting for a chunk
    /// gets it without waiting for the transport to notice, and the chunks not read yet are
    /// dropped (a cancelled reader must not be handed a megabyte more first).
    func cancel(waking error: RepositoryError) {
        cancel()
        sink.abandon(error)
    }

    public func makeAsyncIterator() -> Iterator { Iterator(chunks: self) }

    /// Reads the chunks in order.
    public struct Iterator: AsyncIteratorProtocol {
        let chunks: ResponseChunks

        public mutating func next() async throws(RepositoryError) -> Data? {
            // Cancelling the reading task (before or during the wait) cancels the transfer and
            // wakes the read with `.cancelled`, dropping what was not read.
            let chunks = chunks
            return try await withTaskCancellationHandler {
                await chunks.sink.next()
            } onCancel: {
                chunks.cancel(waking: .cancelled(ErrorContext(request: chunks.sink.requestSummary)))
            }.get()
        }
    }
}

/// The buffer between a transport delivering a body and a caller reading ``ResponseChunks``.
final class ChunkSink: ResponseBodySink {
    /// What the caller waits for before the body: the accepted head, or how the call ended first.
    enum Start: Sendable {
        case head(ResponseHead)
        case ended(RepositoryError?)
    }

    fileprivate struct State {
        /// The unread chunks are `chunks[first...]`: taking one moves `first` instead of every
        /// chunk behind it.
        var chunks: [Data] = []
        var first = 0
        var buffered = 0
        var ended = false
        var failure: RepositoryError?
        var paused = false
        var resume: (@Sendable () -> Void)?
        var reader: CheckedContinuation<Result<Data?, RepositoryError>, Never>?
        var head: ResponseHead?
        /// Whether any body byte was taken (a retry from then on would repeat bytes).
        var delivered = false
        var startWaiter: CheckedContinuation<Start, Never>?
        /// The idle watch of a reader waiting with a limit (``next(idleLimit:timeout:)``).
        var idle: IdleWatch?
    }

    /// A reader's limit on silence, and the one timer that checks it: armed when a reader starts
    /// to wait with none running, it re-arms itself when the wait began (or a retry's head came)
    /// later, and is dropped when it finds nobody waiting. A stream that reads many chunks starts
    /// a timer once per limit, not once per chunk.
    fileprivate struct IdleWatch {
        var limit: Duration
        var timeout: RepositoryError
        /// When the waiting reader began to wait, or the transport last gave a sign of life
        /// since (a retry's head: bytes or the end hand themselves to the reader, ending the wait).
        var since: ContinuousClock.Instant
        var timer: DeadlineTimer?
        /// When the timer fires.
        var firesAt: ContinuousClock.Instant
    }

    /// Unread bytes beyond which the transport is asked to pause.
    static let highWater = 1024 * 1024
    /// The unread bytes a streaming transport that cannot pause (other than URLSession, held to
    /// its own `maximumResponseSize`) may buffer: the transports' default response limit.
    static let defaultUnreadLimit = 100 * 1024 * 1024

    private let state = Mutex(State())
    /// The call's method, for the context of a failure the sink finds itself.
    private let method: HTTPMethod
    /// The unread bytes beyond which a transport that cannot pause is stopped.
    private let unreadLimit: Int

    /// Told of every head, chunk and end.
    let wire: WireActivity

    init(method: HTTPMethod, unreadLimit: Int = .max, wire: WireActivity = WireActivity()) {
        self.method = method
        self.unreadLimit = unreadLimit
        self.wire = wire
    }

    func begin(_ head: ResponseHead, canPause: Bool, resume: @escaping @Sendable () -> Void) -> Bool {
        wire.bump()
        guard (200..<300).contains(head.statusCode) else { return false }
        let (waiter, reader, failure) = state.withLock {
            state -> (CheckedContinuation<Start, Never>?, CheckedContinuation<Result<Data?, RepositoryError>, Never>?, RepositoryError?) in
            state.resume = canPause ? resume : nil
            state.idle?.since = .now
            guard state.head == nil else {
                // A retry after bytes of this body were taken: its bytes would follow them and
                // repeat them, so the sequence fails instead (and refuses the bytes).
                guard state.delivered, !state.ended else { return (nil, nil, nil) }
                state.ended = true
                state.failure = .invalidResponse(
                    reason: "the connection broke after the streamed body had begun; a retry cannot resume it",
                    context: ErrorContext(request: RequestSummary(method: method, url: head.url ?? URL(fileURLWithPath: "/"))))
                defer { state.reader = nil }
                return (nil, state.hasUnread ? nil : state.reader, state.failure)
            }
            state.head = head
            defer { state.startWaiter = nil }
            return (state.startWaiter, nil, nil)
        }
        waiter?.resume(returning: .head(head))
        if let reader, let failure { reader.resume(returning: .failure(failure)) }
        return true
    }

    /// The call as the sink knows it, for the context of a failure its reader finds: the method,
    /// and the URL that answered.
    var requestSummary: RequestSummary {
        RequestSummary(method: method, url: state.withLock { $0.head?.url } ?? URL(fileURLWithPath: "/"))
    }

    /// Whether a 2xx head was taken (its body comes here, not in the response).
    var hasStarted: Bool { state.withLock { $0.head != nil } }

    /// Whether body bytes were taken: another attempt's body (a retry) would repeat them.
    var hasDelivered: Bool { state.withLock { $0.delivered } }

    /// Whether a reader waits for the next chunk (for tests).
    var hasWaitingReader: Bool { state.withLock { $0.reader != nil } }

    func receive(_ bytes: UnsafeRawBufferPointer) -> ResponseBodySinkStatus {
        wire.bump()
        let chunk = Data(bytes)
        let (status, reader) = state.withLock {
            state -> (ResponseBodySinkStatus, CheckedContinuation<Result<Data?, RepositoryError>, Never>?) in
            if state.ended { return (.failed(.cancelled), nil) }
            if state.resume != nil, state.buffered >= Self.highWater {
                state.paused = true
                return (.paused, nil)
            }
            if let reader = state.reader {
                state.delivered = true
                state.reader = nil
                return (.accepted, reader)
            }
            // A transport that cannot pause would fill memory while the reader lags behind.
            if state.resume == nil, state.buffered > unreadLimit - chunk.count {
                return (.failed(.responseTooLarge(limit: unreadLimit)), nil)
            }
            state.delivered = true
            state.chunks.append(chunk)
            state.buffered += chunk.count
            return (.accepted, nil)
        }
        reader?.resume(returning: .success(chunk))
        return status
    }

    /// The call ended: the sequence finishes after the buffered chunks, or fails with `error`.
    func end(_ error: RepositoryError?) {
        wire.bump()
        let (reader, waiter, failure) = state.withLock { state in
            // A failure found by the sink itself (see `begin`) stays the one the reader sees.
            if !state.ended { state.failure = error }
            state.ended = true
            state.idle = nil
            defer {
                state.reader = nil
                state.startWaiter = nil
            }
            return (state.hasUnread ? nil : state.reader, state.head == nil ? state.startWaiter : nil, state.failure)
        }
        reader?.resume(returning: failure.map { .failure($0) } ?? .success(nil))
        waiter?.resume(returning: .ended(failure))
    }

    /// The reader gave up (cancelled, or a line too long): the unread chunks are dropped and the
    /// body ends with `error` — also when it had arrived whole, so a cancelled reader never takes
    /// a cut body for a complete one. A failure the body had already ended with stays.
    func abandon(_ error: RepositoryError) {
        let (reader, waiter, failure) = state.withLock { state in
            state.chunks.removeAll()
            state.first = 0
            state.buffered = 0
            if state.failure == nil { state.failure = error }
            state.ended = true
            state.idle = nil
            defer {
                state.reader = nil
                state.startWaiter = nil
            }
            return (state.reader, state.head == nil ? state.startWaiter : nil, state.failure ?? error)
        }
        reader?.resume(returning: .failure(failure))
        waiter?.resume(returning: .ended(failure))
    }

    /// Waits for the accepted head, or for the end of a call that had none.
    func waitForStart() async -> Start {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Start? in
                if let head = state.head { return .head(head) }
                if state.ended { return .ended(state.failure) }
                state.startWaiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The next chunk, `nil` at the end; a failure when another reader is already waiting. With
    /// `idleLimit`, a wait with no head, bytes or end from the transport for that long ends the
    /// body with `timeout` (the reader gets it, later chunks are refused): decided under the
    /// sink's lock, so a chunk that arrives in time is never lost to the timer, and without the
    /// reading task, which the transport or a busy pool may keep from running.
    func next(idleLimit: Duration? = nil, timeout: RepositoryError? = nil) async -> Result<Data?, RepositoryError> {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<Data?, RepositoryError>, Never>) in
            let (ready, resume) = state.withLock { state -> (Result<Data?, RepositoryError>?, (@Sendable () -> Void)?) in
                if let chunk = state.takeFirst() {
                    guard state.paused, state.buffered < Self.highWater / 2 else { return (.success(chunk), nil) }
                    state.paused = false
                    return (.success(chunk), state.resume)
                }
                if state.ended { return (state.failure.map { .failure($0) } ?? .success(nil), nil) }
                guard state.reader == nil else {
                    return (.failure(.invalidRequest(reason: "a ResponseChunks is read by one task at a time", request: nil)), nil)
                }
                state.reader = continuation
                if let idleLimit, let timeout {
                    let now = ContinuousClock.now
                    // The running timer serves when it fires by this wait's limit; else a new one.
                    if let idle = state.idle, idle.timer != nil, idle.firesAt <= now + idleLimit {
                        state.idle = IdleWatch(limit: idleLimit, timeout: timeout, since: now, timer: idle.timer, firesAt: idle.firesAt)
                    } else {
                        state.idle = IdleWatch(
                            limit: idleLimit, timeout: timeout, since: now, timer: armIdleTimer(after: idleLimit), firesAt: now + idleLimit)
                    }
                } else {
                    state.idle = nil
                }
                guard state.paused else { return (nil, nil) }
                state.paused = false
                return (nil, state.resume)
            }
            resume?()
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

extension ChunkSink {
    /// A timer that checks the waiting reader's silence after `delay`.
    private func armIdleTimer(after delay: Duration) -> DeadlineTimer {
        DeadlineTimer(after: delay.seconds) { [weak self] in self?.checkIdle() }
    }

    /// The idle timer fired: the waiting reader times out when the transport has been silent for
    /// its limit since it began to wait; otherwise the timer waits out the rest, or goes.
    private func checkIdle() {
        let now = ContinuousClock.now
        let timedOut = state.withLock { state -> (CheckedContinuation<Result<Data?, RepositoryError>, Never>, RepositoryError)? in
            guard let idle = state.idle, let reader = state.reader, !state.ended else {
                state.idle?.timer = nil
                return nil
            }
            let due = idle.since + idle.limit
            guard due <= now else {
                state.idle?.timer = armIdleTimer(after: now.duration(to: due))
                state.idle?.firesAt = due
                return nil
            }
            state.idle = nil
            state.reader = nil
            state.ended = true
            state.failure = idle.timeout
            return (reader, idle.timeout)
        }
        if let (reader, timeout) = timedOut { reader.resume(returning: .failure(timeout)) }
    }
}

extension ChunkSink.State {
    var hasUnread: Bool { first < chunks.count }

    /// The oldest unread chunk, if any; the array sheds the chunks read once they are half of it.
    mutating func takeFirst() -> Data? {
        guard hasUnread else { return nil }
        let chunk = chunks[first]
        chunks[first] = Data()
        first += 1
        buffered -= chunk.count
        if first == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            first = 0
        } else if first >= 1024, first * 2 >= chunks.count {
            chunks.removeFirst(first)
            first = 0
        }
        return chunk
    }
}

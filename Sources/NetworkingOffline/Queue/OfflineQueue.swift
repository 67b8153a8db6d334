import Foundation
import Networking
import Synchronization

/// Keeps writes that fail because the network is down, on disk, and sends them later — in order,
/// each signed when it is sent with its own user's current token, each exactly once:
/// WANetworkRouting's offline queue without its bugs.
///
/// ```swift
/// let queue = try OfflineQueue(OfflineQueue.Configuration(folder: appSupport.appendingPathComponent("outbox")))
/// var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
/// configuration.interceptors.append(queue)
/// let notes = NotesRepository(configuration: configuration, sessionManager: session)
/// queue.connect(notes)
///
/// switch await queue.perform(Endpoint<Note>.post("notes", body: note), with: notes) {
/// case .sent(let saved): print("saved", saved.id)
/// case .queued(let later): print("offline: kept as", later.ticket)    // await later.result() if you like
/// case .failed(let error): print(error.localizedDescription)
/// }
/// ```
///
/// **Which calls.** Opt-in per call (``Networking/Endpoint/queueingOffline()``, or a route's `"offline": true`).
/// Such a call is sent with an `Idempotency-Key`; when it fails for the network — refused, lost,
/// host not found, not connected, timed out — or with a status listed in
/// ``Configuration/queuedStatusCodes`` (500 and 503 when you ask), it is kept and the caller gets
/// `.customError(name: "queuedOffline", error: QueuedOffline, …)` with a ticket (``perform(_:with:)->OfflineOutcome<T>``
/// turns that into ``OfflineOutcome/queued(_:)``). While earlier requests of the same user wait, a
/// new one waits behind them rather than overtaking them. Other failures (a 4xx) are the call's
/// own, and a full queue says so (``OfflineQueueFull``).
///
/// **Guarantees.** A request is reported as queued only after its journal record is on disk
/// (`fsync`; `F_FULLFSYNC` on Apple platforms): it survives a restart or a `kill -9` at any moment.
/// It keeps its `Idempotency-Key` on every send, so a request the server received just before a
/// crash, and that is sent again after it, is recognised — nothing delivered twice, given a server
/// that honours the key (IETF httpapi draft). Requests are stored unsigned (the queue runs before
/// the session signs): no token is ever written to disk, and each is signed when it is sent, with
/// its user's current token.
///
/// **Whose.** A request belongs to the user who queued it (`SessionAuthorizing.sessionIdentity`);
/// it is sent only while that user is logged in — never with another user's token. While another
/// user is logged in, ``Configuration/othersRequests`` decides at each flush: `.keep` them for when their user is
/// back (the default), or `.discard` them.
///
/// **Flushing.** In order, one by one (or through a Facebook-style batch endpoint when
/// ``Configuration/batch`` is set): before the next request that goes through the queue, when you
/// call ``flush()``, when ``connectivityChanged(isOnline:)`` says the network is back, when
/// ``connect(_:)`` finds requests a previous run left, and on a
/// timer with exponential backoff while the network stays down. While that timer runs, a new
/// call is not held back by a flush: a call's answer from the server (not a stored one) shows
/// the network is back and starts one; a write waits behind the kept ones. A call made while its
/// user logged out and another logged in during that first flush is never sent with the new
/// user's token: a write is kept for its user, another call fails with
/// `RepositoryError.unauthenticatedSession`. A request the server answers for
/// good (a 2xx, or another status not listed below) leaves the queue and its outcome goes to its waiters; one that fails for
/// the network (or a TLS failure, as a captive portal gives, or an invalid configuration, or gets a kept status, a 401, 407
/// (a proxy wants credentials), 408, 409 — its key still being processed — 425, 429, or a 5xx other than 501 and 505, a batch item's answer that
/// cannot be read, or an answer that is not valid HTTP, until the third in a row a minute or more
/// after the first) stays,
/// and the flush stops
/// there; a 401 to a request sent without the session is its answer for good. After each flush,
/// ``Configuration/onFlush`` hears what happened; ``remove(_:)`` takes out a request the server
/// keeps refusing, or ``Configuration/maximumRefusals`` gives such requests up by themselves.
///
/// A request that carries a credential of its own (an `Authorization`, `Proxy-Authorization` or
/// `Cookie` that is neither the session's nor the configuration's default) is not queued: the
/// credential would not be kept.
///
/// **Limits.** Outcomes are awaited in the process that queued the request (tickets do not
/// survive a restart; ``Configuration/onFlush`` reports every flush that sent or discarded something,
/// or could not: no repository connected, or a journal that cannot be written). Streamed bodies cannot be
/// kept, unless staged to compute their content digests (`StagedBodyFileKey`):
/// then their bytes are. With a batch endpoint, a request that fails for the network in the middle of a batch does
/// not hold back the later ones of that batch: those the server answered are done. One process
/// uses a queue folder at a time.
public final class OfflineQueue: Interceptor {
    /// What to do with the requests of other users, when the one logged in is someone else.
    public enum OthersRequests: Sendable, Hashable {
        /// Keep them until their user logs in again.
        case keep
        /// Remove them at the next flush that starts while no other runs (their waiters get an
        /// error; ``FlushReport/discarded`` lists them).
        case discard
    }

    /// Where the queue keeps its journal, and how it behaves.
    public struct Configuration: Sendable {
        /// The folder of the journal (created with mode 0700). One queue per folder.
        public var folder: URL
        /// The most requests kept at once. Default 1000.
        public var capacity: Int
        /// The most bytes the requests kept at once may take, as the journal writes them (a body
        /// held in memory as Base64, with the URL and headers; a file body by its path only):
        /// what the queue keeps in memory and on disk. Default 64 MiB; values below 1 mean 1. A
        /// request that would go over it is not kept (``OfflineQueueFull``); requests found in the
        /// journal at start all stay, even over a limit set lower since.
        public var maximumBytes: Int
        /// Statuses that keep a request instead of failing the call (for example 500 and 503).
        /// Default none: only network failures queue.
        public var queuedStatusCodes: Set<Int>
        /// What happens to other users' requests at a flush. Default ``OthersRequests/keep``.
        public var othersRequests: OthersRequests
        /// The wait before the first retry of a flush stopped by the network, in seconds. Default 1
        /// (also for NaN); values below 0.05 mean 0.05, so a flush that keeps stopping still pauses.
        public var retryDelay: TimeInterval
        /// The longest wait between flush retries, in seconds (at most a day; at least 0.05). Default
        /// 60 (also for NaN).
        public var maximumRetryDelay: TimeInterval
        /// The batch endpoint's path and item limit, to flush through it; `nil` (default) sends one by one.
        public var batch: (path: String, limit: Int)?
        /// How many times a request may be answered with a status the queue keeps (a 5xx, 429,
        /// 425, 409, 408, a 407, a 401, or one of ``queuedStatusCodes``), as a batch item's answer that cannot
        /// be read, or by the batch endpoint refusing the whole batch (a 413 to a batch of one — a
        /// larger batch is sent again in halves first, see `BatchClient`) before it is
        /// given up: it then leaves
        /// the queue with that answer (in ``FlushReport/rejected``, and to its waiters), so that one
        /// request the server never takes does not hold back its user's others for good. Failures
        /// of the network are not counted: a device offline for a week loses nothing. Counted
        /// within one run of the process; values below 1 mean 1. Default `nil`, no limit: a server
        /// failing for a while (a 503 through a long deploy) must not make the queue drop writes,
        /// so set a limit only when giving up is better for your API than waiting. An answer that
        /// is not valid HTTP (a proxy's broken reply, a redirect loop) is given up at the third
        /// in a row, the last at least a minute after the first, or at this limit's count of them.
        public var maximumRefusals: Int?
        /// The time source of the retry timer. Default the system clock. In tests,
        /// `NetworkingTestSupport`'s `TestClock` in its `.manual` mode fires the timer when the
        /// test moves the time past it.
        public var clock: NetworkingClock
        /// Told what each flush did.
        public var onFlush: (@Sendable (FlushReport) -> Void)?

        /// Creates a configuration; every argument but the folder has the documented default.
        public init(
            folder: URL, capacity: Int = 1000, maximumBytes: Int = 64 * 1024 * 1024, queuedStatusCodes: Set<Int> = [],
            othersRequests: OthersRequests = .keep, retryDelay: TimeInterval = 1, maximumRetryDelay: TimeInterval = 60,
            batch: (path: String, limit: Int)? = nil, maximumRefusals: Int? = nil, clock: NetworkingClock = .live,
            onFlush: (@Sendable (FlushReport) -> Void)? = nil
        ) {
            self.folder = folder
            self.capacity = capacity
            self.maximumBytes = maximumBytes
            self.queuedStatusCodes = queuedStatusCodes
            self.othersRequests = othersRequests
            self.retryDelay = retryDelay
            self.maximumRetryDelay = maximumRetryDelay
            self.batch = batch
            self.maximumRefusals = maximumRefusals
            self.clock = clock
            self.onFlush = onFlush
        }
    }

    /// A task waiting for a request's outcome.
    private struct Waiter {
        let id: UUID
        let continuation: CheckedContinuation<Result<TransportResponse, RepositoryError>, Never>
    }

    private struct State {
        var machine: OfflineQueueState
        var items: [UUID: OfflineItem] = [:]
        var waiters: [UUID: [Waiter]] = [:]
        /// The outcomes of the last ``OfflineQueue/keptOutcomes`` requests that left the queue
        /// (fewer when their bodies pass ``OfflineQueue/keptOutcomeBytes``), for
        /// ``OfflineQueue/outcome(of:)`` asked after the fact; oldest first in `outcomeOrder`.
        var outcomes: [UUID: Result<TransportResponse, RepositoryError>] = [:]
        var outcomeOrder: [UUID] = []
        /// The bytes of the kept outcomes' bodies.
        var outcomeBytes = 0
        /// How many times each waiting request was answered with a status the queue keeps.
        var refusals: [UUID: Int] = [:]
        /// Requests that left the queue (delivered, rejected, discarded) whose `done` record the
        /// journal could not write: written before the next flush sends anything.
        var owedDone: [UUID] = []
        /// Flushes in a row that sent nothing since the journal could not be written: their retry backs off.
        var storageFailures = 0
        /// How many answers that are not valid HTTP each waiting request got, since when.
        var brokenAnswers: [UUID: (count: Int, since: Date)] = [:]
        var retry: Task<Void, Never>?
        /// Tells the planned retry from one it replaced.
        var retryGeneration = 0
        /// While a retry is planned, new calls do not try a flush first (the network is likely down).
        var retryAt: Date?
        /// Whether the last flush stopped on the server's answer rather than the network's
        /// failure: then another call's answer is no sign that it would go through now.
        var stoppedByServer = false
        weak var repository: AbstractRepository?
        /// Whether a repository was ever connected: a flush before that has nothing to report,
        /// unless a request was kept meanwhile (``connect(_:)`` forgotten).
        var wasConnected = false
        var keptUnconnected = false

        /// Forgets the planned retry (the caller cancels it, outside the lock); returns it.
        mutating func dropRetry() -> Task<Void, Never>? {
            defer {
                retry = nil
                retryAt = nil
                retryGeneration += 1
            }
            return retry
        }

        /// Ends the stay of request `id`: keeps its outcome (the oldest kept one goes when there
        /// are too many) and returns its waiters, to tell.
        mutating func leave(_ id: UUID, with outcome: Result<TransportResponse, RepositoryError>) -> [Waiter] {
            items[id] = nil
            refusals[id] = nil
            brokenAnswers[id] = nil
            if let replaced = outcomes.updateValue(outcome, forKey: id) {
                outcomeBytes -= Self.bodySize(of: replaced)
                outcomeOrder.removeAll { $0 == id }
            }
            outcomeOrder.append(id)
            outcomeBytes += Self.bodySize(of: outcome)
            // The newest is always kept, however large (its waiters may not have asked yet).
            var dropped = 0
            while outcomeOrder.count - dropped > 1,
                outcomeOrder.count - dropped > OfflineQueue.keptOutcomes || outcomeBytes > OfflineQueue.keptOutcomeBytes
            {
                if let old = outcomes.removeValue(forKey: outcomeOrder[dropped]) { outcomeBytes -= Self.bodySize(of: old) }
                dropped += 1
            }
            outcomeOrder.removeFirst(dropped)
            return waiters.removeValue(forKey: id) ?? []
        }

        private static func bodySize(of outcome: Result<TransportResponse, RepositoryError>) -> Int {
            switch outcome {
            case .success(let response): response.body.count
            case .failure(let error): error.context?.response?.body.count ?? 0
            }
        }
    }

    /// How many outcomes of requests that left the queue are kept for ``outcome(of:)``.
    static let keptOutcomes = 1000
    /// How many bytes of answer bodies the kept outcomes may hold together: a server that echoes
    /// each write's megabyte must not leave a gigabyte behind (the newest outcome is kept anyway).
    static let keptOutcomeBytes = 8 * 1024 * 1024

    /// How the queue behaves.
    public let configuration: Configuration
    let journal: OfflineJournal
    private let state: Mutex<State>

    /// Before signing: the queue keeps requests without the session's credential.
    public var position: InterceptorPosition { .beforeSigning }
    /// The offline key of routes and ``Networking/Endpoint/queueingOffline()``.
    public var handledOptions: [any RequestOptionKey.Type] { [OfflineQueueingKey.self] }

    /// Opens the queue in its folder, with the requests a previous run left there.
    ///
    /// - Throws: ``OfflineQueueError/folderInUse(_:)`` when another process has the folder open
    ///   (that answer takes half a second: the lock is waited for that long, since a child process
    ///   being started holds a copy of it for a moment); ``OfflineQueueError/noSpace(_:)`` or
    ///   ``OfflineQueueError/storage(_:)`` when the folder or journal cannot be used.
    public init(_ configuration: Configuration) throws(OfflineQueueError) {
        self.configuration = configuration
        journal = try OfflineJournal(folder: configuration.folder)
        let restored = try journal.loadMeasured()
        var machine = OfflineQueueState(capacity: configuration.capacity, maximumBytes: configuration.maximumBytes)
        machine.restore(restored.map { OfflineQueueState.Item(id: $0.item.id, user: $0.item.user, bytes: $0.bytes) })
        state = Mutex(
            State(machine: machine, items: Dictionary(restored.map { ($0.item.id, $0.item) }, uniquingKeysWith: { $1 })))
    }

    deinit {
        state.withLock { $0.retry }?.cancel()
    }

    /// Sends flushed requests through `repository`'s chain (its session signs them). Call it once
    /// the repository that uses this queue is made and its session restored (after
    /// `SessionManager`'s `bootstrap`); the queue keeps a weak reference, so keep the repository
    /// as long as the queue: once it is gone, a flush sends nothing and reports
    /// `RepositoryError.invalidConfiguration(reason:)` in ``FlushReport/stoppedBy`` (to
    /// ``Configuration/onFlush``) until another is connected. The first connection
    /// flushes the requests a previous run left for the user logged in then, and those sent
    /// without the session (then on the timer while the network is down); a user's requests
    /// also go with the first call made through the queue once they are logged in, or call
    /// ``flush()`` after a login. ``perform(_:with:)-(Endpoint<T>,_)`` and
    /// ``enqueue(_:through:)`` connect their repository when none ever was; a request kept
    /// through a chain while none was makes each flush report the missing connection, as above.
    public func connect(_ repository: AbstractRepository) { connect(repository, unlessEverConnected: false) }

    private func connect(_ repository: AbstractRepository, unlessEverConnected: Bool) {
        let waiting = state.withLock { state -> Bool in
            if unlessEverConnected, state.wasConnected { return false }
            defer {
                state.repository = repository
                state.wasConnected = true
            }
            return state.repository == nil && !state.machine.items.isEmpty
        }
        // Requests a previous run left go out now, and on the timer while the network is down.
        if waiting { scheduleRetry(after: 0, replacingLater: false) }
    }

    /// How many requests wait.
    public var count: Int { state.withLock { $0.machine.items.count } }

    /// The tickets of the waiting requests, in order.
    public var pending: [OfflineTicket] { state.withLock { $0.machine.items.map { OfflineTicket(id: $0.id) } } }

    // MARK: - The interceptor

    public func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        if context.options[FlushTraffic.self] { return try await next(request) }
        let user = context.session?.sessionIdentity
        let queueing = context.options[OfflineQueueingKey.self]
        var request = request
        if queueing {
            // The call's identity, the same for every attempt the retry step makes: a retried write
            // that the server got twice is recognised as one.
            if request.headers["Idempotency-Key"] == nil { request.headers["Idempotency-Key"] = context.id.uuidString }
            // A write moved elsewhere (301, 302) goes there as the write it is, never as a GET whose
            // answer would read as delivered.
            request.keepsMethodOnRedirect = true
        }
        // Before the next request, send what waits (WANetworkRouting's trigger) — unless a flush
        // failed for the network lately: then the request goes first, and its answer, if any,
        // shows the network is back.
        let now = configuration.clock.now()
        if state.withLock({ !$0.machine.isFlushing && $0.machine.hasItems(for: user) && ($0.retryAt.map { now >= $0 } ?? true) }) {
            // In a task of its own: cancelling this call ends the call, not the flush.
            let flushing = Task { await self.flush() }
            guard await Self.waitUnlessCancelled(for: flushing) else { throw .cancelled(ErrorContext(request: request.summary)) }
            // A logout and another login meanwhile: this call was made for its user, and is
            // never sent with the next one's token (a write is kept for its user).
            if let user, context.requiresSession, context.session != nil, context.session?.sessionIdentity != user {
                guard queueing else { throw .unauthenticatedSession(nil) }
                throw try await keep(
                    request, context: context, user: user, reason: "its user logged out while earlier requests were sent",
                    failure: .unauthenticatedSession(nil))
            }
        }
        guard queueing else {
            let response = try await next(request)
            // The server answered (a stored answer shows nothing of the network).
            if response.source == .network || response.source == .revalidated { flushInBackgroundIfWaiting(for: user) }
            return response
        }
        if state.withLock({ $0.machine.hasItems(for: user) }) {
            throw try await keep(
                request, context: context, user: user, reason: "earlier requests wait to be sent",
                failure: .invalidRequest(reason: "not sent: earlier requests wait to be sent, and this one could not be kept", request: nil)
            )
        }
        let response: TransportResponse
        do {
            response = try await next(request)
        } catch  where error.isConnectivityFailure {
            throw try await keep(request, context: context, user: user, reason: Self.whyNotDelivered(error), failure: error)
        }
        if configuration.queuedStatusCodes.contains(response.statusCode) {
            let failure = RepositoryError.requestError(ErrorContext(request: request.summary, response: response))
            throw try await keep(
                request, context: context, user: user, reason: "the server answered \(response.statusCode)", failure: failure)
        }
        return response
    }

    /// Waits for a flush unless the waiting task is cancelled first (the flush goes on); `false`
    /// when it was. (An `AsyncStream`'s iteration ends when the iterating task is cancelled.)
    private static func waitUnlessCancelled(for flush: Task<FlushReport, Never>) async -> Bool {
        let (ended, end) = AsyncStream<Never>.makeStream()
        Task {
            _ = await flush.value
            end.finish()
        }
        for await _ in ended {}
        return !Task.isCancelled
    }

    /// An answer came through while requests wait for a retry: the network is back, so flush now.
    private func flushInBackgroundIfWaiting(for user: String?) {
        let (waiting, retry) = state.withLock { state -> (Bool, Task<Void, Never>?) in
            guard state.retryAt != nil, !state.stoppedByServer, !state.machine.isFlushing, state.machine.hasItems(for: user) else {
                return (false, nil)
            }
            return (true, state.dropRetry())
        }
        retry?.cancel()
        if waiting { Task { _ = await self.flush() } }
    }

    /// Why a request that did not reach the server was kept, in a few words: the call's error
    /// names the request already.
    private static func whyNotDelivered(_ error: RepositoryError) -> String {
        var reason =
            switch error {
            case .noNetworkConnection(let failure, _): "\(failure)"
            case .timeout: "no answer came in time"
            default: error.description
            }
        // A transport's own sentence, as a clause of the queue's.
        if reason.hasSuffix(".") { reason.removeLast() }
        return reason
    }

    /// Keeps a request; returns the error that tells the caller it was queued and why
    /// (`reason`), or throws why it was not: ``NotQueuedOffline`` (a request the queue must not
    /// keep, or one the journal could not write), or ``OfflineQueueFull``.
    ///
    /// - Parameter identity: the session's identity when the call started. The request is kept as
    ///   that user's even when another has logged in since (its answer took a while): it is
    ///   theirs, and must never go out with the next user's token.
    private func keep(
        _ request: TransportRequest, context: RequestContext, user identity: String?, reason: String, failure: RepositoryError
    ) async throws(RepositoryError) -> RepositoryError {
        // One it cannot keep fails with why, its own failure and the server's answer, if any.
        let errorContext = failure.context ?? ErrorContext(request: request.summary)
        func notQueued(_ why: String, storage: OfflineQueueError? = nil) -> RepositoryError {
            .customError(
                name: "notQueuedOffline",
                error: NotQueuedOffline(reason: why, failure: failure, storageFailure: storage, whyNotSent: reason),
                context: errorContext)
        }
        if let refusal = refusal(of: request, requiresSession: context.requiresSession, session: context.session, identity: identity) {
            throw notQueued(refusal)
        }
        let user = Self.owner(requiresSession: context.requiresSession, session: context.session, identity: identity)
        var request = request
        if let staged = context.options[StagedBodyFileKey.self], request.body == .file(staged) {
            // A gzipped or streamed body staged to compute its digests: the file goes when the
            // call ends, so its bytes are kept (within the queue's limits, as any body in memory).
            let size = (try? FileManager.default.attributesOfItem(atPath: staged.path))?[.size] as? Int
            if let size, size > configuration.maximumBytes {
                throw .customError(
                    name: "offlineQueueFull",
                    error: OfflineQueueFull(
                        capacity: configuration.capacity, limit: .bytes(configuration.maximumBytes, request: size)),
                    context: errorContext)
            }
            // A record holds its body in Base64 (4 bytes for 3): one that cannot fit is refused
            // before it is read into memory, not after.
            if let size, size > OfflineJournal.maximumRecordSize / 4 * 3 {
                throw notQueued("a request is too large to be kept in the queue")
            }
            guard let bytes = try? Data(contentsOf: staged) else { throw notQueued("its staged body could not be read") }
            request.body = .data(bytes)
        }
        // Without the defaults of the repository that made the call (a flush adds its own again).
        let flushing = state.withLock { $0.repository }
        let stored = OfflineItem.storable(
            request, defaults: context.defaultHeaders, isSecret: context.isSecretFieldName, flushing: flushing?.configuration)
        let item = OfflineItem(
            id: UUID(), enqueuedAt: configuration.clock.now(), user: user, request: stored.request,
            // Made without a session (a repository that has none): never signed at the flush.
            requiresSession: context.requiresSession && context.session != nil, name: context.name,
            invalidatesRouteNames: Self.invalidatedRoutes(in: context.options), restoredDefaults: stored.restoredDefaults)
        let ticket = try await store(item, response: failure.context?.response) { reason, storage in notQueued(reason, storage: storage) }
        return .customError(
            name: "queuedOffline", error: QueuedOffline(ticket: ticket, reason: reason),
            context: ErrorContext(request: request.summary, response: failure.context?.response))
    }

    /// Admits and journals an item; `response` is the answer that made it one to keep, if any,
    /// and `notKept` the error for one that cannot be kept: why, and the journal's failure when it
    /// could not write it (`nil` for a request it cannot encode or that is over the record size).
    private func store(
        _ item: OfflineItem, response: TransportResponse?, notKept: (String, OfflineQueueError?) -> RepositoryError
    ) async throws(RepositoryError) -> OfflineTicket {
        // Framed first: its record's size is what it takes in the queue.
        let framed: OfflineJournal.Framed
        do { framed = try await journal.framedOffThread(.add(item)) } catch { throw notKept(error.description, nil) }
        let journal = journal
        let admission = await withCheckedContinuation { (continuation: CheckedContinuation<Admission, Never>) in
            let refusal = state.withLock { state -> OfflineQueueFull? in
                // Not sent by a flush before its record is on disk (see `OfflineQueueState`).
                let (capacity, maximumBytes) = (state.machine.capacity, state.machine.maximumBytes)
                switch state.machine.admit(OfflineQueueState.Item(id: item.id, user: item.user, isStored: false, bytes: framed.frame.count))
                {
                case nil:
                    state.items[item.id] = item
                    // Submitted under the lock that gave it its place: the journal's order is the
                    // queue's, so a restart sends two racing writes in the order their callers heard.
                    journal.submit([framed]) { continuation.resume(returning: .written($0)) }
                    return nil
                case .count: return OfflineQueueFull(capacity: capacity, limit: .requests(capacity))
                case .bytes: return OfflineQueueFull(capacity: capacity, limit: .bytes(maximumBytes, request: framed.frame.count))
                }
            }
            if let refusal { continuation.resume(returning: .refused(refusal)) }
        }
        let written: Result<Void, OfflineQueueError>
        switch admission {
        case .refused(let refusal):
            // With the answer that made it a candidate (a 503 the queue keeps), when there was one.
            throw .customError(
                name: "offlineQueueFull", error: refusal,
                context: ErrorContext(request: item.request.summary, response: response))
        case .written(let result): written = result
        }
        do {
            try written.get()
        } catch {
            // Not on disk, so not queued: the caller hears why.
            let failure = notKept(error.description, error)
            let waiters = state.withLock { state in
                state.items[item.id] = nil
                _ = state.machine.remove(item.id)
                return state.waiters.removeValue(forKey: item.id) ?? []
            }
            for waiter in waiters { waiter.continuation.resume(returning: .failure(failure)) }
            throw failure
        }
        state.withLock { state in
            state.machine.stored(item.id)
            if !state.wasConnected { state.keptUnconnected = true }
        }
        scheduleRetry(after: OfflineQueueState.retryDelay(configuration.retryDelay), replacingLater: false)
        return OfflineTicket(id: item.id)
    }

    /// What admitting an item gave: no room, or its record's write.
    private enum Admission: Sendable {
        case refused(OfflineQueueFull)
        case written(Result<Void, OfflineQueueError>)
    }

    // MARK: - Calls

    /// Sends a write, or keeps it when the network is down: the call's answer, a queued request to
    /// await, or its failure.
    ///
    /// When no repository was ever connected, `repository` is (``connect(_:)``): its writes
    /// would otherwise wait for good.
    public func perform<T: Decodable & Sendable>(_ endpoint: Endpoint<T>, with repository: AbstractRepository) async -> OfflineOutcome<T> {
        connectIfNever(repository)
        let queueing = endpoint.queueingOffline()
        return outcome(of: await repository.performRequest(queueing)) { response, request in
            repository.interpret(response, to: request, for: queueing)
        }
    }

    /// Sends a write whose answer's body is ignored, or keeps it; see ``perform(_:with:)-(Endpoint<T>,_)``.
    public func perform(_ endpoint: Endpoint<Void>, with repository: AbstractRepository) async -> OfflineOutcome<Void> {
        connectIfNever(repository)
        let queueing = endpoint.queueingOffline()
        return outcome(of: await repository.performRequest(queueing)) { response, request in
            repository.interpret(response, to: request, for: queueing)
        }
    }

    /// Connects `repository` when none ever was, if its chain holds this queue (another chain's
    /// flush would not be this queue's), from its configuration or its initializer's `interceptors:`.
    private func connectIfNever(_ repository: AbstractRepository) {
        guard repository.chainHolds(self) else { return }
        connect(repository, unlessEverConnected: true)
    }

    private func outcome<T: Sendable>(
        of result: Result<T, RepositoryError>,
        interpret: @escaping @Sendable (TransportResponse, TransportRequest) -> Result<T, RepositoryError>
    ) -> OfflineOutcome<T> {
        switch result {
        case .success(let value): return .sent(value)
        case .failure(let error):
            guard let queued = error.customError(as: QueuedOffline.self) else { return .failed(error) }
            // Read now, while the request is queued (it leaves the queue once delivered, and a
            // waiter may ask later); its body is not needed to read the answer.
            // (Delivered already by a flush that ran first: its method and URL, as the error holds them.)
            let request =
                state.withLock { $0.items[queued.ticket.id]?.request }.map { request in
                    var described = request
                    described.body = nil
                    return described
                } ?? error.context.map { TransportRequest(method: $0.request.method, url: $0.request.url) }
            return .queued(
                QueuedRequest(ticket: queued.ticket) { [self] in
                    let answer = await self.outcome(of: queued.ticket)
                    return answer.flatMap { response in
                        interpret(response, request ?? TransportRequest(method: .get, url: response.url ?? URL(fileURLWithPath: "/")))
                    }
                })
        }
    }

    /// Whose turn a request waits for: its session's user, or `nil` for one sent unsigned.
    private static func owner(requiresSession: Bool, session: (any SessionAuthorizing)?, identity: String?) -> String? {
        requiresSession && session != nil ? identity : nil
    }

    /// Why the queue cannot keep a request, or `nil`: a signed request whose session names no
    /// user, which the queue could not keep from another user's token; or one that carries a
    /// credential of its own — an `Authorization`, say, that is not the configuration's default
    /// (which a flush adds again) nor the session's (added after the queue), or a user and
    /// password in its URL. The queue never writes one to disk, so the request would go out
    /// without it.
    /// - Parameter caller: the repository the request was made through, when known (`enqueue`):
    ///   its defaults stand for those of the repository a flush will use until one is connected.
    private func refusal(
        of request: TransportRequest, requiresSession: Bool, session: (any SessionAuthorizing)?, identity: String?,
        caller: AbstractRepository? = nil
    ) -> String? {
        if requiresSession, session != nil, identity == nil {
            return
                "nobody is logged in, or the session names no user (SessionAuthorizing.sessionIdentity is nil), so the queue could not keep the request from another user's token"
        }
        // The transport sends a URL's user and password as the request's credential.
        if request.url.user != nil || request.url.password != nil {
            return "its URL names a user, a credential the queue never writes to disk: give it through the session or a default header"
        }
        // A flush sends the connected repository's defaults again: those are not the request's own.
        let flushing = state.withLock { $0.repository } ?? caller
        let defaults = flushing?.configuration.defaultHeaders ?? [:]
        guard let name = request.ownCredential(among: OfflineItem.credentialHeaders, defaults: defaults) else { return nil }
        guard flushing != nil else {
            return
                "the request carries the field \(name), which the queue never writes to disk, and no repository is connected (OfflineQueue.connect) to send it again as its default"
        }
        return "the request carries its own \(name) header, which the queue never writes to disk"
    }

    /// Keeps a request without trying to send it now ("send later"); it goes with the next flush.
    ///
    /// - Returns: its ticket, or why it cannot be kept: an invalid endpoint, a streamed body or
    ///   one over the journal's 64 MiB record size (`.invalidRequest`), a full queue (``OfflineQueueFull``), or a journal that cannot write
    ///   it (``OfflineQueueError``, a custom error: a full disk is ``OfflineQueueError/noSpace(_:)``).
    ///
    /// When no repository was ever connected, `repository` is (``connect(_:)``).
    public func enqueue<Response>(_ endpoint: Endpoint<Response>, through repository: AbstractRepository) async
        -> Result<OfflineTicket, RepositoryError>
    {
        do throws(RepositoryError) {
            // The route's settings (whether it needs the session, its name), not those of the
            // endpoint made by name.
            let endpoint = try repository.resolve(endpoint)
            var request = try repository.makeRequest(for: endpoint)
            if request.headers["Idempotency-Key"] == nil { request.headers["Idempotency-Key"] = UUID().uuidString }
            let session = repository.sessionManager
            let identity = session?.sessionIdentity
            if let refusal = refusal(
                of: request, requiresSession: endpoint.requiresSession, session: session, identity: identity, caller: repository)
            {
                throw .invalidRequest(reason: "not queued offline: \(refusal)", request: request.summary)
            }
            connectIfNever(repository)
            let flushing = state.withLock { $0.repository } ?? repository
            let stored = OfflineItem.storable(
                request, defaults: repository.configuration.defaultHeaders, isSecret: repository.configuration.isSecretFieldName,
                flushing: flushing.configuration)
            let item = OfflineItem(
                id: UUID(), enqueuedAt: configuration.clock.now(),
                user: Self.owner(requiresSession: endpoint.requiresSession, session: session, identity: identity),
                request: stored.request, requiresSession: endpoint.requiresSession && session != nil, name: endpoint.name,
                invalidatesRouteNames: Self.invalidatedRoutes(in: endpoint.options), restoredDefaults: stored.restoredDefaults)
            let summary = request.summary
            return .success(
                try await store(item, response: nil) { reason, storage in
                    guard let storage else { return .invalidRequest(reason: "not queued offline: \(reason)", request: summary) }
                    return .customError(name: storage.name, error: storage, context: ErrorContext(request: summary))
                })
        } catch {
            return .failure(error)
        }
    }

    /// Waits until the queued request is sent for good (delivered, or answered with an error),
    /// and returns its raw answer — or its failure (discarded, given up, or never sendable). Asked
    /// after the fact, it answers for the last 1,000 requests that left the queue while their
    /// answers' bodies total at most 8 MiB (the oldest forgotten first, the newest always kept);
    /// a forgotten ticket answers `RepositoryError.invalidRequest`.
    ///
    /// Cancelling the waiting task ends the wait with `RepositoryError.cancelled`; the request
    /// itself stays queued.
    public func outcome(of ticket: OfflineTicket) async -> Result<TransportResponse, RepositoryError> {
        let waiter = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Result<TransportResponse, RepositoryError>? in
                    if let outcome = state.outcomes[ticket.id] { return outcome }
                    guard state.items[ticket.id] != nil else {
                        return .failure(.invalidRequest(reason: "no queued request has the ticket \(ticket)", request: nil))
                    }
                    if Task.isCancelled { return .failure(.cancelled(nil)) }
                    state.waiters[ticket.id, default: []].append(Waiter(id: waiter, continuation: continuation))
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Waiter? in
                guard let index = state.waiters[ticket.id]?.firstIndex(where: { $0.id == waiter }) else { return nil }
                return state.waiters[ticket.id]?.remove(at: index)
            }
            cancelled?.continuation.resume(returning: .failure(.cancelled(nil)))
        }
    }

    /// Removes a waiting request for good — one the server keeps refusing to take (a lasting
    /// `409`, say, that ``FlushReport/stoppedBy`` shows): it is never sent, and its waiters get
    /// `RepositoryError.cancelled`.
    ///
    /// - Returns: whether it was removed: `false` when no stored request has the ticket, or while
    ///   a flush runs (which may be sending it; call it again after the flush, from
    ///   ``Configuration/onFlush`` for example), or when the journal could not record the removal
    ///   (the request stays queued rather than come back after a restart).
    @discardableResult
    public func remove(_ ticket: OfflineTicket) async -> Bool {
        // Marked under the same lock as the check: a flush starting meanwhile stops before it, so
        // nothing queued after it is sent first should its removal fail to reach the disk.
        guard state.withLock({ $0.machine.beginRemoval(ticket.id) }) else { return false }
        let recorded: Bool
        do {
            try await journal.append([.done(ticket.id)])
            recorded = true
        } catch {
            // Not removed on disk, so not removed: it would come back after a restart.
            recorded = false
        }
        // A flush that started meanwhile stopped before it: the requests after it go now.
        if state.withLock({ $0.machine.endRemoval(ticket.id, recorded: recorded) }) { scheduleRetry(after: 0, replacingLater: false) }
        guard recorded else { return false }
        // The error names the request removed.
        let (waiters, error) = state.withLock { state in
            let error = RepositoryError.cancelled(state.items[ticket.id].map { ErrorContext(request: $0.request.summary) })
            return (state.leave(ticket.id, with: .failure(error)), error)
        }
        for waiter in waiters { waiter.continuation.resume(returning: .failure(error)) }
        return true
    }

    // MARK: - Flushing

    /// Tells the queue the network came back (a flush starts at once) or went away.
    public func connectivityChanged(isOnline: Bool) {
        guard isOnline else { return }
        state.withLock { $0.dropRetry() }?.cancel()
        Task { _ = await self.flush() }
    }

    /// Sends the waiting requests of the current user (and those sent without the session), in
    /// order, until one is kept: it failed for the network, or got a status the queue keeps.
    @discardableResult
    public func flush() async -> FlushReport {
        var report = FlushReport()
        guard let repository = state.withLock({ $0.repository }) else {
            // Nothing can go before a repository is connected again: said, not silent (before the
            // first connection, nothing is missing yet).
            report.remaining = count
            if report.remaining > 0, state.withLock({ $0.wasConnected || $0.keptUnconnected }) {
                report.stoppedBy = .invalidConfiguration(
                    reason:
                        "the offline queue has no repository to send through: connect(_:) one, and keep it as long as the queue (the queue holds it weakly)"
                )
                configuration.onFlush?(report)
            }
            return report
        }
        // Nothing goes while the journal cannot record what went: each delivery would come back
        // after a restart.
        report.storageFailure = await recordDone([])
        if report.storageFailure != nil { return stoppedForStorage(report) }
        state.withLock { $0.storageFailures = 0 }
        let user = repository.sessionManager?.sessionIdentity
        if configuration.othersRequests == .discard {
            let discarded = await discardOthers(than: user, into: &report)
            report.discarded = discarded
            if report.storageFailure != nil { return stoppedForStorage(report) }
        }
        guard let items = state.withLock({ $0.machine.beginFlush(for: user) }) else {
            report.remaining = count
            // Nothing to send, but others' requests were discarded: `onFlush` hears of them.
            if !report.discarded.isEmpty { configuration.onFlush?(report) }
            return report
        }
        var position = 0
        var stoppedByStatus = false
        // The most requests per batch request of each kind (unsigned, signed) in this flush: the
        // configured limit, halved each time the endpoint refuses a batch as too large (413).
        var batchSizes = Array(repeating: configuration.batch.map { max(1, $0.limit) } ?? 1, count: 2)
        flushing: while position < items.count {
            // Those sent without the session go in batches of their own, never signed as the user.
            // One that cannot go in a batch request (a gzipped or file body, a URL outside the base
            // URL) goes on its own, in its place.
            let (sizes, start) = (batchSizes, position)
            let batched = configuration.batch != nil
            let (kind, runEnd, run) = state.withLock { state in
                let kept = state.items
                let (kind, end) = BatchClient.run(from: start, count: items.count, sizes: sizes) {
                    kept[items[$0].id]?.requiresSession ?? false
                }
                return (kind, end, batched ? items[start..<end].map { kept[$0.id] } : [])
            }
            var end = runEnd
            var alone = false
            if let unbatchable = run.indices.first(where: { !Self.fitsInBatch(run[$0], of: repository) }) {
                alone = unbatchable == 0
                end = start + (alone ? 1 : unbatchable)
            }
            let group = Array(items[position..<end])
            position += group.count
            // A logout and another login during the flush: the rest waits for its own user.
            guard repository.sessionManager?.sessionIdentity == user else {
                let summary = state.withLock { $0.items[group[0].id]?.request.summary }
                _ = state.withLock { $0.machine.record(group[0].id, .deferred) }
                report.stoppedBy = .invalidRequest(reason: "the session changed users during the flush", request: summary)
                break flushing
            }
            let results: [Result<TransportResponse, RepositoryError>]
            switch await send(group.map(\.id), through: repository, for: user, batched: !alone) {
            case .answers(let answers): results = answers
            case .batchFailed(let error) where group.count > 1 && BatchClient.isTooLarge(error):
                // Refused as too large before any item ran: the same requests go again in halves.
                batchSizes[kind] = group.count / 2
                position -= group.count
                continue flushing
            case .batchFailed(let error):
                // The batch call itself failed: none of its items ran, so they stay — unless
                // the server has refused them maximumRefusals times (a 413, say): then they go,
                // rather than hold back every later request for good.
                let refusal: Result<TransportResponse, RepositoryError>? =
                    if let response = error.context?.response { .success(response) } else if Self.isServerAnswer(error) {
                        .failure(error)
                    } else { nil }
                if let refusal {
                    for item in group where refusedTooOften(item.id, refusal) {
                        await finish(item.id, with: .failure(error), outcome: .rejected, into: &report)
                        _ = state.withLock { $0.machine.record(item.id, .rejected) }
                    }
                }
                report.stoppedBy = error
                stoppedByStatus = refusal != nil
                break flushing
            }
            // Every item of a batch that got a final answer ran: it is done even when one before
            // it is kept (else the next flush would send it again). The flush stops after the group.
            var stop: RepositoryError?
            for (id, result) in zip(group.map(\.id), results) {
                var outcome = classify(result, requiresSession: kind == 1)
                if outcome == .deferred, refusedTooOften(id, result) { outcome = .rejected }
                if outcome != .deferred { await finish(id, with: result, outcome: outcome, into: &report) }
                if !state.withLock({ $0.machine.record(id, outcome) }), stop == nil {
                    stop = result.failure ?? result.success.map { .requestError(ErrorContext(request: summary(of: id, $0), response: $0)) }
                    // The server's answer (a status, or a batch item's): another call's answer
                    // says nothing about this request, so it waits for the timer.
                    stoppedByStatus = result.success != nil || result.failure.map(Self.isServerAnswer) == true
                }
            }
            if let stop {
                report.stoppedBy = stop
                break flushing
            }
            // The journal failed to record an answer: nothing more goes until it can.
            if report.storageFailure != nil { break flushing }
        }
        let stopped = report.stoppedBy != nil || report.storageFailure != nil
        let delay = state.withLock { state in
            // The server's answer (not the network, a captive portal, the session): another
            // call's answer says nothing about this request, so it waits for the timer.
            state.stoppedByServer = stoppedByStatus
            return state.machine.endFlush(
                for: user, stopped: stopped, base: configuration.retryDelay, maximum: configuration.maximumRetryDelay)
        }
        if let delay {
            scheduleRetry(after: delay, replacingLater: true)
        } else if state.withLock({ !$0.owedDone.isEmpty }) {
            // Nobody's request waits, but a record does: it must not wait for the next call.
            scheduleRetry(after: OfflineQueueState.retryDelay(configuration.retryDelay), replacingLater: false)
        }
        report.remaining = count
        await journal.compactIfWorthIt()
        configuration.onFlush?(report)
        return report
    }

    /// Ends a flush that sends nothing, since the journal cannot record what leaves the queue:
    /// the timer tries again.
    private func stoppedForStorage(_ stopped: FlushReport) -> FlushReport {
        var report = stopped
        report.remaining = count
        // Backing off as a flush the network stopped does (a disk stays full for a while).
        let failures = state.withLock { state -> Int in
            state.storageFailures += 1
            return state.storageFailures
        }
        let delay = OfflineQueueState.backoff(after: failures, base: configuration.retryDelay, maximum: configuration.maximumRetryDelay)
        scheduleRetry(after: delay, replacingLater: true)
        configuration.onFlush?(report)
        return report
    }

    /// What sending a group of items gave.
    private enum Sent {
        /// Each item's own answer or failure, in order.
        case answers([Result<TransportResponse, RepositoryError>])
        /// The batch request itself failed (the network, or the batch endpoint's own status): no item ran.
        case batchFailed(RepositoryError)
    }

    /// Sends items (one, or a batch), signed by the repository's session — for `user` only: if
    /// another user logs in meanwhile, the session step refuses to sign them, and they stay.
    private func send(_ ids: [UUID], through repository: AbstractRepository, for user: String?, batched: Bool) async -> Sent {
        let items = state.withLock { state in ids.map { state.items[$0] } }
        let requests = items.map { item -> Result<TransportRequest, RepositoryError> in
            guard let item else {
                return .failure(.invalidRequest(reason: "the request left the queue during the flush", request: nil))
            }
            var request = Self.withDefaults(item, of: repository.configuration)
            request.keepsMethodOnRedirect = true
            // A flush holds the queue: a request with no time limit and no limit on silence gets
            // the repository's idle timeout (or its timeout), so a server that never answers
            // cannot stop every later write for good.
            if !request.timeout.isFinite, request.idleTimeout == nil {
                request.idleTimeout =
                    repository.configuration.idleTimeout.flatMap { $0.isFinite ? $0 : nil } ?? repository.configuration.timeout
            }
            return .success(request)
        }
        var marker = RequestOptions()
        marker[FlushTraffic.self] = true
        marker[SessionIdentityKey.self] = user
        // Sent once: a failure stops the flush, and the queue's own timer tries again. Retries
        // here would hold the calls waiting behind the flush through their backoff.
        marker[RetryPolicyKey.self] = .never
        if let batch = configuration.batch, batched, items.count > 1 || batch.limit > 1 {
            let client = BatchClient(repository: repository, path: batch.path, limit: batch.limit)
            // Signed when its requests need the session (a flush's group is all one or the
            // other); items inherit the signature.
            let requiresSession = items.contains { $0?.requiresSession ?? false }
            switch await client.sendWhole(requests, requiresSession: requiresSession, options: marker) {
            case .success(let answers):
                await report(answers, of: items, requests: requests, through: repository, marker: marker)
                return .answers(answers)
            case .failure(let error): return .batchFailed(error)
            }
        }
        var results: [Result<TransportResponse, RepositoryError>] = []
        for (item, request) in zip(items, requests) {
            guard let item, case .success(let request) = request else {
                results.append(.failure(.invalidRequest(reason: "the request left the queue during the flush", request: nil)))
                continue
            }
            // The routes it invalidates go to the response cache in the chain; a repository
            // without one would refuse the option, and has nothing to invalidate.
            let options = repository.handles(RouteCacheSettingsKey.self) ? Self.cacheOptions(of: item, adding: marker) : marker
            let context = RequestContext(
                requiresSession: item.requiresSession, name: item.name, options: options, session: repository.sessionManager)
            results.append(
                await repository.send(request, context: context).map { response in
                    var answered = response
                    answered.url = answered.url ?? request.url
                    return answered
                })
        }
        return .answers(results)
    }

    /// A kept request with the connected repository's default headers on top, as the request
    /// builder puts them (``Networking/NetworkingConfiguration/defaultHeaders(for:)``), and the
    /// default credential fields it carried to another host (``OfflineItem/restoredDefaults``),
    /// but the fields that describe its body kept as built: a default `Content-Type` would
    /// replace a form's boundary or an upload's type, and the server would refuse the write for good.
    static func withDefaults(_ item: OfflineItem, of configuration: NetworkingConfiguration) -> TransportRequest {
        var request = item.request
        let described = ["Content-Type", "Content-Encoding"].map { ($0, request.headers.values(for: $0)) }
        request.headers = request.headers.merging(configuration.defaultHeaders(for: request.url))
        for name in item.restoredDefaults ?? [] where request.headers.values(for: name).isEmpty {
            for value in configuration.defaultHeaders.values(for: name) { request.headers.add(name: name, value: value) }
        }
        for (name, values) in described where !values.isEmpty {
            request.headers[name] = nil
            for value in values { request.headers.add(name: name, value: value) }
        }
        return request
    }

    /// Whether a kept request can be an item of a batch request (``BatchWire/item(for:baseURL:defaults:withholding:)``).
    private static func fitsInBatch(_ item: OfflineItem?, of repository: AbstractRepository) -> Bool {
        guard let item else { return true }
        let request = withDefaults(item, of: repository.configuration)
        let defaults = repository.configuration.defaultHeaders
        guard case .success = BatchWire.item(for: request, baseURL: repository.configuration.baseURL, defaults: defaults) else {
            return false
        }
        return true
    }

    /// The cached routes a call's route invalidates, to keep with it; `nil` when none.
    static func invalidatedRoutes(in options: RequestOptions) -> [String]? {
        guard let names = options[RouteCacheSettingsKey.self]?.invalidatesRouteNames, !names.isEmpty else { return nil }
        return names
    }

    /// The options a delivered item's route adds for a response cache: the routes it invalidates.
    private static func cacheOptions(of item: OfflineItem, adding marker: RequestOptions) -> RequestOptions {
        var options = marker
        if let names = item.invalidatesRouteNames { options[RouteCacheSettingsKey.self] = RouteCacheSettings(invalidatesRouteNames: names) }
        return options
    }

    /// Reports the answers of items sent in a batch request to the repository's observers, with
    /// the routes they invalidate, so that a response cache drops what the writes made stale as it
    /// would have had they gone through the chain: the chain saw only the batch request.
    private func report(
        _ answers: [Result<TransportResponse, RepositoryError>], of items: [OfflineItem?],
        requests: [Result<TransportRequest, RepositoryError>], through repository: AbstractRepository, marker: RequestOptions
    ) async {
        for (answer, (item, request)) in zip(answers, zip(items, requests)) {
            guard let item, case .success(let response) = answer, case .success(let request) = request else { continue }
            let context = RequestContext(
                requiresSession: item.requiresSession, name: item.name, options: Self.cacheOptions(of: item, adding: marker),
                session: repository.sessionManager)
            await repository.report(request, answeredBy: response, context: context)
        }
    }

    /// Whether a failure is the server's word: a batch item's answer (not run, or unreadable),
    /// or an answer that is not valid HTTP.
    private static func isServerAnswer(_ error: RepositoryError) -> Bool {
        if case .invalidResponse = error { return true }
        return false
    }

    /// Whether a flush keeps a request answered with `status`, whatever
    /// ``Configuration/queuedStatusCodes`` says: 401, 407, 408, 409, 425, 429, and every server
    /// error but 501 and 505 (which say the server never will): a CDN's 520-524 while the origin
    /// deploys, a captive portal's 511.
    static func defers(_ status: Int) -> Bool {
        switch status {
        case 401, 407, 408, 409, 425, 429: true
        case 501, 505: false
        default: (500...599).contains(status)
        }
    }

    /// Whether a send ended the request's stay in the queue.
    private func classify(_ result: Result<TransportResponse, RepositoryError>, requiresSession: Bool) -> OfflineQueueState.Outcome {
        switch result {
        case .success(let response):
            if response.isSuccess { return .delivered }
            // A request sent without the session gets nothing from waiting for one.
            if response.statusCode == 401, !requiresSession { return .rejected }
            // Not an answer for good: 401 (the session ended or must be refreshed; the request
            // waits for one that works), 407 (a proxy wants credentials: it did not pass the
            // request on), 408, 425 and 429 (try later), 409 (the Idempotency-Key draft's
            // "a request with this key is still being processed": the server got a copy of this
            // very request just before a crash, and has not finished it yet), and the server
            // errors but 501 and 505: the caller was told the request is kept, and a server failing
            // for a while (a deploy, a gateway, a CDN's 52x) must not empty the queue. The key makes
            // sending it again safe.
            if Self.defers(response.statusCode) || configuration.queuedStatusCodes.contains(response.statusCode) {
                return .deferred
            }
            return .rejected
        case .failure(let error):
            switch error {
            case .noNetworkConnection, .timeout, .cancelled, .sessionRefreshFailed, .unauthenticatedSession: return .deferred
            // Not the server's answer: a network that intercepts TLS (a captive portal) shows
            // another certificate; the request waits for the real server.
            case .tlsError, .pinningFailed: return .deferred
            // The app's configuration, not the request, is wrong (a pin file it cannot read): the
            // request waits for a configuration that works rather than be dropped.
            case .invalidConfiguration: return .deferred
            // A batch item the server did not run, or whose answer could not be read (no valid
            // code): kept, and an unreadable one counted as a refusal. An answer that is not valid
            // HTTP may be passing (a proxy's broken reply, an HTTP/2 stream reset) or come out the
            // same every time (a redirect loop): kept, and given up after a few (`refusedTooOften`).
            case .invalidResponse: return .deferred
            default: return .rejected
            }
        }
    }

    /// How many answers in a row that are not valid HTTP (outside a batch's items) a request
    /// gets, the last at least ``brokenAnswersSpan`` seconds after the first, before it is given
    /// up (or ``Configuration/maximumRefusals`` of them): HTTP/2 stream resets through a deploy
    /// come within seconds, a redirect loop comes out the same for good. Anything else that keeps
    /// the request (a status, a network failure) starts the count again.
    static let maximumBrokenAnswers = 3
    static let brokenAnswersSpan: TimeInterval = 60

    /// Counts an answer the queue keeps (a status, not a failure of the network); `true` when
    /// the request has now been refused ``Configuration/maximumRefusals`` times, or has had
    /// enough answers that are not valid HTTP (``maximumBrokenAnswers``), and is given up.
    private func refusedTooOften(_ id: UUID, _ result: Result<TransportResponse, RepositoryError>) -> Bool {
        if case .failure(.invalidResponse(let reason, _)) = result, !BatchWire.itemReasons.contains(reason) {
            let now = configuration.clock.now()
            return state.withLock { state in
                var broken = state.brokenAnswers[id] ?? (0, now)
                // A clock set back starts the span again rather than stretch it.
                if now < broken.since { broken.since = now }
                broken.count += 1
                state.brokenAnswers[id] = broken
                if let maximum = configuration.maximumRefusals, broken.count >= max(1, maximum) { return true }
                return broken.count >= Self.maximumBrokenAnswers && now.timeIntervalSince(broken.since) >= Self.brokenAnswersSpan
            }
        }
        state.withLock { $0.brokenAnswers[id] = nil }
        guard let maximum = configuration.maximumRefusals else { return false }
        switch result {
        case .success: break
        // A batch item the server did not run was not refused; one it answered unreadably was.
        case .failure(.invalidResponse(let reason, _)) where BatchWire.itemReasons.contains(reason) && reason != BatchWire.notRunReason:
            break
        case .failure: return false
        }
        return state.withLock { state in
            let count = (state.refusals[id] ?? 0) + 1
            state.refusals[id] = count
            return count >= max(1, maximum)
        }
    }

    /// The request an answer was for, as errors name it: the queued item's method and URL, and
    /// the URL the answer came from when it is known.
    private func summary(of id: UUID, _ response: TransportResponse) -> RequestSummary {
        let stored = state.withLock { $0.items[id]?.request.summary }
        return RequestSummary(method: stored?.method ?? .post, url: response.url ?? stored?.url ?? URL(fileURLWithPath: "/"))
    }

    /// Writes the `done` records of `ids`, and of those owed from before; on failure, they are
    /// all owed (see `State.owedDone`), and the journal's error is returned.
    private func recordDone(_ ids: [UUID]) async -> OfflineQueueError? {
        let all = state.withLock { state -> [UUID] in
            defer { state.owedDone = [] }
            return state.owedDone + ids
        }
        guard !all.isEmpty else { return nil }
        do {
            try await journal.append(all.map { .done($0) })
            return nil
        } catch {
            state.withLock { $0.owedDone = all + $0.owedDone }
            return error
        }
    }

    /// Marks an item done on disk and tells its waiters (the server answered, whatever the disk
    /// says: a `done` record the journal cannot write is owed, and the flush stops).
    private func finish(
        _ id: UUID, with result: Result<TransportResponse, RepositoryError>, outcome: OfflineQueueState.Outcome,
        into report: inout FlushReport
    ) async {
        if let failure = await recordDone([id]) { report.storageFailure = failure }
        // Named before the item leaves the queue, with its method.
        let answered = result.success.map { summary(of: id, $0) }
        let waiters = state.withLock { $0.leave(id, with: result) }
        for waiter in waiters { waiter.continuation.resume(returning: result) }
        switch (outcome, result) {
        case (.delivered, _): report.delivered.append(OfflineTicket(id: id))
        case (_, .failure(let error)): report.rejected.append((OfflineTicket(id: id), error))
        case (_, .success(let response)):
            let request = answered ?? RequestSummary(method: .post, url: response.url ?? URL(fileURLWithPath: "/"))
            report.rejected.append((OfflineTicket(id: id), .requestError(ErrorContext(request: request, response: response))))
        }
    }

    /// Removes other users' requests, unless a flush runs (it may be sending one of them).
    private func discardOthers(than user: String?, into report: inout FlushReport) async -> [OfflineTicket] {
        let removed = state.withLock { $0.machine.isFlushing ? [] : $0.machine.discard(notBelongingTo: user) }
        guard !removed.isEmpty else { return [] }
        if let failure = await recordDone(removed.map(\.id)) { report.storageFailure = failure }
        let waiters = state.withLock { state in
            removed.flatMap { item in
                let error = RepositoryError.invalidRequest(
                    reason: "discarded: it was queued by another user", request: state.items[item.id]?.request.summary)
                return state.leave(item.id, with: .failure(error)).map { (waiter: $0, error: error) }
            }
        }
        for (waiter, error) in waiters { waiter.continuation.resume(returning: .failure(error)) }
        return removed.map { OfflineTicket(id: $0.id) }
    }

    /// Flushes again after `delay`, unless a retry is already planned — as soon or sooner, when
    /// `replacingLater` (a flush's own next try, which may come sooner than one planned before it);
    /// at any time otherwise (a request just kept must not undo the backoff).
    private func scheduleRetry(after delay: TimeInterval, replacingLater: Bool) {
        let clock = configuration.clock
        // Never NaN (`Duration` cannot hold it) nor more than a day.
        let wait = delay.isNaN ? 1 : min(max(delay, 0), 86_400)
        let now = clock.now()
        let due = now.addingTimeInterval(wait)
        let replaced = state.withLock { state -> Task<Void, Never>? in
            if let planned = state.retry, !planned.isCancelled, !replacingLater || state.retryAt.map({ $0 <= due }) ?? true {
                return nil
            }
            let replaced = state.retry
            state.retryGeneration += 1
            let generation = state.retryGeneration
            state.retryAt = due
            state.retry = Task { [weak self] in
                guard (try? await clock.sleep(.seconds(wait))) != nil else { return }
                // Only the retry planned last flushes: a replaced one that woke anyway stops here.
                let current = self?.state.withLock { state -> Bool in
                    guard state.retryGeneration == generation else { return false }
                    _ = state.dropRetry()
                    return true
                }
                if current == true { _ = await self?.flush() }
            }
            return replaced
        }
        replaced?.cancel()
    }
}

/// Marks the queue's own sends, so that its interceptor lets them through.
enum FlushTraffic: RequestOptionKey {
    static let defaultValue = false
}

extension Endpoint {
    /// A copy that the offline queue keeps when it fails for the network (see ``OfflineQueue``).
    public func queueingOffline() -> Endpoint {
        with(OfflineQueueingKey.self, true)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }

    fileprivate var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}

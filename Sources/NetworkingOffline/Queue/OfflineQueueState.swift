import Foundation

/// The offline queue's lifecycle as a pure value, tested without I/O: which requests wait, in
/// which order, for which user; what a flush sends and when it stops; how long to wait before
/// trying again while the network stays down. ``OfflineQueue`` drives it and carries out its
/// decisions (the journal, the network).
///
/// The rules:
/// - Requests wait in the order they were queued, each for the user that queued it (`nil`: a
///   request that needs no session).
/// - At most ``capacity`` requests wait, of at most ``maximumBytes`` together (each measured by
///   its journal record); one more, or one that would go over, is refused. Requests restored from
///   the journal all wait, even over the limits (set lower since): nothing stored is lost.
/// - A request admitted is sent only once it is stored (its journal record is on disk): a flush
///   sends the requests before the first one not stored yet, never one that a crash could lose
///   after the server got it.
/// - A flush for a user sends, in order, that user's requests and those of nobody; one flush runs
///   at a time.
/// - A request that was delivered (2xx) or rejected (the server answered it for good, such as a
///   4xx) leaves the queue; one deferred (the network failed, or a status the queue keeps) stays,
///   and the flush stops there, so that later requests never overtake it.
/// - After a flush that stopped on a deferred request, the next try waits `base × 2^(n−1)`
///   (capped at `maximum`) for the n-th flush in a row that stopped so; a flush that completes
///   resets it, and when requests were queued while it ran, the next one starts at once.
struct OfflineQueueState: Sendable, Hashable {
    /// A waiting request: its identity, its user, and whether its journal record is on disk (not
    /// while it is being admitted or removed: flushes stop before it then).
    struct Item: Sendable, Hashable {
        let id: UUID
        let user: String?
        var isStored = true
        /// What it takes: the size of its journal record.
        var bytes = 0
    }

    /// The limit that kept a request out.
    enum Limit: Sendable, Hashable {
        /// ``capacity`` requests wait already.
        case count
        /// With it, the requests waiting would take more than ``maximumBytes``.
        case bytes
    }

    /// How a sent request ended.
    enum Outcome: Sendable, Hashable {
        /// Delivered (2xx): it leaves the queue.
        case delivered
        /// Answered for good (a 4xx, an invalid request): it leaves the queue with its error.
        case rejected
        /// The network failed, or the answer is one the queue keeps: it stays, and the flush stops.
        case deferred
    }

    /// The most requests that may wait.
    let capacity: Int
    /// The most bytes the requests waiting may take together.
    let maximumBytes: Int
    private(set) var items: [Item] = []
    private(set) var isFlushing = false
    /// Whether a flush found nothing to send because its first request was not stored (being
    /// admitted, or removed).
    private var flushWaits = false
    /// Flushes in a row that stopped on a deferred request.
    private(set) var stoppedFlushes = 0

    init(capacity: Int, maximumBytes: Int = .max) {
        self.capacity = max(1, capacity)
        self.maximumBytes = max(1, maximumBytes)
    }

    /// Queues a request (one admitted before its record is on disk has `isStored` false until
    /// ``stored(_:)``); `nil` when admitted, else the limit that keeps it out.
    mutating func admit(_ item: Item) -> Limit? {
        guard items.count < capacity else { return .count }
        // Summed in 64 bits: restored requests may already be over the limit, and on a 32-bit
        // platform a thousand large ones would overflow an `Int`.
        let waiting = items.reduce(Int64(0)) { $0 + Int64($1.bytes) }
        guard waiting + Int64(item.bytes) <= Int64(maximumBytes) else { return .bytes }
        items.append(item)
        return nil
    }

    /// Marks an admitted request as stored: flushes may send it now.
    mutating func stored(_ id: UUID) {
        if let index = items.firstIndex(where: { $0.id == id }) { items[index].isStored = true }
    }

    /// Puts back requests read from the journal, in their order.
    mutating func restore(_ restored: [Item]) {
        items = restored
    }

    /// Whether requests wait that a flush for `user` would send.
    func hasItems(for user: String?) -> Bool {
        items.contains { $0.user == nil || $0.user == user }
    }

    /// Starts a flush for `user`: the requests to send, in order, up to the first one not stored
    /// yet; `nil` when a flush runs already or none of this user's can go.
    mutating func beginFlush(for user: String?) -> [Item]? {
        guard !isFlushing else { return nil }
        let waiting = items.lazy.filter { $0.user == nil || $0.user == user }
        let sendable = Array(waiting.prefix { $0.isStored })
        guard !sendable.isEmpty else {
            // The first is being admitted or removed: the end of that starts the flush again.
            if !waiting.isEmpty { flushWaits = true }
            return nil
        }
        isFlushing = true
        return sendable
    }

    /// Records how a sent request ended; `true` when the flush goes on with the next one.
    mutating func record(_ id: UUID, _ outcome: Outcome) -> Bool {
        switch outcome {
        case .delivered, .rejected:
            items.removeAll { $0.id == id }
            return true
        case .deferred:
            return false
        }
    }

    /// Ends the flush; the wait before the next try when requests for the user still wait,
    /// `nil` when none does.
    ///
    /// - Parameters:
    ///   - stopped: whether the flush stopped on a deferred request (else it sent all it had,
    ///     and what waits now was queued while it ran: the next try is at once).
    ///   - base: the first wait; NaN means 1 second, less than ``minimumRetryDelay`` means that.
    ///   - maximum: the longest wait; NaN means 60 seconds, less than ``minimumRetryDelay`` means that.
    mutating func endFlush(for user: String?, stopped: Bool, base: TimeInterval, maximum: TimeInterval) -> TimeInterval? {
        isFlushing = false
        guard stopped else {
            stoppedFlushes = 0
            return hasItems(for: user) ? 0 : nil
        }
        guard hasItems(for: user) else {
            stoppedFlushes = 0
            return nil
        }
        stoppedFlushes += 1
        return Self.backoff(after: stoppedFlushes, base: base, maximum: maximum)
    }

    /// The wait after `failures` stopped flushes in a row (at least one): `base` doubled each
    /// time, up to `maximum` (NaN and values below ``minimumRetryDelay`` as ``endFlush(for:stopped:base:maximum:)`` reads them).
    static func backoff(after failures: Int, base: TimeInterval, maximum: TimeInterval) -> TimeInterval {
        let exponent = Double(min(max(failures, 1) - 1, 30))
        // Never below the shortest wait, even when the longest is set lower: no tight loop.
        let maximum = maximum.isNaN ? 60 : max(maximum, minimumRetryDelay)
        return min(maximum, retryDelay(base) * pow(2, exponent))
    }

    /// The shortest wait between flush retries, in seconds: a `retryDelay` of 0 must not make a
    /// flush that keeps stopping start again and again without a pause.
    static let minimumRetryDelay: TimeInterval = 0.05

    /// A configured retry delay as used: NaN means 1 second; less than ``minimumRetryDelay``, that.
    static func retryDelay(_ configured: TimeInterval) -> TimeInterval {
        configured.isNaN ? 1 : max(configured, minimumRetryDelay)
    }

    /// Starts removing a stored request for good: until ``endRemoval(_:recorded:)`` it counts as
    /// not stored, so a flush stops before it (a request after it must not overtake it if its
    /// removal cannot be recorded). `false` while a flush runs or when no stored request has `id`.
    mutating func beginRemoval(_ id: UUID) -> Bool {
        guard !isFlushing, let index = items.firstIndex(where: { $0.id == id && $0.isStored }) else { return false }
        items[index].isStored = false
        return true
    }

    /// Ends a removal: the request leaves when its removal is on disk, else it stays where it was.
    /// Returns whether a flush found nothing to send meanwhile because of it (or of another not
    /// stored yet) while requests wait: then a flush is due.
    mutating func endRemoval(_ id: UUID, recorded: Bool) -> Bool {
        if recorded { _ = remove(id) } else { stored(id) }
        defer { flushWaits = false }
        return flushWaits && !items.isEmpty
    }

    /// Removes the requests of users other than `user` (logout policy `.discard`); returns them.
    /// Nobody logged in (`user` is `nil`) is not another user: then nothing is removed.
    mutating func discard(notBelongingTo user: String?) -> [Item] {
        guard let user else { return [] }
        let others = items.filter { $0.user != nil && $0.user != user && $0.isStored }
        items.removeAll { $0.user != nil && $0.user != user && $0.isStored }
        return others
    }

    /// Removes one request (discarded by the caller); `true` when it was waiting.
    mutating func remove(_ id: UUID) -> Bool {
        let before = items.count
        items.removeAll { $0.id == id }
        return items.count != before
    }
}

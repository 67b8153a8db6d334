import Foundation
import Networking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why an offline queue cannot be opened (``OfflineQueue/init(_:)`` throws it), or why its
/// journal stopped recording (``FlushReport/storageFailure``): an app tells its user of a second
/// copy of itself (``folderInUse(_:)``) or a full disk (``noSpace(_:)``) apart from another
/// failure of the storage.
///
/// A request the journal cannot write is not kept, and its caller hears why: the call fails with
/// ``NotQueuedOffline``, whose ``NotQueuedOffline/storageFailure`` is this error (its
/// ``NotQueuedOffline/failure`` is the call's own), and `enqueue(_:through:)` with this error as
/// a custom error named by ``name``: read it with `error.customError(as: OfflineQueueError.self)`.
public enum OfflineQueueError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError, CustomRepositoryErrorType {
    /// Another process (or another queue in this one) has the folder at this path open: one
    /// folder serves one queue at a time.
    case folderInUse(String)
    /// The disk (or the user's quota) has no room left for the journal; the reason says what
    /// could not be written. Once space is freed, the queue goes on where it stopped.
    case noSpace(String)
    /// The queue's folder or journal cannot be used otherwise; the reason says why.
    case storage(String)

    public var description: String {
        switch self {
        case .folderInUse(let path): "another process (or another queue in this one) uses the offline queue in \(path)"
        case .noSpace(let reason), .storage(let reason): reason
        }
    }

    /// The ``description``, so that `localizedDescription` says what happened too.
    public var errorDescription: String? { description }

    /// `offlineQueueStorage`, the name of the custom error `enqueue(_:through:)` fails with.
    public var name: String { "offlineQueueStorage" }

    /// Says the request was not kept, and why.
    public var explanation: String? { "not queued offline: \(description)." }

    /// The error for a failed system call on the journal: `.noSpace` for `ENOSPC` and `EDQUOT`.
    static func system(_ what: String, errno code: Int32) -> OfflineQueueError {
        let reason = "\(what): \(String(cString: strerror(code)))"
        return code == ENOSPC || code == EDQUOT ? .noSpace(reason) : .storage(reason)
    }
}

/// A call the offline queue kept to send later, as the call's error says it: read it with
/// `error.customError(as: QueuedOffline.self)` and await ``OfflineQueue/outcome(of:)`` with its
/// ``ticket`` — the caller always hears whether its request was sent, queued or failed.
public struct QueuedOffline: CustomRepositoryErrorType, Hashable {
    /// The queued request's ticket.
    public let ticket: OfflineTicket
    /// Why it could not be sent now (the network failure, or the status the queue keeps).
    public let reason: String

    public var name: String { "queuedOffline" }

    /// Says the request was kept to send later, under which ticket, and why.
    public var explanation: String? { "kept in the offline queue under ticket \(ticket), to be sent later: \(reason)." }
}

/// A call the offline queue would have kept, but could not keep safely: a signed request whose
/// session names no user, or one that carries a credential of its own (an `Authorization` that
/// is neither the session's nor the configuration's default), which the queue never writes to
/// disk; or one its journal could not write (``storageFailure``). The call fails with this error, named `notQueuedOffline`, whose context is the call's
/// own failure's (with the server's answer, when there was one): read it with
/// `error.customError(as: NotQueuedOffline.self)`.
public struct NotQueuedOffline: CustomRepositoryErrorType {
    /// Why the queue could not keep the request.
    public let reason: String
    /// How the call failed, which made it one to keep: the lost connection, the status the queue
    /// keeps (a 503), or earlier requests waiting to be sent.
    public let failure: RepositoryError
    /// The journal's failure, when that is why the request was not kept (a full disk, say), so an
    /// app can tell its user; `nil` when the queue refused the request itself (a credential of
    /// its own, a request over the journal's 64 MiB record size).
    public let storageFailure: OfflineQueueError?
    /// `failure` in a few words, for the explanation (the call's error names the request already).
    let whyNotSent: String

    public var name: String { "notQueuedOffline" }

    /// Says the request was not kept, why, and why it was not sent now.
    public var explanation: String? { "not queued offline: \(reason), and \(whyNotSent)." }
}

/// A call the offline queue would have kept, but it is full: the request was not kept.
public struct OfflineQueueFull: CustomRepositoryErrorType, Hashable {
    /// Which of the queue's limits kept the request out.
    public enum Limit: Sendable, Hashable {
        /// The queue holds its ``OfflineQueue/Configuration/capacity`` of requests.
        case requests(Int)
        /// With the request (its size as kept), the queue would hold more than its
        /// ``OfflineQueue/Configuration/maximumBytes``.
        case bytes(Int, request: Int)
    }

    /// The queue's capacity in requests (``OfflineQueue/Configuration/capacity``, as used).
    public let capacity: Int
    /// The limit reached.
    public let limit: Limit

    public var name: String { "offlineQueueFull" }

    /// Says the request was not kept because the queue is full, and which limit it reached.
    public var explanation: String? {
        switch limit {
        case .requests(let capacity):
            "failed and was not queued offline: the queue holds its maximum of \(capacity) requests."
        case .bytes(let maximum, let request):
            "failed and was not queued offline: at \(request) bytes it would take the queue over its maximum of \(maximum) bytes."
        }
    }
}

/// Stands for one queued request, to await how it ends.
public struct OfflineTicket: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The request's identity in the queue (its `Idempotency-Key` header is the call's own identity).
    public let id: UUID

    public var description: String { id.uuidString }
}

/// How a call through ``OfflineQueue/perform(_:with:)->OfflineOutcome<T>`` went.
public enum OfflineOutcome<Value: Sendable>: Sendable {
    /// Sent now, with this answer.
    case sent(Value)
    /// Kept to send later: await ``QueuedRequest/result()``.
    case queued(QueuedRequest<Value>)
    /// Failed, and not kept (a 4xx, an invalid request, a full queue, or a request the queue
    /// could not keep: ``NotQueuedOffline``, a full disk included).
    case failed(RepositoryError)
}

/// A request kept by the queue, whose eventual answer can be awaited (in this process).
public struct QueuedRequest<Value: Sendable>: Sendable {
    /// Its ticket.
    public let ticket: OfflineTicket
    let wait: @Sendable () async -> Result<Value, RepositoryError>

    /// Waits until the queue has sent it (or given up on it), and reads the answer as the original
    /// call would. Cancelling the waiting task ends the wait with `RepositoryError.cancelled`; the
    /// request stays queued. Asked long after the request left the queue, it may have been
    /// forgotten (see ``OfflineQueue/outcome(of:)``).
    public func result() async -> Result<Value, RepositoryError> { await wait() }
}

/// What one flush did, for ``OfflineQueue/Configuration/onFlush``.
public struct FlushReport: Sendable {
    /// Requests delivered (2xx), with their tickets.
    public var delivered: [OfflineTicket] = []
    /// Requests the server answered for good with another status, or that could not be sent at
    /// all; they left the queue.
    public var rejected: [(ticket: OfflineTicket, error: RepositoryError)] = []
    /// Requests of another user removed by ``OfflineQueue/Configuration/othersRequests``
    /// `.discard` before this flush.
    public var discarded: [OfflineTicket] = []
    /// Requests still waiting (the network failed, or a status the queue keeps).
    public var remaining: Int = 0
    /// Why the flush stopped early, when it did.
    public var stoppedBy: RepositoryError?
    /// The journal's failure to record that requests left the queue (a full disk), when it
    /// failed: the flush stopped there, and each later flush (on the retry timer, so
    /// ``OfflineQueue/Configuration/onFlush`` hears of it again) sends nothing until the records
    /// are written. Those requests are reported (``delivered``, ``rejected``, ``discarded``) and
    /// their callers answered, but are still on disk until then: a restart would send them again,
    /// under their `Idempotency-Key`, or discard them again.
    public var storageFailure: OfflineQueueError?
}

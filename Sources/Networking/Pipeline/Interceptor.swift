import Foundation
import Synchronization

/// A step around the transport: sees every request on its way out and every response on its
/// way back, and may change either, answer by itself, or fail the call.
///
/// Interceptors form an ordered chain; the outermost sees the request first and the response
/// last. Each calls `next` to pass the request on (zero, one or several times, for example to
/// replay it). Where an interceptor runs is its ``position``; a repository's chain is, outermost first:
///
/// 1. ``InterceptorPosition/outsideRetries`` — sees each request once, whatever the retries below
///    do (a call that sends several — each poll, an event stream's reconnection, a download's
///    restart — passes through once per request);
/// 2. retry (``NetworkingConfiguration/retryPolicy``, or the endpoint's own) — repeats what is inside it;
/// 3. ``InterceptorPosition/beforeSigning`` — sees requests before the session signs them, so
///    nothing it keeps holds a token (where a cache or an offline queue belongs);
/// 4. the session (signing, refresh and replay on 401), when the repository has a session manager;
/// 5. ``InterceptorPosition/afterSigning`` (the default) — sees signed requests;
/// 6. cookies (when ``NetworkingConfiguration/cookieStorage`` is set: an interceptor above does
///    not see the `Cookie` it adds), then logging (``NetworkingConfiguration/logging``) — sees
///    each attempt as it goes on the wire;
/// 7. ``InterceptorPosition/nextToWire`` — last before the transport, after logging (what it
///    changes, such as a signature or compression, is not in the logs);
/// 8. the transport.
///
/// Within one position the configuration's ``NetworkingConfiguration/interceptors`` run first,
/// then the repository's, each in the order given.
///
/// ```swift
/// struct RequestIDInterceptor: Interceptor {
///     func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
///         async throws(RepositoryError) -> TransportResponse {
///         var request = request
///         request.headers["X-Request-ID"] = context.id.uuidString
///         return try await next(request)
///     }
/// }
/// ```
public protocol Interceptor: Sendable {
    /// Where in the chain the interceptor runs. Default ``InterceptorPosition/afterSigning``.
    var position: InterceptorPosition { get }

    /// The option keys this interceptor acts on (see ``RequestOptions``): a call carrying an option
    /// that must be handled fails unless an interceptor of its chain lists it. Default none.
    var handledOptions: [any RequestOptionKey.Type] { get }

    /// Handles one request, calling `next` to pass it on towards the transport.
    ///
    /// - Throws: a ``RepositoryError``, which ends the call with that error.
    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
}

extension Interceptor {
    /// After the session has signed the request, as interceptors ran before positions existed.
    public var position: InterceptorPosition { .afterSigning }

    /// None.
    public var handledOptions: [any RequestOptionKey.Type] { [] }
}

/// Where an ``Interceptor`` runs in a repository's chain; see ``Interceptor`` for the whole order.
public enum InterceptorPosition: Int, Sendable, Hashable, CaseIterable, Comparable {
    /// Outside the retry step: sees each request once (not each attempt), and its final outcome.
    /// How many attempts it took is ``RequestContext/attempt`` once `next` returns or throws (an
    /// error's ``ErrorContext/attempts`` is counted when the call ends, after this step).
    case outsideRetries
    /// Between the retry step and the session: sees every attempt, unsigned.
    case beforeSigning
    /// Between the session and logging: sees every attempt and replay, signed.
    case afterSigning
    /// Between logging and the transport: the last step before the wire.
    case nextToWire

    /// Outer positions come first: the chain's order, outermost first.
    public static func < (lhs: InterceptorPosition, rhs: InterceptorPosition) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The rest of the chain after an interceptor, ending at the transport.
public typealias InterceptorNext = @Sendable (TransportRequest) async throws(RepositoryError) -> TransportResponse

/// What an interceptor may want to know about the call a request belongs to.
public struct RequestContext: Sendable {
    /// Whether the call needs a logged-in session (`false` for login and sign-up).
    public let requiresSession: Bool
    /// Identifies the call across its attempts and replays, for logs and tracing.
    public let id: UUID
    /// The endpoint's name (a route's name, for example), for logs, activity and cache keys.
    public let name: String?
    /// The endpoint's options, for the interceptors that act on them (see ``RequestOptions``),
    /// and what the library notes for them (``StagedBodyFileKey``).
    public internal(set) var options: RequestOptions
    /// The session of the repository making the call, when it has one.
    public let session: (any SessionAuthorizing)?

    /// What the chain's own steps note about the call across its attempts.
    let record: CallRecord
    /// The names the configuration of the repository running the call adds to the built-in
    /// credential names (``NetworkingConfiguration/secretFields``), made once per repository,
    /// which sets them.
    var secretNames: Redaction = .standard
    /// The header fields the repository running the call gives every request (its
    /// configuration's ``NetworkingConfiguration/defaultHeaders``); empty in a context made
    /// outside a repository. A step that keeps a request to send later (an offline queue) tells
    /// by it which credential-named fields are the repository's, added again when it is sent, and
    /// need not be stored.
    public internal(set) var defaultHeaders: HTTPHeaders = [:]

    /// Creates a context for a new call.
    public init(
        requiresSession: Bool, name: String? = nil, options: RequestOptions = RequestOptions(),
        session: (any SessionAuthorizing)? = nil
    ) {
        self.init(requiresSession: requiresSession, name: name, options: options, session: session, record: CallRecord())
    }

    /// The number of the call's current attempt (1 for the first): the retry policy's attempts,
    /// counting one that ends before it is sent (its token refresh failed), which
    /// ``ErrorContext/attempts`` leaves out. The session's replay after a 401 with a refreshed token is part of its
    /// attempt and keeps its number, so a step below the session step may see one number twice.
    public var attempt: Int { record.attempt }

    /// Whether the repository running the call treats a field of this name as a credential: a
    /// built-in name (``HTTPHeaders/isSecretFieldName(_:)``) or one of its configuration's
    /// ``NetworkingConfiguration/secretFields``. A step that keeps answers per caller (a response
    /// cache) asks this, so that a per-user field the app named (`X-User`) keeps users apart.
    public func isSecretFieldName(_ name: String) -> Bool {
        secretNames.isSecret(name)
    }

    /// The context as the repository with these secret field names and default headers runs it.
    func runBy(secretNames: Redaction, defaultHeaders: HTTPHeaders) -> RequestContext {
        var context = self
        context.secretNames = secretNames
        context.defaultHeaders = defaultHeaders
        return context
    }

    /// Whose session signed the call's requests (its ``SessionAuthorizing/sessionIdentity`` as the
    /// request was signed), or `nil` before the call is signed, or when the session names no one.
    /// A step before signing that keeps data per user (a response cache) reads it once `next`
    /// has answered: the session's current identity cannot tell that users switched and switched
    /// back while the call was under way, and that the answer is the other user's. It is the
    /// identity the session's ``SessionAuthorization`` carries (``SessionManager``'s always does),
    /// else the session's identity read just after it authorized the request.
    public var signedSessionIdentity: String? { record.sessionIdentity }

    /// The session that signed the call's requests (``SessionAuthorization/sessionID``), or `nil`
    /// before the call is signed. A feature that answers a 401 itself (a batch replaying its
    /// refused items) gives it, with ``signedCredentialVersion``, to
    /// ``SessionAuthorizing/authorizationRejected(_:)``: a later session (after a logout) never
    /// replays the call.
    public var signedSessionID: Int? { record.sessionID }

    /// The version (``SessionAuthorization/version``) of the credential the session signed the
    /// call's latest request with, or `nil` when the session did not sign it (not yet, no session,
    /// or the configuration's default headers authorize). With ``signedSessionID`` and
    /// ``signedSessionIdentity`` it names the ``SessionAuthorization`` to hand
    /// ``SessionAuthorizing/authorizationRejected(_:)`` when a feature answers a 401 itself.
    public var signedCredentialVersion: Int? { record.credentialVersion }

    /// A context for the next request of the same call (a poll): its own ``id`` (a server that
    /// deduplicates by request id or `Idempotency-Key` must see a new request), the call's record
    /// (so it keeps to the session the call was first signed in).
    func continuing() -> RequestContext {
        RequestContext(requiresSession: requiresSession, name: name, options: options, session: session, record: record)
            .runBy(secretNames: secretNames, defaultHeaders: defaultHeaders)
    }

    /// A context for a request of the call that `record` notes (an event stream's reconnection).
    init(
        requiresSession: Bool, name: String?, options: RequestOptions, session: (any SessionAuthorizing)?, record: CallRecord
    ) {
        self.requiresSession = requiresSession
        self.name = name
        self.options = options
        self.session = session
        id = CallIdentifier.next()
        self.record = record
    }
}

/// The record of the call an endpoint's request belongs to, when it continues an earlier one
/// (an event stream's reconnection keeps to the session its first request was signed in).
enum CallRecordOption: RequestOptionKey {
    static let defaultValue: CallRecord? = nil
}

/// What the chain's own steps note about one call across its attempts: the attempt number,
/// written by the retry step, and the session the call was first signed in (and whose it is), by
/// the session step.
final class CallRecord: Sendable {
    private let attemptNumber = Atomic<Int>(1)
    private let sentCount = Atomic<Int>(0)
    private let session = Mutex<(id: Int, identity: String?)?>(nil)

    var attempt: Int {
        get { attemptNumber.load(ordering: .relaxed) }
        set { attemptNumber.store(newValue, ordering: .relaxed) }
    }

    /// How many of the call's attempts reached the transport, over all its requests: fewer than
    /// ``attempt`` when the latest was cancelled on its way there (in an interceptor's wait). An
    /// attempt replayed after a 401 (its token refreshed) counts once.
    var sent: Int { sentCount.load(ordering: .relaxed) }

    /// The latest attempt handed to the transport, 0 before any.
    private let lastSent = Atomic<Int>(0)

    /// Starts a new request of the call (a poll, a download's next part) at attempt 1. What was
    /// sent stays counted: an error of a later request never says the call was not sent when an
    /// earlier one went out. The session the call was first signed in stays too.
    func beginRequest() {
        attempt = 1
        lastSent.store(0, ordering: .relaxed)
    }

    /// Notes that the current attempt is handed to the transport (again, for a replay).
    func noteSent() {
        let attempt = attempt
        if lastSent.exchange(attempt, ordering: .relaxed) != attempt { sentCount.add(1, ordering: .relaxed) }
    }

    /// The session the call was first signed in, or `nil` before it was signed.
    var sessionID: Int? { session.withLock { $0?.id } }

    /// Whose session that is, when it said.
    var sessionIdentity: String? { session.withLock { $0?.identity } }

    private let version = Mutex<Int?>(nil)

    /// The version of the credential the latest request was signed with, if the session signed it.
    var credentialVersion: Int? {
        get { version.withLock { $0 } }
        set { version.withLock { $0 = newValue } }
    }

    /// A record for another request of the same call (an event stream's reconnection): attempts
    /// of its own, kept to the session this call was first signed in.
    func continuing() -> CallRecord {
        let next = CallRecord()
        if let signed = session.withLock({ $0 }) { next.signed(in: signed.id, as: signed.identity) }
        return next
    }

    /// Notes that an attempt was signed in `sessionID`, `identity`'s; only the first one counts
    /// (every later attempt is signed in the same session, or not at all).
    func signed(in sessionID: Int, as identity: String?) {
        session.withLock { if $0 == nil { $0 = (sessionID, identity) } }
    }
}

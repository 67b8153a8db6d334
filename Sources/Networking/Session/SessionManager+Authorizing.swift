import Foundation

extension SessionManager {
    /// What a request must do, decided under the lock and carried out after it.
    private enum Step {
        /// Sign with `credential`; `user` and `identity` name whose session it is (see `sessionIdentity`).
        case sign(Credential, version: Int, session: Int, user: User?, identity: String?)
        case loggedOut
        case wait(Int)
        /// Start the refresh `refresh` of the credential of `session`, then wait for it.
        case refresh(Int, Credential, session: Int, refresh: Int)
        /// End the session (it cannot be refreshed), then answer as logged out; `version`: the
        /// credential's, which a replaced one keeps from being ended.
        case expire(session: Int, version: Int)
        /// End the session, then fail.
        case expireAndFail(session: Int, version: Int, RepositoryError)
        /// Fail, leaving the session as it is.
        case fail(RepositoryError)

        /// Whether the request waits for a refresh, then asks again.
        var waits: Bool {
            switch self {
            case .wait, .refresh: true
            case .sign, .loggedOut, .expire, .expireAndFail, .fail: false
            }
        }
    }

    public func authorize() async throws(RepositoryError) -> SessionAuthorization? {
        try await authorize(expecting: nil)
    }

    public func authorize(inSession sessionID: Int) async throws(RepositoryError) -> SessionAuthorization? {
        try await authorize(expecting: sessionID)
    }

    /// The error of a call that needs the session, made from inside its refresh: a refresh
    /// failure, which keeps the session (and which the offline queue keeps its requests for).
    private static var callInsideRefresh: RepositoryError {
        .sessionRefreshFailed(
            .refresherFailed(
                .invalidRequest(
                    reason: "the token refresher's call needs the session it is refreshing; send it with performAuthenticationRequest",
                    request: nil)), nil)
    }

    /// Signs in session `expected`, or in the current one when `nil`.
    private func authorize(expecting pinned: Int?) async throws(RepositoryError) -> SessionAuthorization? {
        let marker = RefreshingManager.current.flatMap { $0.manager == ObjectIdentifier(self) ? $0 : nil }
        // The session the request was made in, once known: after a wait it is signed in that
        // session or not at all, never with the credential of a user who logged in meanwhile.
        var session = pinned
        // A request refreshes before sending at most once: tokens that expire as soon as they
        // arrive must not refresh it in a loop.
        var waited = false
        while true {
            let now = clock.now()
            let known = session
            let (step, current) = state.withLock { state -> (Step, Int?) in
                // A call of the refresher (or of a task it started) while the refresher runs
                // belongs to the session it refreshes.
                let expected = known ?? marker.flatMap { state.refreshersRunning.contains($0.refresh) ? $0.session : nil }
                guard let credential = state.credential, expected == nil || expected == state.sessionID else {
                    return (.loggedOut, nil)
                }
                // A call made by the refresher (or a task it started) that needs this session
                // would wait for the very refresh it is part of: it fails while that refresh runs.
                if let marker, state.refresh.isRefreshing, state.refresh.refreshID == marker.refresh {
                    return (.fail(Self.callInsideRefresh), state.sessionID)
                }
                let id = newWaiter(&state)
                let decision = state.refresh.credentialNeeded(
                    by: id, isExpired: !waited && state.needsRefresh(at: now, leeway: refreshPolicy.clampedLeeway),
                    isUsable: !state.needsRefresh(at: now, leeway: 0), canRefresh: canRefresh(credential), now: now)
                return (decide(decision, waiter: id, credential: credential, state: &state), state.sessionID)
            }
            session = current
            let (authorization, again) = try await perform(step)
            if authorization != nil || !again { return authorization }
            waited = waited || step.waits
        }
    }

    public func authorizationRejected(_ authorization: SessionAuthorization) async throws(RepositoryError) -> SessionAuthorization? {
        // Asks again after each wait: a refresh of this session has changed the version by then,
        // and one of a session that ended meanwhile has not, so this one refreshes in turn.
        while true {
            let now = clock.now()
            let step = state.withLock { state -> Step in
                // Only the session that signed the request may replay it: never another user's.
                guard let credential = state.credential, state.sessionID == authorization.sessionID else { return .loggedOut }
                let id = newWaiter(&state)
                // Expired by now, not within the leeway: a token still good is replayed as it is.
                let decision = state.refresh.rejected(
                    id, signedVersion: authorization.version, isExpired: state.needsRefresh(at: now, leeway: 0),
                    canRefresh: canRefresh(credential), now: now)
                return decide(decision, waiter: id, credential: credential, state: &state)
            }
            let (replay, again) = try await perform(step)
            if replay != nil || !again { return replay }
        }
    }

    public func replayRejected(_ authorization: SessionAuthorization) async {
        let session = state.withLock { state -> Int? in
            guard state.credential != nil, state.sessionID == authorization.sessionID,
                state.refresh.version == authorization.version, !state.refresh.isRefreshing
            else {
                return nil
            }
            return state.sessionID
        }
        if let session { expire(session: session, version: authorization.version) }
    }

    /// The scheme's header for `credential`: user code, so never called under the lock.
    private func signing(_ credential: Credential, version: Int, session: Int, identity: String?) -> SessionAuthorization {
        SessionAuthorization(
            headerValue: authorizationScheme.headerValue(credential), version: version, sessionID: session, sessionIdentity: identity)
    }

    private func canRefresh(_ credential: Credential) -> Bool {
        refresher != nil && credential.refreshToken?.isEmpty == false
    }

    private func newWaiter(_ state: inout State) -> Int {
        // Wrapping: unique among the waiters alive, which is all it needs (an `Int` has 32 bits on watchOS).
        state.nextWaiter &+= 1
        return state.nextWaiter
    }

    private func decide(
        _ decision: RefreshStateMachine.Decision, waiter: Int, credential: Credential, state: inout State
    ) -> Step {
        switch decision {
        case .proceed(let version):
            return .sign(credential, version: version, session: state.sessionID, user: state.user, identity: state.identity)
        case .wait:
            state.waits[waiter] = .registered
            return .wait(waiter)
        case .startRefresh:
            state.waits[waiter] = .registered
            return .refresh(waiter, credential, session: state.sessionID, refresh: state.refresh.refreshID)
        case .giveUp:
            return .expire(session: state.sessionID, version: state.refresh.version)
        case .excessive:
            let window = state.refresh.window
            let error = RepositoryError.sessionRefreshFailed(
                .excessiveRefresh(maximum: window.maximumRefreshes, interval: window.interval), nil)
            return .expireAndFail(session: state.sessionID, version: state.refresh.version, error)
        case .coolingDown:
            return .fail(state.refresh.coolingFailure ?? .sessionRefreshFailed(.refresherFailed(.cancelled(nil)), nil))
        }
    }

    /// Carries out a step: returns the authorization to sign with, or none, and then whether to
    /// ask again — after a wait (see `Step.waits`), or when the session was to end but its
    /// credential had been replaced meanwhile (`update(credential:)`): the new one decides.
    private func perform(_ step: Step) async throws(RepositoryError) -> (SessionAuthorization?, again: Bool) {
        switch step {
        case .sign(let credential, let version, let session, let user, let identity):
            return (signing(credential, version: version, session: session, identity: Self.identity(of: user, fixed: identity)), false)
        case .loggedOut: return (nil, false)
        case .expire(let session, let version):
            return (nil, !expire(session: session, version: version) && isCurrent(session))
        case .expireAndFail(let session, let version, let error):
            guard expire(session: session, version: version) || !isCurrent(session) else { return (nil, true) }
            throw error
        case .fail(let error):
            throw error
        case .refresh(let waiter, let credential, let session, let refresh):
            startRefresh(refresh, of: credential, in: session)
            try await wait(for: waiter)
            return (nil, true)
        case .wait(let waiter):
            try await wait(for: waiter)
            return (nil, true)
        }
    }

    /// Whether `session` is still the current one.
    private func isCurrent(_ session: Int) -> Bool {
        state.withLock { $0.credential != nil && $0.sessionID == session }
    }

    /// Runs the refresh in its own task, so that a cancelled request does not cancel it for the others.
    private func startRefresh(_ refresh: Int, of credential: Credential, in session: Int) {
        guard let refresher else { return }
        let marker = RefreshingManager.Marker(manager: ObjectIdentifier(self), refresh: refresh, session: session)
        // Only while it is still the running refresh: a logout or a new login between the
        // decision and here abandoned it, and the ended session's refresh token must not be sent.
        let running = state.withLock { state in
            guard state.refresh.isRefreshing, state.refresh.refreshID == refresh else { return false }
            state.refreshersRunning.insert(refresh)
            return true
        }
        guard running else { return }
        // Real time, not the manager's clock (a test clock's waits end at once). The refresher
        // is not cancelled: a refresh that ends after all is still taken (see `RefreshStateMachine`).
        let watchdog = refreshPolicy.timeLimit.map { limit in
            Task {
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                finishRefresh(
                    refresh, of: credential, in: session,
                    with: .failure(.sessionRefreshFailed(.timedOut(after: refreshPolicy.timeout), nil)), timedOut: true)
            }
        }
        Task {
            // Another process sharing the store may have refreshed this very credential already
            // (its refresh token is then used up): its newer credential is taken instead.
            let storedFirst = await OwnThread.run { [self] _ in storedByAnother(replacing: credential) }
            var result: Result<Credential, RepositoryError>
            if let storedFirst {
                result = .success(storedFirst)
            } else {
                result = await RefreshingManager.$current.withValue(marker) { await refresher.refreshCredential(credential) }
            }
            // Returned: from here a watchdog that wakes changes nothing (see `finishRefresh`).
            state.withLock { _ = $0.refreshersRunning.remove(refresh) }
            watchdog?.cancel()
            // Refused because another process refreshed it first, and stored the outcome.
            var adopted = storedFirst != nil
            if case .failure(let error) = result, error.isRefreshRejection,
                let stored = await OwnThread.run({ [self] _ in storedByAnother(replacing: credential) })
            {
                result = .success(stored)
                adopted = true
            }
            finishRefresh(refresh, of: credential, in: session, with: result.flatMap(Self.usable), adopted: adopted)
        }
    }

    /// A refreshed credential without an access token is a failed refresh that keeps the session
    /// (it would sign requests `Bearer ` and, stored, read as no session at the next launch,
    /// losing the refresh token that still works).
    private static func usable(_ credential: Credential) -> Result<Credential, RepositoryError> {
        guard credential.accessToken.isEmpty else { return .success(credential) }
        return .failure(.invalidRequest(reason: "the token refresher returned a credential with an empty access token", request: nil))
    }

    /// Takes the refresh's outcome: the new credential is used (and the waiters woken) at once;
    /// the store and the subscribers hear of it afterwards, with the turn.
    ///
    /// A failure ends the session only when the server rejected the refresh
    /// (`RepositoryError.isRefreshRejection`), or could not be reached and
    /// ``RefreshPolicy/expiresSessionWhenUnreachable`` says so; any other failure fails the
    /// waiters and keeps the session and the store. A failed refresh of a credential that is no
    /// longer the current one (the session ended or was given another) fails nobody: its waiters ask again.
    ///
    /// `timedOut`: the outcome is the watchdog's (``RefreshPolicy/timeout``), its error the
    /// waiters' as it is; it does nothing once the refresh has ended. `adopted`: the credential
    /// is another holder's, read from the store (`storedByAnother(replacing:)`): not written
    /// back, and not taken as fresh from a refresh (its lifetime is not known).
    private func finishRefresh(
        _ refresh: Int, of old: Credential, in session: Int, with result: Result<Credential, RepositoryError>,
        timedOut: Bool = false, adopted: Bool = false
    ) {
        switch result {
        case .success(let new):
            let now = clock.now()
            // In memory at once (under the gate's lock, so no transition starts in between);
            // stored with the turn, on the transitions' queue: never a request's wait.
            gate.runSoon(
                now: {
                    state.withLock { state -> Bool in
                        let (keep, woken) = state.refresh.refreshSucceeded(refresh)
                        let replaces = keep && state.sessionID == session && state.credential == old
                        if replaces {
                            state.credential = new
                            state.refreshedAt = adopted ? nil : now
                            // Read from the store: a 401 that ends the session before the turn
                            // below must find the store holding this manager's own.
                            if adopted { state.lastStored = new }
                        }
                        for waiter in woken { state.resolve(waiter, with: .refreshed) }
                        return replaces
                    }
                },
                later: { [self] in
                    // A later transition (logout, another login) has the last word.
                    let (current, user) = state.withLock { ($0.credential, $0.user) }
                    guard current == new else { return }
                    if !adopted {
                        do throws(SessionError) {
                            try persist(new, user)
                        } catch {
                            if case .storeFailed(let storeError) = error { emit(.storeFailed(storeError)) }
                        }
                    }
                    emit(.credentialUpdated)
                })
        case .failure(let error):
            let rejected = error.isRefreshRejection
            let endsSession = rejected || (error.isConnectivityFailure && refreshPolicy.expiresSessionWhenUnreachable)
            let waitersError = timedOut ? error : .sessionRefreshFailed(.refresherFailed(error), nil)
            let failure = WaitOutcome.failed(waitersError)
            let now = clock.now()
            let offline = if case .noNetworkConnection = error { true } else { false }
            typealias Ending = (session: Int, version: Int)?
            let (ending, waiters, outcome) = state.withLock { state -> (Ending, [Int], WaitOutcome) in
                // A refresh that ended already, or whose refresher has returned (the watchdog woke
                // as it did), changes nothing.
                guard state.refresh.awaits(refresh), !timedOut || state.refreshersRunning.contains(refresh) else {
                    return (nil, [], .superseded)
                }
                let current = state.sessionID == session && state.credential == old
                let outcome = current ? failure : WaitOutcome.superseded
                // Only a rejection stays in the refresh window (see `RefreshWindow`); any other
                // failure of a session that goes on starts the cool-down (see
                // `RefreshPolicy.failureCoolDown`), unless it reached no server (a device offline
                // that comes back must refresh at once).
                let coolsDown = current && !endsSession && !offline
                let waiters = state.refresh.refreshFailed(
                    refresh, counts: rejected && current, coolingDown: coolsDown ? (waitersError, now) : nil,
                    timedOut: timedOut ? waitersError : nil)
                return (endsSession && current ? (session, state.refresh.version) : nil, waiters, outcome)
            }
            // The session ends before its waiters hear why: none of them finds it still going.
            // A credential replaced since the decision (`update(credential:)`) keeps the session:
            // the waiters then ask again, and are signed with it.
            let superseded = ending.map { !expire(session: $0.session, version: $0.version) && isCurrent($0.session) } ?? false
            let told = superseded ? .superseded : outcome
            if !waiters.isEmpty { state.withLock { state in for waiter in waiters { state.resolve(waiter, with: told) } } }
        }
    }

    /// Waits until the refresh `waiter` joined ends; a cancelled task stops waiting at once.
    private func wait(for waiter: Int) async throws(RepositoryError) {
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WaitOutcome, Never>) in
                state.withLock { state in
                    if case .finished(let outcome)? = state.waits[waiter] {
                        state.waits[waiter] = nil
                        continuation.resume(returning: outcome)
                    } else {
                        state.waits[waiter] = .waiting(continuation)
                    }
                }
            }
        } onCancel: {
            state.withLock { state in
                guard state.refresh.cancel(waiter) else { return }
                state.resolve(waiter, with: .failed(.cancelled(nil)))
            }
        }
        if case .failed(let error) = outcome { throw error }
    }
}

/// The `Authorization` a request was signed with, the version of the credential it came from,
/// and the session it was signed in.
public struct SessionAuthorization: Sendable, Hashable {
    /// The header value, for example `Bearer abc`.
    public let headerValue: String
    /// Increases whenever the credential is replaced, so a 401 can be matched to the credential it rejected.
    public let version: Int
    /// The session it was signed in; ``SessionManager`` gives each login and restore a new one,
    /// so that a request is never signed or replayed with the credential of a later session
    /// (another user's). Default 0, which is no ``SessionManager`` session.
    public let sessionID: Int
    /// Whose session it was signed in (``SessionAuthorizing/sessionIdentity`` at that moment), so
    /// that a call made for one user is never signed for another, even when users switch while
    /// it is signed. `nil` when not known; the repository then reads the session's current one.
    public let sessionIdentity: String?

    /// Creates an authorization.
    ///
    /// - Parameters:
    ///   - headerValue: The `Authorization` header value.
    ///   - version: The credential's version, increased whenever it is replaced.
    ///   - sessionID: The session it was signed in; 0 for none.
    ///   - sessionIdentity: Whose session that is, when known.
    public init(headerValue: String, version: Int, sessionID: Int = 0, sessionIdentity: String? = nil) {
        self.headerValue = headerValue
        self.version = version
        self.sessionID = sessionID
        self.sessionIdentity = sessionIdentity
    }
}

/// Obtains a new credential when the access token has expired — usually a repository calling the
/// API's refresh endpoint with ``Credential/refreshToken``.
///
/// The call must not need the session (use ``AbstractRepository/performAuthenticationRequest(_:)-(Endpoint<T>)``):
/// one that does fails at once with ``RefreshFailure/refresherFailed(_:)`` (the session is kept),
/// since it would wait for the refresh it is part of.
///
/// How the failure is told decides what happens to the session: the server's 400, 401 or 403
/// (as the repository reports them), or ``RepositoryError/unauthenticatedSession(_:)`` or
/// ``RepositoryError/authenticationFailed(_:)`` from the refresher itself, say the refresh token
/// is no good and end the session; any other error keeps it, to refresh again later.
public protocol TokenRefresher: Sendable {
    /// Exchanges `credential` (with its refresh token) for a new one.
    func refreshCredential(_ credential: Credential) async -> Result<Credential, RepositoryError>
}

/// When a ``SessionManager`` refreshes, and how often at most.
public struct RefreshPolicy: Sendable {
    /// Refresh this many seconds before the known expiry, so a token does not expire in flight. Default 30.
    ///
    /// For a token fresh from a refresh, the leeway is at most half the lifetime it arrived
    /// with, so a token that lives less than twice the leeway is not refreshed again on
    /// arrival; and one that arrives already expired by the device's clock (a clock running
    /// ahead of the server's) is used until the server answers 401, instead of refreshed in a
    /// loop. A request refreshes before sending at most once: after that refresh it is sent with
    /// what it brought, however short-lived.
    public var leeway: TimeInterval
    /// At most this many refreshes started by a 401 within an interval;
    /// more end the session with ``RefreshFailure/excessiveRefresh(maximum:interval:)``.
    /// Default 5 per 30 seconds. A refresh before sending (the token is about to expire), and
    /// one that failed without the server rejecting it, are not counted.
    public var window: RefreshWindow
    /// Whether a refresh that fails because the server cannot be reached or timed out
    /// (``RepositoryError/isConnectivityFailure``) ends the session.
    /// Default `false`: the waiting requests fail, but the session is kept to try again later.
    ///
    /// Whatever this says, a refresh the server rejects — an answer of 400, 401 or 403 — always
    /// ends the session, and any other failed refresh (a 5xx or 429, a TLS failure, an answer
    /// that does not decode, a cancellation) never does: its waiting requests fail, and the
    /// session and its stored credential are kept.
    public var expiresSessionWhenUnreachable: Bool
    /// For this many seconds after a refresh failed without the server rejecting it (timed out,
    /// a 5xx, 429 or another 4xx, an answer that does not decode), a request that would refresh
    /// the same credential again fails at once with that refresh's error instead of calling the
    /// refresher. Default 1, counted from the failure; the auth server's `Retry-After` is not read.
    /// A refresh that reached no server (``RepositoryError/noNetworkConnection(_:_:)``: offline,
    /// refused, no such host) starts none: a device back online refreshes at once. A token that
    /// is only about to expire (within ``leeway``) is still sent meanwhile.
    ///
    /// An auth server failing fast (a 503 in 20 ms) then gets one refresh per cool-down, not one
    /// per request answered 401 meanwhile. A request signed with an older credential is still
    /// replayed with the current one, a new credential (a login,
    /// ``SessionManager/update(credential:)``) ends the cool-down, and 0 (or a negative or NaN
    /// value) turns it off; `.infinity` refreshes a credential at most once until it is replaced.
    public var failureCoolDown: TimeInterval
    /// How long, in seconds of real time, the requests waiting for a refresh wait at most.
    /// Default 60.
    ///
    /// A refresher that hangs would otherwise hold every request of its session until it is
    /// cancelled. When the time is up the waiting requests fail with
    /// ``RefreshFailure/timedOut(after:)``, a connectivity failure: the session is kept (unless
    /// ``expiresSessionWhenUnreachable``). The refresher is not cancelled, and until it returns no
    /// other refresh of that credential starts: it would send the same refresh token, which a
    /// server that rotates them has used up. Meanwhile a request that would refresh fails at
    /// once with the same error (one whose token is only about to expire is sent with it). What
    /// the refresher returns later is still taken while that credential is current: a new
    /// credential, or a rejection that ends the session; after any other failure the next
    /// request refreshes again, after that failure's own cool-down. A credential given with
    /// ``SessionManager/update(credential:)`` meanwhile ends the wait, and the refresher's outcome
    /// is ignored. ``SessionManager/waitUntilStored()`` does not wait for such a refresher. Keep
    /// the refresher's own call shorter (its `timeout:`, and its retries). 0, a negative or NaN
    /// value, or `.infinity` sets no limit; a positive limit is at least a millisecond.
    public var timeout: TimeInterval

    /// Creates a policy; every argument has the documented default.
    public init(
        leeway: TimeInterval = 30, window: RefreshWindow = RefreshWindow(), expiresSessionWhenUnreachable: Bool = false,
        failureCoolDown: TimeInterval = 1, timeout: TimeInterval = 60
    ) {
        self.leeway = leeway
        self.window = window
        self.expiresSessionWhenUnreachable = expiresSessionWhenUnreachable
        self.failureCoolDown = failureCoolDown
        self.timeout = timeout
    }

    /// The ``timeout`` as a wait, or `nil` for none.
    var timeLimit: Duration? {
        guard timeout > 0, timeout.isFinite else { return nil }
        // At least a millisecond: a limit that rounds to none would time out every refresh at once.
        return max(.clampedSeconds(timeout), .milliseconds(1))
    }

    /// The leeway as used: a negative or NaN one is zero; an infinite one makes every token with
    /// a known expiry count as expired (but a refreshed one, see ``leeway``).
    var clampedLeeway: TimeInterval { leeway >= 0 ? min(leeway, Duration.longestSeconds) : 0 }
}

/// Why refreshing the session's token failed.
public enum RefreshFailure: Sendable, CustomStringConvertible {
    /// The refresher failed with the error given: the refresh endpoint rejected the refresh token
    /// (400, 401 or 403), which ends the session, or the refresh failed otherwise — unreachable,
    /// timed out, a 5xx, 429 or another 4xx, an answer that does not decode — which keeps it to
    /// try again later (see ``RefreshPolicy``).
    indirect case refresherFailed(RepositoryError)
    /// More refreshes than the ``RefreshWindow`` allows: the server keeps rejecting new tokens.
    case excessiveRefresh(maximum: Int, interval: TimeInterval)
    /// The refresh did not end within ``RefreshPolicy/timeout`` (seconds): a connectivity
    /// failure, which keeps the session (see ``RefreshPolicy/expiresSessionWhenUnreachable``).
    case timedOut(after: TimeInterval)

    public var description: String {
        switch self {
        // A refresher's call that needed the session fails with a refresh failure of its own: say it once.
        case .refresherFailed(.sessionRefreshFailed(let inner, _)): inner.description
        case .refresherFailed(let error): "the refresh failed: \(error.description.clause)"
        case .excessiveRefresh(let maximum, let interval):
            "more than \(maximum) refreshes within \(Self.seconds(interval)) seconds, so the server keeps rejecting new tokens"
        case .timedOut(let seconds):
            // Also for a request held back meanwhile, which did not wait: the refresh is what timed out.
            "the refresh did not end within \(Self.seconds(seconds)) seconds, and no other refresh of that credential starts until it returns"
        }
    }

    /// Whole seconds without a fraction; `Int(exactly:)`: an infinite or fractional value is
    /// valid, never a trap.
    private static func seconds(_ value: TimeInterval) -> String {
        Int(exactly: value).map(String.init) ?? "\(value)"
    }
}

/// The session manager and refresh the current task runs (or was started from), so that a call
/// of the refresher that needs that session fails at once instead of waiting for the refresh it
/// is part of. Tasks the refresher starts inherit it; while the refresher runs, it pins their
/// calls to the session it refreshes (never signed for a user who logged in since), and fails
/// them while that refresh is still the running one. After the refresher returns it counts no more.
enum RefreshingManager {
    struct Marker: Sendable, Equatable {
        let manager: ObjectIdentifier
        let refresh: Int
        /// The session refreshed: the refresher's calls are never signed in another one.
        let session: Int
    }

    @TaskLocal static var current: Marker?
}

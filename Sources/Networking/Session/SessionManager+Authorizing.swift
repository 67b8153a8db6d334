import Foundation

extension SessionManager {
    /// What a request must do, decided under the lock and carried out after it.
    private enum Step {
        case sign(Credential, version: Int)
        case loggedOut
        case wait(Int)
        case refresh(Int, Credential)
        /// End the session (it cannot be refreshed), then answer as logged out.
        case expire(session: Int)
        /// End the session, then fail.
        case expireAndFail(session: Int, RepositoryError)
    }

    public func authorize() async throws(RepositoryError) -> SessionAuthorization? {
        while true {
            let now = clock.now()
            let step = state.withLock { state -> Step in
                guard let credential = state.credential else { return .loggedOut }
                let id = newWaiter(&state)
                let decision = state.refresh.credentialNeeded(
                    by: id, isExpired: credential.isExpired(at: now, leeway: refreshPolicy.clampedLeeway),
                    canRefresh: canRefresh(credential), now: now)
                return decide(decision, waiter: id, credential: credential, state: &state)
            }
            switch try await perform(step) {
            case .some(let authorization): return authorization
            case .none where !isLoggedIn: return nil
            case .none: continue
            }
        }
    }

    public func authorizationRejected(_ authorization: SessionAuthorization) async throws(RepositoryError) -> SessionAuthorization? {
        let now = clock.now()
        let step = state.withLock { state -> Step in
            guard let credential = state.credential else { return .loggedOut }
            let id = newWaiter(&state)
            let decision = state.refresh.rejected(
                id, signedVersion: authorization.version, canRefresh: canRefresh(credential), now: now)
            return decide(decision, waiter: id, credential: credential, state: &state)
        }
        if let replay = try await perform(step) { return replay }
        return currentAuthorization()
    }

    public func replayRejected(_ authorization: SessionAuthorization) async {
        let session = state.withLock { state -> Int? in
            guard state.credential != nil, state.refresh.version == authorization.version, !state.refresh.isRefreshing else {
                return nil
            }
            return state.sessionID
        }
        if let session { expire(session: session) }
    }

    /// The authorization for the current credential, or `nil` when logged out.
    func currentAuthorization() -> SessionAuthorization? {
        let current = state.withLock { state in state.credential.map { ($0, state.refresh.version) } }
        return current.map { signing($0.0, version: $0.1) }
    }

    /// The scheme's header for `credential`: user code, so never called under the lock.
    private func signing(_ credential: Credential, version: Int) -> SessionAuthorization {
        SessionAuthorization(headerValue: authorizationScheme.headerValue(credential), version: version)
    }

    private func canRefresh(_ credential: Credential) -> Bool {
        refresher != nil && credential.refreshToken?.isEmpty == false
    }

    private func newWaiter(_ state: inout State) -> Int {
        state.nextWaiter += 1
        return state.nextWaiter
    }

    private func decide(
        _ decision: RefreshStateMachine.Decision, waiter: Int, credential: Credential, state: inout State
    ) -> Step {
        switch decision {
        case .proceed(let version):
            return .sign(credential, version: version)
        case .wait:
            state.waits[waiter] = .registered
            return .wait(waiter)
        case .startRefresh:
            state.waits[waiter] = .registered
            return .refresh(waiter, credential)
        case .giveUp:
            return .expire(session: state.sessionID)
        case .excessive:
            let window = state.refresh.window
            let error = RepositoryError.sessionRefreshFailed(
                .excessiveRefresh(maximum: window.maximumRefreshes, interval: window.interval), nil)
            return .expireAndFail(session: state.sessionID, error)
        }
    }

    /// Carries out a step: returns the authorization to sign with, or `nil` to ask again (after a
    /// wait) or because the session ended.
    private func perform(_ step: Step) async throws(RepositoryError) -> SessionAuthorization? {
        switch step {
        case .sign(let credential, let version): return signing(credential, version: version)
        case .loggedOut: return nil
        case .expire(let session):
            expire(session: session)
            return nil
        case .expireAndFail(let session, let error):
            expire(session: session)
            throw error
        case .refresh(let waiter, let credential):
            startRefresh(of: credential)
            try await wait(for: waiter)
            return nil
        case .wait(let waiter):
            try await wait(for: waiter)
            return nil
        }
    }

    /// Runs the refresh in its own task, so that a cancelled request does not cancel it for the others.
    private func startRefresh(of credential: Credential) {
        guard let refresher else { return }
        Task {
            let result = await refresher.refreshCredential(credential)
            finishRefresh(of: credential, with: result)
        }
    }

    /// Takes the refresh's outcome: the new credential is used (and the waiters woken) at once;
    /// the store and the subscribers hear of it afterwards, with the turn.
    private func finishRefresh(of old: Credential, with result: Result<Credential, RepositoryError>) {
        switch result {
        case .success(let new):
            // In memory at once (under the gate's lock, so no transition starts in between);
            // stored with the turn, on the transitions' queue: never a request's wait.
            gate.runSoon(
                now: {
                    state.withLock { state -> Bool in
                        let (keep, woken) = state.refresh.refreshSucceeded()
                        let replaces = keep && state.credential == old
                        if replaces { state.credential = new }
                        for waiter in woken { resolve(waiter, with: .refreshed, in: &state) }
                        return replaces
                    }
                },
                later: { [self] in
                    // A later transition (logout, another login) has the last word.
                    let (current, user) = state.withLock { ($0.credential, $0.user) }
                    guard current == new else { return }
                    do throws(SessionError) {
                        try persist(new, user)
                    } catch {
                        if case .storeFailed(let storeError) = error { emit(.storeFailed(storeError)) }
                    }
                    emit(.credentialUpdated)
                })
        case .failure(let error):
            let keepsSession = error.isConnectivityFailure && !refreshPolicy.expiresSessionWhenUnreachable
            let outcome = WaitOutcome.failed(.sessionRefreshFailed(.refresherFailed(error), nil))
            let ending = state.withLock { state -> Int? in
                for waiter in state.refresh.refreshFailed() { resolve(waiter, with: outcome, in: &state) }
                return !keepsSession && state.credential == old ? state.sessionID : nil
            }
            if let ending { expire(session: ending) }
        }
    }

    private func resolve(_ waiter: Int, with outcome: WaitOutcome, in state: inout State) {
        switch state.waits[waiter] {
        case .waiting(let continuation)?:
            state.waits[waiter] = nil
            continuation.resume(returning: outcome)
        case .registered?:
            state.waits[waiter] = .finished(outcome)
        case .finished?, nil:
            break
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
                resolve(waiter, with: .failed(.cancelled(nil)), in: &state)
            }
        }
        if case .failed(let error) = outcome { throw error }
    }
}

/// The `Authorization` a request was signed with, and the version of the credential it came from.
public struct SessionAuthorization: Sendable, Hashable {
    /// The header value, for example `Bearer abc`.
    public let headerValue: String
    /// Increases whenever the credential is replaced, so a 401 can be matched to the credential it rejected.
    public let version: Int

    /// Creates an authorization.
    public init(headerValue: String, version: Int) {
        self.headerValue = headerValue
        self.version = version
    }
}

/// Obtains a new credential when the access token has expired — usually a repository calling the
/// API's refresh endpoint with ``Credential/refreshToken``.
///
/// The call must not need the session (use ``AbstractRepository/performAuthenticationRequest(_:)-(Endpoint<T>)``),
/// or it would wait for itself.
public protocol TokenRefresher: Sendable {
    /// Exchanges `credential` (with its refresh token) for a new one.
    func refreshCredential(_ credential: Credential) async -> Result<Credential, RepositoryError>
}

/// When a ``SessionManager`` refreshes, and how often at most.
public struct RefreshPolicy: Sendable {
    /// Refresh this many seconds before the known expiry, so a token does not expire in flight. Default 30.
    public var leeway: TimeInterval
    /// At most this many refreshes within an interval; more end the session with
    /// ``RefreshFailure/excessiveRefresh(maximum:interval:)``. Default 5 per 30 seconds.
    public var window: RefreshWindow
    /// Whether a refresh that fails because the server cannot be reached ends the session.
    /// Default `false`: the waiting requests fail, but the session is kept to try again later;
    /// a refresh the server rejects always ends it.
    public var expiresSessionWhenUnreachable: Bool

    /// Creates a policy; every argument has the documented default.
    public init(leeway: TimeInterval = 30, window: RefreshWindow = RefreshWindow(), expiresSessionWhenUnreachable: Bool = false) {
        self.leeway = leeway
        self.window = window
        self.expiresSessionWhenUnreachable = expiresSessionWhenUnreachable
    }

    /// The leeway as used: a negative or NaN one is zero; an infinite one makes every token with
    /// a known expiry count as expired.
    var clampedLeeway: TimeInterval { leeway >= 0 ? min(leeway, Duration.longestSeconds) : 0 }
}

/// Why refreshing the session's token failed.
public enum RefreshFailure: Sendable, CustomStringConvertible {
    /// The refresher failed: the refresh endpoint rejected the refresh token, or could not be reached.
    indirect case refresherFailed(RepositoryError)
    /// More refreshes than the ``RefreshWindow`` allows: the server keeps rejecting new tokens.
    case excessiveRefresh(maximum: Int, interval: TimeInterval)

    public var description: String {
        switch self {
        case .refresherFailed(let error): "the refresh failed: \(error)"
        case .excessiveRefresh(let maximum, let interval):
            // `Int(exactly:)`: an infinite or fractional interval is a valid window, never a trap.
            "more than \(maximum) refreshes within \(Int(exactly: interval).map(String.init) ?? "\(interval)") seconds, so the server keeps rejecting new tokens"
        }
    }
}

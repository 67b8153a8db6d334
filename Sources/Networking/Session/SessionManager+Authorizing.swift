import Foundation

extension SessionManager {
    /// What a request must do, decided under the lock.
    private enum Step {
        case sign(SessionAuthorization)
        case loggedOut
        case wait(Int)
        case refresh(Int, Credential)
        case fail(RepositoryError)
    }

    public func authorize() async throws(RepositoryError) -> SessionAuthorization? {
        while true {
            let step = state.withLock { state -> Step in
                guard let credential = state.credential else { return .loggedOut }
                let id = newWaiter(&state)
                let now = clock.now()
                let decision = state.refresh.credentialNeeded(
                    by: id, isExpired: credential.isExpired(at: now, leeway: refreshPolicy.leeway),
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
        let step = state.withLock { state -> Step in
            guard let credential = state.credential else { return .loggedOut }
            let id = newWaiter(&state)
            let decision = state.refresh.rejected(
                id, signedVersion: authorization.version, canRefresh: canRefresh(credential), now: clock.now())
            return decide(decision, waiter: id, credential: credential, state: &state)
        }
        if let replay = try await perform(step) { return replay }
        return currentAuthorization()
    }

    public func replayRejected(_ authorization: SessionAuthorization) async {
        state.withLock { state in
            guard state.credential != nil, state.refresh.version == authorization.version, !state.refresh.isRefreshing else {
                return
            }
            _ = end(&state, with: .expired)
        }
    }

    /// The authorization for the current credential, or `nil` when logged out.
    func currentAuthorization() -> SessionAuthorization? {
        state.withLock { state in
            state.credential.map {
                SessionAuthorization(headerValue: authorizationScheme.headerValue($0), version: state.refresh.version)
            }
        }
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
            return .sign(SessionAuthorization(headerValue: authorizationScheme.headerValue(credential), version: version))
        case .wait:
            state.waits[waiter] = .registered
            return .wait(waiter)
        case .startRefresh:
            state.waits[waiter] = .registered
            return .refresh(waiter, credential)
        case .giveUp:
            _ = end(&state, with: .expired)
            return .loggedOut
        case .excessive:
            _ = end(&state, with: .expired)
            let window = refreshPolicy.window
            return .fail(.sessionRefreshFailed(.excessiveRefresh(maximum: window.maximumRefreshes, interval: window.interval), nil))
        }
    }

    /// Carries out a step: returns the authorization to sign with, or `nil` to ask again (after a
    /// wait) or because the session ended.
    private func perform(_ step: Step) async throws(RepositoryError) -> SessionAuthorization? {
        switch step {
        case .sign(let authorization): return authorization
        case .loggedOut: return nil
        case .fail(let error): throw error
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

    private func finishRefresh(of old: Credential, with result: Result<Credential, RepositoryError>) {
        state.withLock { state in
            let waiters: [Int]
            let outcome: WaitOutcome
            switch result {
            case .success(let new):
                let (keep, woken) = state.refresh.refreshSucceeded()
                if keep, state.credential == old {
                    do throws(SessionError) {
                        try persist(new, state.user)
                    } catch {
                        if case .storeFailed(let storeError) = error { state.emit(.storeFailed(storeError)) }
                    }
                    state.credential = new
                    state.emit(.credentialUpdated)
                }
                (waiters, outcome) = (woken, .refreshed)
            case .failure(let error):
                waiters = state.refresh.refreshFailed()
                let keepsSession = error.isConnectivityFailure && !refreshPolicy.expiresSessionWhenUnreachable
                if !keepsSession, state.credential == old { _ = end(&state, with: .expired) }
                outcome = .failed(.sessionRefreshFailed(.refresherFailed(error), nil))
            }
            for waiter in waiters { resolve(waiter, with: outcome, in: &state) }
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

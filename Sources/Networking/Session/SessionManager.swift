import Foundation
import Synchronization

/// Holds the current user and credential, keeps them in a ``CredentialStore`` across restarts,
/// signs repository requests, refreshes expired tokens, and tells observers about every change.
///
/// ```swift
/// let session = SessionManager<User>(store: FileCredentialStore(applicationName: "books-cli"))
/// await session.bootstrap(fetchingUserWith: usersRepository)   // restore at launch
/// try session.login(user: login.user, credential: Credential(accessToken: login.token))
/// ```
///
/// Transitions are checked: `login` while logged in, and `update` or `logout` while logged out,
/// throw ``SessionError`` instead of crashing. ``expire()`` is safe to call at any time.
///
/// With a ``TokenRefresher``, an access token known to be expired is refreshed before a request is
/// sent, and a 401 to a request signed with the current token triggers exactly one refresh however
/// many requests fail at once; every waiting request is then replayed once with the new token (see
/// ``RefreshPolicy``). Without one, a 401 expires the session.
///
/// Thread-safety: every member may be used from any task or thread; transitions are atomic and
/// their events are delivered in the order the transitions happened.
public final class SessionManager<User: Codable & Sendable>: SessionAuthorizing, Sendable {
    struct State {
        var credential: Credential?
        var user: User?
        var subscribers = Subscribers<SessionEvent<User>>()
        var refresh: RefreshStateMachine
        /// Changes on login, restore and end, not on refresh: tells one session from the next.
        var sessionID = 0
        var waits: [Int: Wait] = [:]
        var nextWaiter = 0

        func emit(_ event: SessionEvent<User>) {
            subscribers.yield(event)
        }
    }

    /// Where a request waiting for a refresh stands.
    enum Wait {
        case registered
        case waiting(CheckedContinuation<WaitOutcome, Never>)
        case finished(WaitOutcome)
    }

    /// How a wait for a refresh ended.
    enum WaitOutcome: Sendable {
        case refreshed
        case failed(RepositoryError)
    }

    /// Where the session is kept across restarts.
    public let store: any CredentialStore
    /// How the credential is written in `Authorization`.
    public let authorizationScheme: AuthorizationScheme
    /// Obtains new credentials, or `nil` when the API has no refresh.
    public let refresher: (any TokenRefresher)?
    /// When to refresh and how often at most.
    public let refreshPolicy: RefreshPolicy
    /// The time source for expiry and the refresh window.
    public let clock: NetworkingClock

    let state: Mutex<State>

    /// Creates a manager with no active session; call ``bootstrap(fetchingUserWith:)`` to restore
    /// a stored one.
    ///
    /// - Parameters:
    ///   - store: where the session is kept; default in memory only.
    ///   - authorizationScheme: how the credential is written in `Authorization`; default `Bearer`.
    ///   - refresher: obtains a new credential from a refresh token; default none.
    ///   - refreshPolicy: when to refresh and how often at most; see ``RefreshPolicy``.
    ///   - clock: the time source; default the system clock.
    public init(
        store: any CredentialStore = InMemoryCredentialStore(), authorizationScheme: AuthorizationScheme = .bearer,
        refresher: (any TokenRefresher)? = nil, refreshPolicy: RefreshPolicy = RefreshPolicy(),
        clock: NetworkingClock = .live
    ) {
        self.store = store
        self.authorizationScheme = authorizationScheme
        self.refresher = refresher
        self.refreshPolicy = refreshPolicy
        self.clock = clock
        state = Mutex(State(refresh: RefreshStateMachine(window: refreshPolicy.window)))
    }

    deinit {
        state.withLock { $0.subscribers.finishAll() }
    }

    // MARK: - Reading

    /// Whether a session is active.
    public var isLoggedIn: Bool { state.withLock { $0.credential != nil } }
    /// The current user, when known.
    public var currentUser: User? { state.withLock { $0.user } }
    /// The current access token, or `nil` when logged out.
    public var sessionToken: String? { state.withLock { $0.credential?.accessToken } }
    /// The current credential, or `nil` when logged out.
    public var credential: Credential? { state.withLock { $0.credential } }

    /// A stream of every change from now on (see ``SessionEvent`` for the order). Each call
    /// returns a new stream; it ends when the manager is released.
    public func events() -> AsyncStream<SessionEvent<User>> {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionEvent<User>.self, bufferingPolicy: .unbounded)
        let id = state.withLock { $0.subscribers.add(continuation) }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.subscribers.remove(id) }
        }
        return stream
    }

    // MARK: - Transitions

    /// Starts a session with a user and credential, and stores it.
    ///
    /// - Throws: ``SessionError/alreadyLoggedIn``, ``SessionError/invalidCredential(_:)`` for an
    ///   empty access token, or ``SessionError/storeFailed(_:)`` (then nothing changed).
    public func login(user: User, credential: Credential) throws(SessionError) {
        guard !credential.accessToken.isEmpty else { throw .invalidCredential("the access token is empty") }
        try state.withLock { state throws(SessionError) in
            guard state.credential == nil else { throw .alreadyLoggedIn }
            try persist(credential, user)
            state.credential = credential
            state.user = user
            state.sessionID += 1
            state.refresh.credentialReplaced()
            state.emit(.loggedIn(user))
        }
    }

    /// Starts a session with a user and an access token; see ``login(user:credential:)``.
    public func login(user: User, token: String) throws(SessionError) {
        try login(user: user, credential: Credential(accessToken: token))
    }

    /// Replaces the current user and stores it.
    ///
    /// - Throws: ``SessionError/notLoggedIn`` or ``SessionError/storeFailed(_:)`` (then nothing changed).
    public func update(user: User) throws(SessionError) {
        try state.withLock { state throws(SessionError) in
            guard let credential = state.credential else { throw .notLoggedIn }
            try persist(credential, user)
            state.user = user
            state.emit(.userUpdated(user))
        }
    }

    /// Replaces the credential (after a token refresh done by hand, for example) and stores it.
    ///
    /// - Throws: ``SessionError/notLoggedIn``, ``SessionError/invalidCredential(_:)`` or
    ///   ``SessionError/storeFailed(_:)`` (then nothing changed).
    public func update(credential: Credential) throws(SessionError) {
        guard !credential.accessToken.isEmpty else { throw .invalidCredential("the access token is empty") }
        try state.withLock { state throws(SessionError) in
            guard state.credential != nil else { throw .notLoggedIn }
            try persist(credential, state.user)
            state.credential = credential
            state.refresh.credentialReplaced()
            state.emit(.credentialUpdated)
        }
    }

    /// Ends the session and removes it from the store.
    ///
    /// - Throws: ``SessionError/notLoggedIn``; or ``SessionError/storeFailed(_:)`` when the stored
    ///   session could not be removed — the session has ended in memory all the same.
    public func logout() throws(SessionError) {
        try state.withLock { state throws(SessionError) in
            guard state.credential != nil else { throw .notLoggedIn }
            if let error = end(&state, with: .loggedOut) { throw .storeFailed(error) }
        }
    }

    /// Ends the session because its token is no longer accepted; does nothing when logged out.
    ///
    /// Repositories call it (through ``authorizationRejected(_:)``) when the server answers 401
    /// and no refresh is possible. A store failure is reported as a `.storeFailed` event.
    public func expire() {
        state.withLock { state in
            guard state.credential != nil else { return }
            _ = end(&state, with: .expired)
        }
    }

    /// Restores a stored session at launch and fetches its user.
    ///
    /// Loads the store when no session is active (a stored user is available at once), then, with
    /// a `fetcher`, fetches the current user. A 401 expires the session (after a refresh, when a
    /// refresher is set); other failures keep it. Call it once at launch, before the first request.
    @discardableResult
    public func bootstrap(fetchingUserWith fetcher: (any CurrentUserFetcher<User>)? = nil) async -> BootstrapOutcome<User> {
        let loaded = state.withLock { state -> Result<Int?, CredentialStoreError> in
            guard state.credential == nil else { return .success(state.sessionID) }
            let stored: PersistedSession?
            do throws(CredentialStoreError) {
                stored = try store.load()
            } catch {
                state.emit(.storeFailed(error))
                return .failure(error)
            }
            guard let stored, !stored.credential.accessToken.isEmpty else { return .success(nil) }
            state.credential = stored.credential
            state.user = stored.user.flatMap { try? Self.decodeUser($0) }
            state.sessionID += 1
            state.refresh.credentialReplaced()
            state.emit(.restored)
            return .success(state.sessionID)
        }
        let session: Int
        switch loaded {
        case .failure(let error): return .storeFailed(error)
        case .success(nil): return .noSession
        case .success(let id?): session = id
        }
        guard let fetcher else { return .restored(user: currentUser) }
        let fetched = await fetcher.fetchCurrentUser()
        return state.withLock { state -> BootstrapOutcome<User> in
            // Another login or a logout happened meanwhile: this bootstrap's answer no longer applies.
            guard state.sessionID == session, let current = state.credential else {
                return state.credential == nil ? .expired : .restored(user: state.user)
            }
            switch fetched {
            case .success(let user):
                do throws(SessionError) {
                    try persist(current, user)
                } catch {
                    if case .storeFailed(let storeError) = error { state.emit(.storeFailed(storeError)) }
                }
                state.user = user
                state.emit(.userUpdated(user))
                return .restored(user: user)
            case .failure(.unauthenticatedSession):
                // The server rejected the stored token (also when the fetcher does not sign with this session).
                _ = end(&state, with: .expired)
                return .expired
            case .failure(let error):
                return .userUnavailable(error)
            }
        }
    }

    // MARK: - Shared with the authorization extension

    /// Clears the session, emits `event`, and removes the stored session; returns a store failure
    /// (also emitted as `.storeFailed`).
    func end(_ state: inout State, with event: SessionEvent<User>) -> CredentialStoreError? {
        state.credential = nil
        state.user = nil
        state.sessionID += 1
        state.refresh.credentialReplaced()
        state.emit(event)
        do throws(CredentialStoreError) {
            try store.delete()
            return nil
        } catch {
            state.emit(.storeFailed(error))
            return error
        }
    }

    func persist(_ credential: Credential, _ user: User?) throws(SessionError) {
        let userJSON = user.flatMap { try? JSONValue(parsing: JSONEncoder().encode($0)) }
        do throws(CredentialStoreError) {
            try store.save(PersistedSession(credential: credential, user: userJSON))
        } catch {
            throw .storeFailed(error)
        }
    }

    private static func decodeUser(_ json: JSONValue) throws -> User {
        try JSONDecoder().decode(User.self, from: json.encoded())
    }
}

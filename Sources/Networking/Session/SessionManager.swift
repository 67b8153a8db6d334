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
/// ``RefreshPolicy``). Without one, a 401 expires the session. A refresh the server rejects (400,
/// 401 or 403) expires it too; any other failed refresh (unreachable, a 5xx, an answer that does not
/// decode) fails the requests waiting for it and keeps the session and the store, to try again
/// later (for an unreachable server, ``RefreshPolicy/expiresSessionWhenUnreachable`` changes that).
///
/// A call is signed only with the credential of the session its first attempt was signed in,
/// through refresh waits, 401 replays and automatic retries: after a logout (or another login)
/// it is never sent with the next session's token; it fails as unauthenticated instead. A new
/// session also abandons a refresh of the one before, so it never waits for it.
///
/// Thread-safety: every member may be used from any task or thread. Requests read the session
/// under a short lock that is never held across the credential store, the authorization scheme's
/// function or the event subscribers, so a slow disk never holds up a request and a store may read
/// the manager. Transitions take turns with each other: each writes the store and delivers its
/// events before the next one starts, so the store holds the last transition's state and events
/// arrive in the order the transitions happened.
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
        /// The refreshes whose refresher has not returned yet (see `RefreshingManager`).
        var refreshersRunning: Set<Int> = []
        /// The identity of a session whose `User` is not `Identifiable`: fixed when it starts.
        var identity: String?
        /// When the current credential came from a refresh, by the manager's clock; `nil` for one
        /// given by login, restore or update. See ``needsRefresh(at:leeway:)``.
        var refreshedAt: Date?
        /// The credential this manager last read from or wrote to the store: one stored that
        /// differs from it was stored by another (a second run of a command-line tool, an app
        /// extension sharing the Keychain item). See `storedByAnother(replacing:)`.
        var lastStored: Credential?

        /// Whether the current credential is known to have expired at `now`, counting `leeway`
        /// early — for a credential fresh from a refresh, by the lifetime it arrived with: at
        /// most half of it counts as leeway (a token that lives 20 s is not refreshed on
        /// arrival by a 30 s leeway), and one already expired on arrival (the device's clock
        /// runs ahead of the server's) is used until the server answers 401, rather than
        /// refreshed again and again until the refresh window ends the session.
        func needsRefresh(at now: Date, leeway: TimeInterval) -> Bool {
            guard let credential, let expiresAt = credential.expiresAt else { return false }
            guard let refreshedAt else { return credential.isExpired(at: now, leeway: leeway) }
            let lifetime = expiresAt.timeIntervalSince(refreshedAt)
            return lifetime > 0 && credential.isExpired(at: now, leeway: min(leeway, lifetime / 2))
        }

        /// Gives the state a new session (a login, a restore, the end of one): requests of the
        /// one before are never signed in it, and a refresh of the one before no longer holds
        /// anyone up — its waiters ask again (and find their session gone).
        mutating func beginSession() {
            sessionID += 1
            refreshedAt = nil
            for waiter in refresh.sessionChanged() { resolve(waiter, with: .superseded) }
        }

        /// Ends the wait of `waiter` with `outcome`, now or when it starts waiting.
        mutating func resolve(_ waiter: Int, with outcome: WaitOutcome) {
            switch waits[waiter] {
            case .waiting(let continuation)?:
                waits[waiter] = nil
                continuation.resume(returning: outcome)
            case .registered?:
                waits[waiter] = .finished(outcome)
            case .finished?, nil:
                break
            }
        }

        /// Changes the state when `session` is still the current one; `false` when it has ended.
        mutating func apply(to session: Int, _ change: (inout State) -> Void) -> Bool {
            guard credential != nil, sessionID == session else { return false }
            change(&self)
            return true
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
        /// The refresh ended with a credential (kept or not): ask again.
        case refreshed
        /// The refresh failed, but its credential was no longer the current one (the session
        /// ended or was given another): the failure says nothing about the current one, so ask again.
        case superseded
        /// The refresh failed, or the wait was cancelled: fail with this error.
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
    /// The time source for expiry, the refresh window and the refresh cool-down.
    public let clock: NetworkingClock

    let state: Mutex<State>
    let gate = TransitionGate()

    /// Creates a manager with no active session; call ``bootstrap(fetchingUserWith:)`` to restore
    /// a stored one.
    ///
    /// - Parameters:
    ///   - store: where the session is kept; default in memory only.
    ///   - authorizationScheme: how the credential is written in `Authorization`; default `Bearer`.
    ///   - refresher: obtains a new credential from a refresh token; default none.
    ///   - refreshPolicy: when to refresh and how often at most; see ``RefreshPolicy`` (values
    ///     out of range are clamped there).
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
        state = Mutex(State(refresh: RefreshStateMachine(window: refreshPolicy.window, coolDown: refreshPolicy.failureCoolDown)))
    }

    deinit {
        state.withLock { $0.subscribers }.finishAll()
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

    /// Whose session this is, for data kept per user: the user's `id` when `User` is
    /// `Identifiable`, else a digest of the user's JSON form (or of the access token when the
    /// user was not known) taken when the session started — it stays the same through user
    /// updates, refreshes and restarts; `nil` when logged out.
    public var sessionIdentity: String? {
        let (user, loggedIn, identity) = state.withLock { ($0.user, $0.credential != nil, $0.identity) }
        guard loggedIn else { return nil }
        return Self.identity(of: user, fixed: identity)
    }

    /// The identity of a session of `user` whose starting identity is `fixed`: the user's `id`
    /// when `User` is `Identifiable` (user code, so never called under the lock), else `fixed`.
    static func identity(of user: User?, fixed: String?) -> String? {
        if let identifiable = user as? any Identifiable { return "user:\(identifiable.id)" }
        return fixed
    }

    /// The identity fixed when a session starts: the `id` of an `Identifiable` user, else a
    /// digest of the user's JSON form, or of the access token when the user is not known. User
    /// code, so never called under the lock.
    static func startingIdentity(user: User?, token: String) -> String? {
        if let identifiable = user as? any Identifiable { return "user:\(identifiable.id)" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = user.flatMap { try? encoder.encode($0) } ?? Data(token.utf8)
        return "sha256:" + SHA256.hex(SHA256.hash(Array(data)).prefix(16))
    }

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
    /// The store is written first: requests keep seeing no session until it is saved.
    ///
    /// - Throws: ``SessionError/alreadyLoggedIn``, ``SessionError/invalidCredential(_:)`` for an
    ///   empty access token, ``SessionError/storeFailed(_:)`` (then nothing changed), or
    ///   ``SessionError/transitionInProgress`` when called from inside another transition.
    public func login(user: User, credential: Credential) throws(SessionError) {
        guard !credential.accessToken.isEmpty else { throw .invalidCredential("the access token is empty") }
        try gate.run { () throws(SessionError) in
            guard !isLoggedIn else { throw .alreadyLoggedIn }
            let identity = Self.startingIdentity(user: user, token: credential.accessToken)
            try persist(credential, user, identity: identity)
            state.withLock { state in
                state.credential = credential
                state.user = user
                state.identity = identity
                state.beginSession()
            }
            emit(.loggedIn(user))
        }
    }

    /// Starts a session with a user and an access token; see ``login(user:credential:)``.
    public func login(user: User, token: String) throws(SessionError) {
        try login(user: user, credential: Credential(accessToken: token))
    }

    /// Replaces the current user and stores it.
    ///
    /// - Throws: ``SessionError/notLoggedIn`` (also when a 401 ended the session while the store
    ///   was being written; its removal from the store follows), ``SessionError/storeFailed(_:)``
    ///   (then nothing changed) or ``SessionError/transitionInProgress``.
    public func update(user: User) throws(SessionError) {
        try gate.run { () throws(SessionError) in
            guard let (credential, session) = state.withLock({ state in state.credential.map { ($0, state.sessionID) } }) else {
                throw .notLoggedIn
            }
            try persist(credential, user)
            // A 401 may have ended the session while the store was written (its removal comes next).
            guard state.withLock({ $0.apply(to: session) { $0.user = user } }) else { throw .notLoggedIn }
            emit(.userUpdated(user))
        }
    }

    /// Replaces the credential (after a token refresh done by hand, for example) and stores it.
    /// A refresh running meanwhile is abandoned: the requests waiting for it are signed with this
    /// credential, and its outcome is ignored.
    ///
    /// - Throws: ``SessionError/notLoggedIn`` (also when a 401 ended the session while the store
    ///   was being written; its removal from the store follows), ``SessionError/invalidCredential(_:)``,
    ///   ``SessionError/storeFailed(_:)`` (then nothing changed) or ``SessionError/transitionInProgress``.
    public func update(credential: Credential) throws(SessionError) {
        guard !credential.accessToken.isEmpty else { throw .invalidCredential("the access token is empty") }
        try gate.run { () throws(SessionError) in
            guard let (user, session) = state.withLock({ $0.credential == nil ? nil : ($0.user, $0.sessionID) }) else {
                throw .notLoggedIn
            }
            try persist(credential, user)
            // A 401 may have ended the session while the store was written (its removal comes next).
            let applied = state.withLock { state in
                state.apply(to: session) { state in
                    state.credential = credential
                    state.refreshedAt = nil
                    for waiter in state.refresh.credentialReplaced() { state.resolve(waiter, with: .superseded) }
                }
            }
            guard applied else { throw .notLoggedIn }
            emit(.credentialUpdated)
        }
    }

    /// Ends the session and removes it from the store.
    ///
    /// Requests stop being signed at once; the store is emptied afterwards.
    ///
    /// - Throws: ``SessionError/notLoggedIn``; ``SessionError/transitionInProgress``; or
    ///   ``SessionError/storeFailed(_:)`` when the stored session could not be removed — the
    ///   session has ended in memory all the same.
    public func logout() throws(SessionError) {
        try gate.run { () throws(SessionError) in
            guard clear() != nil else { throw .notLoggedIn }
            if let error = endStored(with: .loggedOut) { throw .storeFailed(error) }
        }
    }

    /// Ends the session because its token is no longer accepted; does nothing when logged out.
    ///
    /// Call it to end the session yourself; it waits for its turn among transitions and writes the
    /// store before it returns. (When the server answers 401 and no refresh is possible, requests
    /// end the session the same way without waiting: see ``waitUntilStored()``.) A store failure is
    /// reported as a `.storeFailed` event. Called from inside another transition on the same
    /// thread (from a credential store), it does nothing. A store that holds what another holder
    /// stored since this manager last read or wrote it (a second run of a tool, an app
    /// extension) is left alone: that session goes on.
    public func expire() {
        guard gate.enter() else { return }
        defer { gate.leave() }
        guard clear() != nil else { return }
        _ = endStored(with: .expired)
    }

    /// Restores a stored session at launch and fetches its user.
    ///
    /// Loads the store when no session is active (a stored user is available at once), then, with
    /// a `fetcher`, fetches the current user. A 401 expires the session (after a refresh, when a
    /// refresher is set); other failures keep it. Call it once at launch, before the first request.
    ///
    /// Waiting for its turn among transitions and reading or writing the store happen on a thread
    /// of their own: a slow store, or a login writing it meanwhile, holds none of Swift's
    /// cooperative threads, which requests need.
    @discardableResult
    public func bootstrap(fetchingUserWith fetcher: (any CurrentUserFetcher<User>)? = nil) async -> BootstrapOutcome<User> {
        let loaded = await OwnThread.run { [self] _ in
            gate.enter() ? restoreWithTurn() : .success(nil)
        }
        let session: Int
        switch loaded {
        case .failure(let error): return .storeFailed(error)
        case .success(nil): return .noSession
        case .success(let id?): session = id
        }
        guard let fetcher else { return .restored(user: currentUser) }
        // A credential replaced or refreshed while the user is fetched is not the one a 401 refused.
        let version = state.withLock { $0.refresh.version }
        let fetched = await fetcher.fetchCurrentUser()
        return await OwnThread.run { [self] _ in
            gate.enter() ? finishBootstrap(session: session, version: version, fetched: fetched) : .restored(user: currentUser)
        }
    }

    /// ``restore()`` with the turn, which the caller has taken and this gives back.
    private func restoreWithTurn() -> Result<Int?, CredentialStoreError> {
        defer { gate.leave() }
        return restore()
    }

    /// The end of ``bootstrap(fetchingUserWith:)``, with the turn, which the caller has taken and
    /// this gives back: what the fetched user means for the session restored as `session`, its
    /// credential at `version` when the fetch began.
    private func finishBootstrap(session: Int, version: Int, fetched: Result<User, RepositoryError>) -> BootstrapOutcome<User> {
        defer { gate.leave() }
        // Another login or a logout happened meanwhile: this bootstrap's answer no longer applies.
        let (current, currentSession, user) = state.withLock { ($0.credential, $0.sessionID, $0.user) }
        guard currentSession == session, let current else {
            return current == nil ? .expired : .restored(user: user)
        }
        switch fetched {
        case .success(let user):
            do throws(SessionError) {
                try persist(current, user)
            } catch {
                if case .storeFailed(let storeError) = error { emit(.storeFailed(storeError)) }
            }
            guard state.withLock({ $0.apply(to: session) { $0.user = user } }) else { return .expired }
            emit(.userUpdated(user))
            return .restored(user: user)
        case .failure(.unauthenticatedSession), .failure(.authenticationFailed):
            // The server rejected the stored token (also when the fetcher does not sign with this session).
            // Unless a 401 of another request has ended this session meanwhile (and told everyone).
            guard clear(ifSession: session, version: version) != nil else {
                return state.withLock { $0.credential == nil } ? .expired : .restored(user: currentUser)
            }
            _ = endStored(with: .expired)
            return .expired
        case .failure(let error):
            return .userUnavailable(error)
        }
    }

    // MARK: - Shared with the authorization extension

    /// Loads the store into an empty session; the new session's id, `nil` when nothing is stored.
    /// Runs with the turn.
    private func restore() -> Result<Int?, CredentialStoreError> {
        if let id = state.withLock({ $0.credential == nil ? nil : $0.sessionID }) { return .success(id) }
        let stored: PersistedSession?
        do throws(CredentialStoreError) {
            stored = try store.load()
        } catch {
            emit(.storeFailed(error))
            return .failure(error)
        }
        guard let stored, !stored.credential.accessToken.isEmpty else { return .success(nil) }
        let user = stored.user.flatMap { try? Self.decodeUser($0) }
        let identity = stored.identity ?? Self.startingIdentity(user: user, token: stored.credential.accessToken)
        let id = state.withLock { state -> Int? in
            guard state.credential == nil else { return nil }
            state.lastStored = stored.credential
            state.credential = stored.credential
            state.user = user
            state.identity = identity
            state.beginSession()
            return state.sessionID
        }
        guard let id else { return .success(state.withLock { $0.sessionID }) }
        emit(.restored)
        return .success(id)
    }

    /// Ends the session in memory; returns the id of the session that ended, `nil` when logged out
    /// (or when it is not session `expected`, or its credential not at `version`).
    func clear(ifSession expected: Int? = nil, version: Int? = nil) -> Int? {
        state.withLock { state in
            guard state.credential != nil, expected == nil || expected == state.sessionID,
                version == nil || version == state.refresh.version
            else { return nil }
            let ended = state.sessionID
            state.credential = nil
            state.user = nil
            state.identity = nil
            state.beginSession()
            return ended
        }
    }

    /// After ``clear(ifSession:)``: removes the stored session, then emits `event` (so that a
    /// subscriber finds the store empty, as the other events find it written); returns a store
    /// failure, emitted as `.storeFailed` before `event`. Runs with the turn.
    ///
    /// A session that expired leaves a store holding another holder's session alone (see
    /// `storeHoldsAnothers()`); a logout removes it all the same.
    func endStored(with event: SessionEvent<User>) -> CredentialStoreError? {
        var failure: CredentialStoreError?
        let expired = if case .expired = event { true } else { false }
        do throws(CredentialStoreError) {
            if !expired || !storeHoldsAnothers() { try store.delete() }
        } catch {
            emit(.storeFailed(error))
            failure = error
        }
        emit(event)
        return failure
    }

    /// Ends the session `session` as expired, for a request, without waiting: requests see no
    /// session from now on, and the store and subscribers hear of it with the turn, after the
    /// transition running now. Does nothing when that session is no longer the current one, or
    /// its credential is no longer at `version` (replaced or refreshed since the decision), and
    /// then returns `false`.
    @discardableResult
    func expire(session: Int, version: Int) -> Bool {
        gate.runSoon(
            now: { clear(ifSession: session, version: version) != nil }, later: { [self] in _ = endStored(with: .expired) })
    }

    /// Waits until every transition started so far has reached the credential store and the
    /// subscribers — those that requests started in the background included (a 401 that ended
    /// the session, a refreshed token).
    ///
    /// Requests never wait for the store: they see the new state at once, and the store hears of
    /// it in order shortly after. Call this before the process exits, or in a test, to be sure the
    /// store is up to date. It blocks the calling thread (from async code, one of Swift's pool
    /// threads, for as long as the store takes); from inside a credential store it returns at once.
    /// A refresher that has not returned is not waited for, timed out or not: a tool awaits the
    /// calls that wait on it first, and keeps its refresher's call shorter than
    /// ``RefreshPolicy/timeout`` so that what it returns is kept.
    public func waitUntilStored() {
        gate.settle()
    }

    /// Tells every subscriber; called with the turn, so events keep the transitions' order.
    func emit(_ event: SessionEvent<User>) {
        state.withLock { $0.subscribers }.yield(event)
    }

    /// Writes the session to the store; called with the turn and without the state's lock.
    /// `identity`: the session's digest identity; the current one when not given.
    /// A user that cannot be encoded fails it: saved without it, the session would come back
    /// with no user at the next launch, and nothing would have said so.
    func persist(_ credential: Credential, _ user: User?, identity: String?? = nil) throws(SessionError) {
        var userJSON: JSONValue?
        if let user {
            do {
                userJSON = try JSONValue(parsing: JSONEncoder().encode(user))
            } catch {
                throw .storeFailed(
                    .writeFailed(path: "\(type(of: store))", reason: "the user could not be encoded as JSON: \(error)"))
            }
        }
        let kept = identity ?? state.withLock { $0.identity }
        do throws(CredentialStoreError) {
            try store.save(PersistedSession(credential: credential, user: userJSON, identity: kept))
        } catch {
            throw .storeFailed(error)
        }
        state.withLock { $0.lastStored = credential }
    }

    /// Whether the store holds a credential another holder stored since this manager last read
    /// or wrote it: a second run that refreshed at the same moment and saved its new token after
    /// this one's refresh was refused, or another user's login. An expired session must not
    /// remove it: the other holder's session goes on, and the next launch restores it. `false`
    /// when the store cannot be read, holds nothing, or this manager never read or wrote it.
    private func storeHoldsAnothers() -> Bool {
        guard let last = state.withLock({ $0.lastStored }), let stored = (try? store.load()) ?? nil else { return false }
        // By its tokens: a store of your own may keep a date less precisely than it was given.
        return stored.credential.accessToken != last.accessToken || stored.credential.refreshToken != last.refreshToken
    }

    /// The credential another holder of the same session stored in place of `credential` (a
    /// second process that refreshed it first, with a server that rotates refresh tokens, has
    /// used up the refresh token `credential` holds); `nil` when the store holds what this
    /// manager last read or wrote, another session (its identity differs), one not known to be
    /// newer (it must expire later than `credential`: an older one written back by a holder that
    /// had not seen the refresh is never taken), or cannot be read. Reads the store: called
    /// without the state's lock, on a thread of its own (a refresh's).
    func storedByAnother(replacing credential: Credential) -> Credential? {
        guard let stored = (try? store.load()) ?? nil, !stored.credential.accessToken.isEmpty,
            let expires = stored.credential.expiresAt, let replaced = credential.expiresAt, expires > replaced
        else { return nil }
        let (last, identity) = state.withLock { ($0.lastStored, $0.identity) }
        guard let last, stored.credential != last, stored.credential != credential, let identity, stored.identity == identity
        else { return nil }
        return stored.credential
    }

    private static func decodeUser(_ json: JSONValue) throws -> User {
        try FastJSONDecoder().decode(User.self, from: json.encoded())
    }
}

/// A change of a ``SessionManager``'s state, as delivered by ``SessionManager/events()``.
///
/// Events come in the order the changes happen, each after the state and the store were
/// updated (so reading the manager when an event arrives shows the new state):
/// - ``SessionManager/login(user:credential:)``: `.loggedIn`
/// - ``SessionManager/update(user:)``: `.userUpdated`; ``SessionManager/update(credential:)``: `.credentialUpdated`
/// - a token refreshed by the session's ``TokenRefresher``: `.credentialUpdated`
/// - ``SessionManager/logout()``: `.loggedOut`; ``SessionManager/expire()`` (or a 401): `.expired`;
///   each just after `.storeFailed` when the stored session could not be removed
/// - ``SessionManager/bootstrap(fetchingUserWith:)``: `.restored` when a stored session was
///   loaded, then `.userUpdated` when the current user was fetched, or `.expired` when the
///   server rejected the stored token; `.storeFailed` when the store could not be read.
public enum SessionEvent<User: Sendable>: Sendable {
    /// Somebody logged in.
    case loggedIn(User)
    /// A stored session was loaded by `bootstrap`.
    case restored
    /// The current user changed (an update, or the user fetched by `bootstrap`).
    case userUpdated(User)
    /// The credential was replaced, for example after a token refresh.
    case credentialUpdated
    /// The user logged out.
    case loggedOut
    /// The session ended because its token was rejected or expired.
    case expired
    /// The credential store failed: it may still hold the previous state. The event that
    /// follows, if any (`.loggedOut`, `.expired`, `.credentialUpdated`, `.userUpdated`), gives
    /// the state in memory.
    case storeFailed(CredentialStoreError)
}

/// An invalid session transition, or a store failure during one.
public enum SessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `login` was called while a session is active; log out first.
    case alreadyLoggedIn
    /// The operation needs an active session and there is none.
    case notLoggedIn
    /// The credential cannot start a session (for example an empty access token).
    case invalidCredential(String)
    /// The credential store failed; see each operation for what state it leaves.
    case storeFailed(CredentialStoreError)
    /// A transition was started from inside another one on the same thread — a credential store
    /// that calls `login`, `update` or `logout` while its own transition is being saved — and
    /// refused, since it would wait for itself. (Subscribers to ``SessionManager/events()`` read
    /// on their own tasks: a transition they start waits its turn.)
    case transitionInProgress

    public var description: String {
        switch self {
        case .alreadyLoggedIn: "a session is already active: log out before logging in again"
        case .notLoggedIn: "there is no active session"
        case .invalidCredential(let reason): "the credential cannot start a session: \(reason)"
        case .storeFailed(let error): "\(error)"
        case .transitionInProgress:
            "a session transition was started while another one on the same thread was being saved (from inside a credential store?)"
        }
    }
}

/// Fetches the user a session belongs to, typically a repository calling `GET users/me`.
public protocol CurrentUserFetcher<User>: Sendable {
    /// The user model.
    associatedtype User: Sendable
    /// Fetches the current user with the session's credential.
    func fetchCurrentUser() async -> Result<User, RepositoryError>
}

/// What ``SessionManager/bootstrap(fetchingUserWith:)`` found.
public enum BootstrapOutcome<User: Sendable>: Sendable {
    /// No session is stored: logged out.
    case noSession
    /// A session is active; `user` is the fetched user, or the stored one when there was no
    /// fetcher (`nil` when neither is known).
    case restored(user: User?)
    /// A session is active but the current user could not be fetched (for example offline);
    /// the stored user, if any, is kept.
    case userUnavailable(RepositoryError)
    /// The server rejected the stored token; the session was expired.
    case expired
    /// The store could not be read; treated as logged out.
    case storeFailed(CredentialStoreError)
}

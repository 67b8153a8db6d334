import Foundation

/// Where a session survives restarts: the credential and the last known user.
///
/// Implementations must be safe to call from any thread. ``InMemoryCredentialStore`` and
/// ``FileCredentialStore`` ship with the library; Keychain or libsecret stores can conform too.
public protocol CredentialStore: Sendable {
    /// The stored session, or `nil` when none is stored.
    ///
    /// - Throws: ``CredentialStoreError`` when something is stored but cannot be read; the
    ///   session manager reports it and treats the session as logged out.
    func load() throws(CredentialStoreError) -> PersistedSession?
    /// Replaces the stored session.
    func save(_ session: PersistedSession) throws(CredentialStoreError)
    /// Removes the stored session; nothing happens when none is stored.
    func delete() throws(CredentialStoreError)
}

/// A session as a credential store keeps it.
public struct PersistedSession: Sendable, Hashable, Codable {
    /// The credential.
    public var credential: Credential
    /// The user as JSON, or `nil` when not known yet.
    public var user: JSONValue?
    /// The session's ``SessionManager/sessionIdentity`` as it started, kept so that the identity
    /// outlives user updates and restarts, and a stored user that no longer decodes (an app
    /// update changed `User`); `nil` in files written before it existed.
    public var identity: String?

    /// Creates a persisted session.
    public init(credential: Credential, user: JSONValue? = nil, identity: String? = nil) {
        self.credential = credential
        self.user = user
        self.identity = identity
    }
}

/// Why a credential store failed.
public enum CredentialStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stored session exists but could not be read (permissions, I/O).
    case unreadable(path: String, reason: String)
    /// The stored session was read but is not a valid session (truncated or edited file).
    case corrupt(path: String, reason: String)
    /// The session could not be written.
    case writeFailed(path: String, reason: String)
    /// The stored session could not be removed.
    case deleteFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "the stored session at \(path) could not be read: \(reason)"
        case .corrupt(let path, let reason): "the stored session at \(path) is corrupt: \(reason)"
        case .writeFailed(let path, let reason): "the session could not be saved to \(path): \(reason)"
        case .deleteFailed(let path, let reason): "the stored session at \(path) could not be removed: \(reason)"
        }
    }
}

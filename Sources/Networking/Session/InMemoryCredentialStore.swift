import Synchronization

/// A credential store that keeps the session in memory only: for tests, and for processes that
/// must not write credentials to disk.
public final class InMemoryCredentialStore: CredentialStore {
    private let stored: Mutex<PersistedSession?>

    /// Creates a store, optionally holding a session already.
    public init(_ session: PersistedSession? = nil) {
        stored = Mutex(session)
    }

    public func load() throws(CredentialStoreError) -> PersistedSession? { stored.withLock { $0 } }

    public func save(_ session: PersistedSession) throws(CredentialStoreError) { stored.withLock { $0 = session } }

    public func delete() throws(CredentialStoreError) { stored.withLock { $0 = nil } }
}

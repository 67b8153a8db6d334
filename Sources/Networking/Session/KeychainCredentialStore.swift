#if canImport(Security)
    import Foundation
    import Security

    /// A credential store in the Keychain, for Apple platforms (as the original wolmo-networking
    /// kept its token): the session is one generic-password item, readable after the device's
    /// first unlock and never synchronised to other devices. On macOS the item goes to the login
    /// (file-based) keychain, where these two promises are the Keychain's to keep, not this type's:
    /// the data-protection keychain would need an app signed with a keychain entitlement, which
    /// command-line tools and services do not have. There, ``accessGroup`` is not honoured, and
    /// reading an item another build of the app wrote may wait on a Keychain access prompt: call
    /// ``SessionManager/bootstrap(fetchingUserWith:)`` where such a wait is acceptable.
    ///
    /// Built only where the Security framework exists; this project's CI runs on Linux, so this
    /// type is compiled and tested by the projects that use it on Apple platforms, not here.
    ///
    /// ```swift
    /// let session = SessionManager<User>(store: KeychainCredentialStore(service: "com.example.books"))
    /// ```
    public final class KeychainCredentialStore: CredentialStore {
        /// The item's service (`kSecAttrService`), usually the app's bundle identifier.
        public let service: String
        /// The item's account (`kSecAttrAccount`). Default `"session"`.
        public let account: String
        /// A Keychain access group shared with other apps or extensions, or `nil` for the app's own.
        public let accessGroup: String?

        /// Creates a store for one Keychain item.
        public init(service: String, account: String = "session", accessGroup: String? = nil) {
            self.service = service
            self.account = account
            self.accessGroup = accessGroup
        }

        public func load() throws(CredentialStoreError) -> PersistedSession? {
            var query = itemQuery
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = item as? Data else {
                throw .unreadable(path: location, reason: Self.message(status))
            }
            do {
                return try FastJSONDecoder().decode(PersistedSession.self, from: data)
            } catch {
                throw .corrupt(path: location, reason: "\(error)")
            }
        }

        public func save(_ session: PersistedSession) throws(CredentialStoreError) {
            let data: Data
            do {
                data = try JSONEncoder().encode(session)
            } catch {
                throw .writeFailed(path: location, reason: "\(error)")
            }
            // The accessibility too: an item made by an earlier version keeps its own otherwise.
            let update =
                [kSecValueData as String: data, kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]
                as CFDictionary
            var status = SecItemUpdate(itemQuery as CFDictionary, update)
            if status == errSecParam {
                // A keychain that will not change an item's accessibility still takes its data.
                status = SecItemUpdate(itemQuery as CFDictionary, [kSecValueData as String: data] as CFDictionary)
            }
            if status == errSecItemNotFound {
                var item = itemQuery
                item[kSecValueData as String] = data
                item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                status = SecItemAdd(item as CFDictionary, nil)
                if status == errSecDuplicateItem {
                    // Another writer (an app extension sharing the access group) added it meanwhile.
                    status = SecItemUpdate(itemQuery as CFDictionary, [kSecValueData as String: data] as CFDictionary)
                }
            }
            guard status == errSecSuccess else { throw .writeFailed(path: location, reason: Self.message(status)) }
        }

        public func delete() throws(CredentialStoreError) {
            let status = SecItemDelete(itemQuery as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw .deleteFailed(path: location, reason: Self.message(status))
            }
        }

        private var itemQuery: [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        /// How errors name the item.
        private var location: String { "Keychain item \(service)/\(account)" }

        private static func message(_ status: OSStatus) -> String {
            (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)"
        }
    }
#endif

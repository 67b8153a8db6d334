import Foundation
import Testing

@testable import Networking

@Suite("FileCredentialStore")
struct FileCredentialStoreTests {
    private static let session = PersistedSession(
        credential: Credential(accessToken: "t1", refreshToken: "r1", expiresAt: Date(timeIntervalSince1970: 1_900_000_000)),
        user: ["id": 1, "name": "Ann", "tags": ["a", nil, 2.5]])

    /// Runs `body` with a store whose file sits in a folder that does not exist yet.
    private func withStore(_ body: (FileCredentialStore, URL) throws -> Void) throws {
        let temporary = try TemporaryFolder()
        defer { temporary.remove() }
        let file = temporary.url.appendingPathComponent("app", isDirectory: true).appendingPathComponent("session.json")
        try body(FileCredentialStore(fileURL: file), file)
    }

    private func write(_ text: String, to file: URL) throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
    }

    private func permissions(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue)
    }

    @Test("A saved session loads back as it was")
    func roundTrip() throws {
        try withStore { store, _ in
            // Given / When
            try store.save(Self.session)
            // Then
            #expect(try store.load() == Self.session)
            #expect(try FileCredentialStore(fileURL: store.fileURL).load() == Self.session)
        }
    }

    @Test(
        "Deleting also removes temporary files a save cut short left behind, and only those: not one of the last minute (another process saving)"
    )
    func deleteRemovesLeftovers() throws {
        try withStore { store, file in
            try store.save(Self.session)
            let folder = file.deletingLastPathComponent()
            let leftover = folder.appendingPathComponent(".session.json.\(UUID().uuidString).tmp")
            let saving = folder.appendingPathComponent(".session.json.\(UUID().uuidString).tmp")
            let unrelated = folder.appendingPathComponent(".other.json.\(UUID().uuidString).tmp")
            try write(#"{"token": "t0"}"#, to: leftover)
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: leftover.path)
            try write(#"{"token": "t1"}"#, to: saving)
            try write("{}", to: unrelated)
            try store.delete()
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(!FileManager.default.fileExists(atPath: leftover.path))
            #expect(FileManager.default.fileExists(atPath: saving.path))
            #expect(FileManager.default.fileExists(atPath: unrelated.path))
        }
    }

    @Test("Saving again replaces the session")
    func replace() throws {
        try withStore { store, _ in
            try store.save(Self.session)
            let other = PersistedSession(credential: Credential(accessToken: "t2"))
            try store.save(other)
            #expect(try store.load() == other)
        }
    }

    @Test("The file is readable by its owner only, and a new folder too")
    func permissions() throws {
        try withStore { store, file in
            // Given / When
            try store.save(Self.session)
            // Then
            #expect(try permissions(of: file) == 0o600)
            #expect(try permissions(of: file.deletingLastPathComponent()) == 0o700)
        }
    }

    @Test("A missing file is no session")
    func missing() throws {
        try withStore { store, file in
            let loaded = try store.load()
            #expect(loaded == nil)
            #expect(!FileManager.default.fileExists(atPath: file.deletingLastPathComponent().path))
        }
    }

    @Test(
        "A file that is not a valid session is corrupt",
        arguments: [
            ("garbage", "not json at all \u{0}\u{1}"),
            ("empty", ""),
            ("truncated", #"{"version": 1, "session": {"credential": {"accessToken": "t"#),
            ("wrong version", #"{"version": 2, "session": {"credential": {"accessToken": "t"}}}"#),
            ("missing session", #"{"version": 1}"#),
            ("wrong shape", #"{"version": 1, "session": {"credential": {"accessToken": 42}}}"#),
        ])
    func corrupt(name: String, contents: String) throws {
        try withStore { store, file in
            // Given
            try write(contents, to: file)
            // When / Then
            #expect {
                try store.load()
            } throws: { error in
                guard case .corrupt(let path, let reason) = error as? CredentialStoreError else { return false }
                return path == file.path && !reason.isEmpty
            }
        }
    }

    @Test("A wrong version names the version")
    func wrongVersionReason() throws {
        try withStore { store, file in
            try write(#"{"version": 7, "session": {"credential": {"accessToken": "t"}}}"#, to: file)
            #expect(throws: CredentialStoreError.corrupt(path: file.path, reason: "unknown version 7")) { try store.load() }
        }
    }

    @Test("A path that cannot be read as a file is unreadable")
    func unreadable() throws {
        try withStore { store, file in
            // Given a folder where the file should be (chmod would not stop root from reading)
            try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
            // When / Then
            #expect {
                try store.load()
            } throws: { error in
                guard case .unreadable(let path, _) = error as? CredentialStoreError else { return false }
                return path == file.path
            }
        }
    }

    @Test(
        "A FIFO or an oversized file at the path is refused at once: no caller waits on it, nothing large is read; nothing that large is saved",
        .timeLimit(.minutes(1)))
    func notASessionFile() throws {
        try withStore { store, file in
            // Given a FIFO where the file should be (before, the read waited for a writer, for good,
            // holding the store's lock)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try #require(mkfifo(file.path, 0o600) == 0)
            #expect(throws: CredentialStoreError.unreadable(path: file.path, reason: "not a plain file")) { try store.load() }
            // Given a file larger than any session
            try FileManager.default.removeItem(at: file)
            try Data(count: FileCredentialStore.maximumSize + 1).write(to: file)
            #expect {
                try store.load()
            } throws: { error in
                guard case .corrupt(_, let reason) = error as? CredentialStoreError else { return false }
                return reason.contains("more than a session's")
            }
            // And a session that large is refused when saved, rather than saved and never loaded
            let large = PersistedSession(
                credential: Credential(accessToken: "t1"),
                user: ["avatar": .string(String(repeating: "A", count: FileCredentialStore.maximumSize))])
            #expect {
                try store.save(large)
            } throws: { error in
                guard case .writeFailed(_, let reason) = error as? CredentialStoreError else { return false }
                return reason.contains("more than a session's")
            }
        }
    }

    @Test("Deleting removes the file; deleting a missing file is fine")
    func delete() throws {
        try withStore { store, file in
            try store.delete()
            try store.save(Self.session)
            try store.delete()
            #expect(!FileManager.default.fileExists(atPath: file.path))
            let loaded = try store.load()
            #expect(loaded == nil)
            try store.delete()
        }
    }

    @Test("Failures to write or delete are reported, never a crash")
    func writeAndDeleteFailures() throws {
        try withStore { store, file in
            // Given a folder where the file should be
            try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
            // When / Then
            #expect {
                try store.save(Self.session)
            } throws: { error in
                guard case .writeFailed(let path, _) = error as? CredentialStoreError else { return false }
                return path == file.path
            }
            #expect {
                try store.delete()
            } throws: { error in
                guard case .deleteFailed(let path, _) = error as? CredentialStoreError else { return false }
                return path == file.path
            }
        }
    }

    @Test("Atomic replacement leaves no temporary files behind")
    func noTemporaryFiles() throws {
        try withStore { store, file in
            // Given / When
            for index in 0..<20 {
                try store.save(PersistedSession(credential: Credential(accessToken: "t\(index)")))
            }
            // Then
            let folder = file.deletingLastPathComponent().path
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["session.json"])
            #expect(try store.load()?.credential.accessToken == "t19")
        }
    }

    @Test("A failed write leaves the old session and no temporary file")
    func failedWriteKeepsOldSession() throws {
        try withStore { store, file in
            // Given a saved session, then a folder that refuses new files
            try store.save(Self.session)
            let folder = file.deletingLastPathComponent()
            let blocker = folder.appendingPathComponent("blocker")
            try FileManager.default.createDirectory(at: blocker, withIntermediateDirectories: true)
            let blocked = FileCredentialStore(fileURL: blocker)
            // When renaming a new file over a folder fails
            #expect(throws: CredentialStoreError.self) { try blocked.save(Self.session) }
            // Then
            #expect(try store.load() == Self.session)
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)) == ["session.json", "blocker"])
        }
    }

    @Test("The application-name store lives in the user's data folder")
    func applicationFolder() {
        let store = FileCredentialStore(applicationName: "books-cli")
        #expect(store.fileURL.lastPathComponent == "session.json")
        #expect(store.fileURL.deletingLastPathComponent().lastPathComponent == "books-cli")
    }

    @Test("Concurrent saves and loads never see a partial file")
    func concurrentUse() async throws {
        let temporary = try TemporaryFolder()
        defer { temporary.remove() }
        let store = FileCredentialStore(fileURL: temporary.url.appendingPathComponent("session.json"))
        try store.save(Self.session)
        let corrupted = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<50 {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        return (try? store.save(PersistedSession(credential: Credential(accessToken: "t\(index)")))) == nil
                    }
                    return (try? store.load()) == nil
                }
            }
            return await group.reduce(false) { $0 || $1 }
        }
        #expect(!corrupted)
    }
}

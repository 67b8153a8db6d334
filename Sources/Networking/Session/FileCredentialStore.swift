import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A credential store that keeps the session in a JSON file readable by its owner only.
///
/// Writes are atomic: the session goes to a temporary file created with mode 0600 in the same
/// folder, is flushed to disk, and replaces the old file by `rename`, so a crash leaves either
/// the old session or the new one. The folder is flushed too after a save or a delete (best
/// effort: `fsync`, which on Apple platforms reaches the drive's cache, not always its platter),
/// so that a power loss does not bring back a deleted session. The folder is created with mode 0700 when missing. A file
/// that cannot be read or parsed is reported as ``CredentialStoreError``, never a crash; so is
/// anything but a plain file at the path, a link followed (a FIFO there would block every read),
/// and a session of more than 1 MiB: `.corrupt` when loaded, `.writeFailed` when saved (keep large
/// user data elsewhere).
public final class FileCredentialStore: CredentialStore {
    /// The file the session is kept in.
    public let fileURL: URL

    private let lock = Mutex(())

    /// Creates a store that keeps the session in `fileURL`.
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// Creates a store in the user's data folder: `<data folder>/<applicationName>/session.json`,
    /// where the data folder is `$XDG_DATA_HOME` (or `~/.local/share`) on Linux and the
    /// Application Support folder on Apple platforms (see ``defaultDataFolder``).
    public convenience init(applicationName: String) {
        self.init(
            fileURL: Self.defaultDataFolder.appendingPathComponent(applicationName, isDirectory: true)
                .appendingPathComponent("session.json"))
    }

    private struct File: Codable {
        var version: Int
        var session: PersistedSession
    }

    public func load() throws(CredentialStoreError) -> PersistedSession? {
        try lock.withLock { _ throws(CredentialStoreError) -> PersistedSession? in
            guard let data = try read() else { return nil }
            do {
                let file = try Self.decoder.decode(File.self, from: data)
                guard file.version == 1 else {
                    throw CredentialStoreError.corrupt(path: fileURL.path, reason: "unknown version \(file.version)")
                }
                return file.session
            } catch let error as CredentialStoreError {
                throw error
            } catch {
                throw .corrupt(path: fileURL.path, reason: Self.reason(error))
            }
        }
    }

    /// The file's bytes, or `nil` when there is none. Only a plain file is read, without waiting
    /// (a FIFO planted at the path would block every caller of the store), and at most
    /// ``maximumSize`` of it.
    private func read() throws(CredentialStoreError) -> Data? {
        let descriptor = POSIX.open(fileURL.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .unreadable(path: fileURL.path, reason: POSIX.lastError)
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        switch POSIX.kind(of: descriptor) {
        case .regular(let size) where size > Self.maximumSize:
            throw .corrupt(path: fileURL.path, reason: "\(size) bytes, more than a session's \(Self.maximumSize)")
        case .regular: break
        case .other: throw .unreadable(path: fileURL.path, reason: "not a plain file")
        case .unreadable(let reason): throw .unreadable(path: fileURL.path, reason: reason)
        }
        do {
            return try handle.read(upToCount: Self.maximumSize) ?? Data()
        } catch {
            throw .unreadable(path: fileURL.path, reason: Self.reason(error))
        }
    }

    /// The largest file taken for a session: a token, a refresh token and a user are a few
    /// kilobytes.
    static let maximumSize = 1024 * 1024

    public func save(_ session: PersistedSession) throws(CredentialStoreError) {
        try lock.withLock { _ throws(CredentialStoreError) in
            let data: Data
            do {
                data = try Self.encoder.encode(File(version: 1, session: session))
            } catch {
                throw .writeFailed(path: fileURL.path, reason: Self.reason(error))
            }
            // What cannot be loaded again is not saved.
            guard data.count <= Self.maximumSize else {
                throw .writeFailed(path: fileURL.path, reason: "\(data.count) bytes, more than a session's \(Self.maximumSize)")
            }
            try writeAtomically(data)
        }
    }

    public func delete() throws(CredentialStoreError) {
        try lock.withLock { _ throws(CredentialStoreError) in
            // A save cut short by a crash or power loss may have left its temporary file, with a
            // token in it: a logout removes those too (not one of the last minute: another
            // process sharing the file may be saving, and its rename would fail).
            removeLeftoverTemporaryFiles()
            guard unlink(fileURL.path) == 0 else {
                guard errno == ENOENT else { throw .deleteFailed(path: fileURL.path, reason: String(cString: strerror(errno))) }
                return
            }
            _ = POSIX.synchronize(fileURL.deletingLastPathComponent().path)
        }
    }

    /// Removes `.<name>.<UUID>.tmp` files beside the session file (see `writeAtomically`) last
    /// written more than a minute ago: a save takes milliseconds.
    private func removeLeftoverTemporaryFiles() {
        let folder = fileURL.deletingLastPathComponent()
        let prefix = ".\(fileURL.lastPathComponent)."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        let recent = Date().addingTimeInterval(-60)
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            let path = folder.appendingPathComponent(name).path
            let written = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
            if let written, written > recent { continue }
            unlink(path)
        }
    }

    private func writeAtomically(_ data: Data) throws(CredentialStoreError) {
        let folder = fileURL.deletingLastPathComponent()
        // The folders made here, outermost first: each is durable only once its parent is.
        var made: [URL] = []
        var missing = folder
        while made.count < 64, !FileManager.default.fileExists(atPath: missing.path), missing.pathComponents.count > 1 {
            made.insert(missing, at: 0)
            missing = missing.deletingLastPathComponent()
        }
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .writeFailed(path: fileURL.path, reason: Self.reason(error))
        }
        for made in made { _ = POSIX.synchronize(made.deletingLastPathComponent().path) }
        let temporary = folder.appendingPathComponent(".\(fileURL.lastPathComponent).\(UUID().uuidString).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .writeFailed(path: fileURL.path, reason: String(cString: strerror(errno)))
        }
        var failure = data.withUnsafeBytes { POSIX.writeAll(descriptor, $0) }
        if failure == nil, fsync(descriptor) != 0 { failure = String(cString: strerror(errno)) }
        close(descriptor)
        if failure == nil, rename(temporary, fileURL.path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporary)
            throw .writeFailed(path: fileURL.path, reason: failure)
        }
        // The rename is durable only once the folder is: without it, a power loss can bring back
        // the previous session (a logged-out user's token) after the new one was reported saved.
        _ = POSIX.synchronize(folder.path)
    }

    private static func reason(_ error: any Error) -> String {
        if let decoding = error as? DecodingError {
            switch decoding {
            case .dataCorrupted(let context): return context.debugDescription
            case .keyNotFound(let key, _): return "missing \"\(key.stringValue)\""
            case .typeMismatch(_, let context), .valueNotFound(_, let context): return context.debugDescription
            @unknown default: return "\(decoding)"
            }
        }
        return (error as NSError).localizedDescription
    }

    // Dates keep Foundation's default form (seconds since 2001 as a double), which round-trips exactly.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return encoder
    }()

    private static let decoder = FastJSONDecoder()
}

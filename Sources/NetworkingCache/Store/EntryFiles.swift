import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file operations of the disk tier, on POSIX calls: whole-file reads, atomic replacement
/// (a temporary file in the same folder, optionally `fsync`ed, renamed over the entry, then the
/// folder `fsync`ed), removal and listing. Nothing here takes a lock; callers run it outside theirs.
enum EntryFiles {
    /// What reading a file found.
    enum ReadResult {
        /// No file by that name.
        case missing
        /// The file could not be read now (out of file descriptors, a symbolic link loop, no
        /// permission): it may be there, so it stays counted.
        case unreadable
        /// The file's bytes.
        case contents(Data)
        /// The file is larger than the reader accepts: not an entry this cache wrote.
        case oversized
    }

    /// One file of a listing.
    struct Listed {
        let name: String
        let size: Int
        let modified: TimeInterval
    }

    /// The prefix of temporary files, which ``list(_:removingTemporaryFilesOlderThan:)`` skips.
    static let temporaryPrefix = ".tmp-"

    /// The first `count` bytes of the file at `path` (fewer when it is shorter), or `nil` when it
    /// cannot be opened.
    static func prefix(of path: String, count: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { buffer -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            while true {
                let read = systemRead(descriptor, base, count)
                if read < 0, errno == EINTR { continue }
                return max(read, 0)
            }
        }
        return Array(bytes.prefix(read))
    }

    /// The whole contents of the file at `path`, refusing files larger than `limit` bytes.
    /// Anything but a regular file (a named pipe, a device put in the folder) counts as oversized,
    /// so that it is removed; opening does not block on a pipe without a writer.
    static func read(_ path: String, limit: Int) -> ReadResult {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ENOENT || errno == ENOTDIR ? .missing : .unreadable }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .unreadable }
        guard status.st_mode & S_IFMT == S_IFREG else { return .oversized }
        // Compared before it is made an `Int`, which is 32 bits on watchOS.
        guard status.st_size >= 0, Int64(status.st_size) <= Int64(limit) else { return .oversized }
        let size = Int(status.st_size)
        var data = Data(count: size)
        let read = data.withUnsafeMutableBytes { buffer -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            var total = 0
            while total < size {
                let count = systemRead(descriptor, base + total, size - total)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                total += count
            }
            return total
        }
        if read < size { data.removeSubrange(read..<size) }
        return .contents(data)
    }

    /// Writes `data` as the file `name` in `folder`, atomically: readers see the old file or the
    /// new one, never a part. With `synchronize`, the data reaches the disk before the rename and
    /// the rename before returning, so a power loss leaves one or the other too.
    ///
    /// - Returns: whether the file was written.
    @discardableResult
    static func writeAtomically(_ data: Data, folder: String, name: String, synchronize: Bool) -> Bool {
        let temporary = folder + "/" + temporaryName(for: name)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        let written = data.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            var total = 0
            while total < buffer.count {
                let count = systemWrite(descriptor, base + total, buffer.count - total)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                total += count
            }
            return true
        }
        let synced = !synchronize || fsync(descriptor) == 0
        let closed = close(descriptor) == 0
        guard written, synced, closed, rename(temporary, folder + "/" + name) == 0 else {
            unlink(temporary)
            return false
        }
        if synchronize { synchronizeFolder(folder) }
        return true
    }

    /// Syncs a folder, so that the names made, replaced or removed in it reach the disk.
    static func synchronizeFolder(_ folder: String) {
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    /// Removes the file at `path`, if it exists.
    static func remove(_ path: String) {
        unlink(path)
    }

    /// The name of a temporary file that becomes the file `name`: `.tmp-`, `name`, a dot and a
    /// UUID, so that a removal by name finds the temporary files of the names it removes too.
    static func temporaryName(for name: String) -> String {
        temporaryPrefix + name + "." + UUID().uuidString
    }

    /// The name of the file a temporary file was to become; `nil` for other files (and for
    /// temporary files of earlier versions, which named nothing).
    static func destination(ofTemporary file: String) -> Substring? {
        guard file.hasPrefix(temporaryPrefix) else { return nil }
        let rest = file.dropFirst(temporaryPrefix.count)
        guard let dot = rest.firstIndex(of: ".") else { return nil }
        return rest[..<dot]
    }

    /// The names in `folder` that are not hidden, and its temporary files, without looking at the
    /// files: for removals that choose by name alone.
    static func names(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
            !$0.hasPrefix(".") || $0.hasPrefix(temporaryPrefix)
        }
    }

    /// The files of `folder` (names not starting with a dot), with their sizes and modification
    /// times; temporary files older than `staleTemporaryAge` seconds — left by a process that
    /// died while writing — are removed on the way. `nil` when the folder cannot be read.
    static func list(_ folder: String, removingTemporaryFilesOlderThan staleTemporaryAge: TimeInterval? = nil) -> [Listed]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        let now = Date().timeIntervalSince1970
        var listed: [Listed] = []
        listed.reserveCapacity(names.count)
        for name in names {
            var status = stat()
            guard lstat(folder + "/" + name, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { continue }
            #if canImport(Darwin)
                let time = status.st_mtimespec
            #else
                let time = status.st_mtim
            #endif
            let modified = TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9
            if name.hasPrefix(temporaryPrefix) {
                if let staleTemporaryAge, now - modified > staleTemporaryAge { unlink(folder + "/" + name) }
                continue
            }
            guard !name.hasPrefix(".") else { continue }
            listed.append(Listed(name: name, size: Int(clamping: Int64(status.st_size)), modified: modified))
        }
        return listed
    }
}

// `read` and `write` under names that do not clash with this file's own functions.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Darwin)
        Darwin.read(descriptor, buffer, count)
    #elseif canImport(Musl)
        Musl.read(descriptor, buffer, count)
    #else
        Glibc.read(descriptor, buffer, count)
    #endif
}

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Darwin)
        Darwin.write(descriptor, buffer, count)
    #elseif canImport(Musl)
        Musl.write(descriptor, buffer, count)
    #else
        Glibc.write(descriptor, buffer, count)
    #endif
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The POSIX file calls the library makes, under names that do not clash with the `open`,
/// `write` and `close` methods of the types that make them.
enum POSIX {
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        #if canImport(Darwin)
            Darwin.open(path, flags, mode)
        #elseif canImport(Musl)
            Musl.open(path, flags, mode)
        #else
            Glibc.open(path, flags, mode)
        #endif
    }

    static func write(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Darwin)
            Darwin.write(descriptor, bytes, count)
        #elseif canImport(Musl)
            Musl.write(descriptor, bytes, count)
        #else
            Glibc.write(descriptor, bytes, count)
        #endif
    }

    /// Writes all of `bytes`, again after an interruption; why it could not, or `nil`. A write
    /// that takes no bytes fails too: a file system doing so would have the loop spin for good.
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> String? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return lastError
            }
            guard written > 0 else { return "the file system took no bytes" }
            offset += written
        }
        return nil
    }

    @discardableResult
    static func close(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
            Darwin.close(descriptor)
        #elseif canImport(Musl)
            Musl.close(descriptor)
        #else
            Glibc.close(descriptor)
        #endif
    }

    /// Flushes a file, or a folder's entries, to disk; `false` when it cannot be opened or flushed.
    static func synchronize(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return fsync(descriptor) == 0
    }

    /// Opens a plain file of its own, never through a link and never waiting: with `O_NOFOLLOW`
    /// and `O_NONBLOCK` added, anything but a regular file with one name (a symbolic or hard link
    /// planted in a shared folder, which would have the library read or write wherever it points;
    /// a FIFO, which would block) is closed and refused. The descriptor, or why not.
    static func openOwnFile(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Result<Int32, OwnFileRefusal> {
        let descriptor = open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode)
        guard descriptor >= 0 else { return .failure(.unopened(lastError)) }
        var information = stat()
        guard fstat(descriptor, &information) == 0, information.st_mode & S_IFMT == S_IFREG, information.st_nlink == 1 else {
            close(descriptor)
            return .failure(.notOwnPlainFile)
        }
        return .success(descriptor)
    }

    /// Why ``openOwnFile(_:_:_:)`` gave no descriptor.
    enum OwnFileRefusal: Error, Equatable {
        /// `open` failed (a symbolic link is `ELOOP`), with the system's reason.
        case unopened(String)
        /// A hard link, a FIFO, a device or a folder.
        case notOwnPlainFile
    }

    /// What a path names, following symbolic links (`stat`, not `lstat` as `FileManager`'s
    /// attributes use on Linux, which measure the link itself).
    enum FileKind: Equatable {
        case regular(size: Int64)
        case other
        case unreadable(String)
    }

    static func kind(ofFileAt path: String) -> FileKind {
        var information = stat()
        guard stat(path, &information) == 0 else { return .unreadable(lastError) }
        return kind(of: information)
    }

    /// What the file open as `descriptor` is (a pipe, a device and a folder are `.other`).
    static func kind(of descriptor: Int32) -> FileKind {
        var information = stat()
        guard fstat(descriptor, &information) == 0 else { return .unreadable(lastError) }
        return kind(of: information)
    }

    private static func kind(of information: stat) -> FileKind {
        guard information.st_mode & S_IFMT == S_IFREG else { return .other }
        return .regular(size: Int64(information.st_size))
    }

    /// The last error's message.
    static var lastError: String { String(cString: strerror(errno)) }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Measuring and reading the files of a form with POSIX calls, so every failure maps to a precise
/// ``MultipartError`` and the size is taken from the same open file that is read.
extension MultipartFormData {
    /// The size of the regular file at `url`, following symbolic links. The file is opened, so a
    /// file that exists but cannot be read is reported now rather than when the body is sent.
    ///
    /// - Throws: ``MultipartError/notAFileURL(_:)``, ``MultipartError/fileNotFound(_:)``,
    ///   ``MultipartError/notARegularFile(_:)`` or ``MultipartError/fileUnreadable(_:reason:)``.
    static func regularFileSize(at url: URL) throws(MultipartError) -> Int64 {
        let descriptor = try openForReading(url)
        defer { close(descriptor) }
        return try regularFileSize(of: descriptor, url: url)
    }

    /// `length` bytes of the file at `url` from `offset`, checking that the file still ends where
    /// the region ends, as the whole files of a form must.
    ///
    /// - Throws: ``MultipartError/fileChanged(_:expectedSize:actualSize:)`` when the file's size is not
    ///   `offset + length`, before or while reading; the errors of ``regularFileSize(at:)``.
    static func readFile(at url: URL, offset: Int64, length: Int64) throws(MultipartError) -> Data {
        let descriptor = try openForReading(url)
        defer { close(descriptor) }
        let (expectedSize, overflow) = offset.addingReportingOverflow(length)
        let size = try regularFileSize(of: descriptor, url: url)
        guard !overflow, offset >= 0, length >= 0, size == expectedSize else {
            throw .fileChanged(url, expectedSize: expectedSize, actualSize: size)
        }
        guard let count = Int(exactly: length) else {
            throw .fileUnreadable(url, reason: "\(length) bytes do not fit in memory on this platform")
        }
        var data = Data(count: count)
        // `Data.withUnsafeMutableBytes` rethrows untyped errors, so the loop reports through a Result.
        let outcome = data.withUnsafeMutableBytes { buffer -> Result<Int, MultipartError> in
            var filled = 0
            while filled < count {
                let target = UnsafeMutableRawBufferPointer(rebasing: buffer[filled...])
                switch Result(catching: { () throws(MultipartError) in
                    try readSome(descriptor, into: target, at: offset + Int64(filled), url: url)
                }) {
                case .success(0): return .success(filled)
                case .success(let read): filled += read
                case .failure(let error): return .failure(error)
                }
            }
            return .success(filled)
        }
        let filled = try outcome.get()
        guard filled == count else {
            throw .fileChanged(url, expectedSize: expectedSize, actualSize: offset + Int64(filled))
        }
        // One more byte means the file grew after it was measured.
        var extra: UInt8 = 0
        let grew = try withUnsafeMutableBytes(of: &extra) { (byte) throws(MultipartError) -> Int in
            try readSome(descriptor, into: byte, at: expectedSize, url: url)
        }
        if grew > 0 {
            let actual = (try? regularFileSize(of: descriptor, url: url)) ?? adding(expectedSize, 1)
            throw .fileChanged(url, expectedSize: expectedSize, actualSize: actual)
        }
        return data
    }

    /// Opens `url` read-only. `O_NONBLOCK` keeps a FIFO from blocking the caller; it has no effect
    /// on regular files, and anything else is refused by the size check that follows.
    private static func openForReading(_ url: URL) throws(MultipartError) -> Int32 {
        guard url.isFileURL else { throw .notAFileURL(url) }
        while true {
            let descriptor = url.withUnsafeFileSystemRepresentation { path in
                path.map { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) } ?? -1
            }
            if descriptor >= 0 { return descriptor }
            let code = errno
            switch code {
            case EINTR: continue
            case ENOENT, ENOTDIR: throw .fileNotFound(url)
            default: throw .fileUnreadable(url, reason: systemMessage(code))
            }
        }
    }

    private static func regularFileSize(of descriptor: Int32, url: URL) throws(MultipartError) -> Int64 {
        switch POSIX.kind(of: descriptor) {
        case .regular(let size): return size
        case .other: throw .notARegularFile(url)
        case .unreadable(let reason): throw .fileUnreadable(url, reason: reason)
        }
    }

    /// One `pread` into `buffer`, retried on `EINTR`; returns the number of bytes read, 0 at the end.
    private static func readSome(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at position: Int64, url: URL
    ) throws(MultipartError) -> Int {
        guard let offset = off_t(exactly: position) else {
            throw .fileUnreadable(url, reason: "offset \(position) is beyond what this platform can address")
        }
        while true {
            let read = pread(descriptor, buffer.baseAddress, buffer.count, offset)
            if read >= 0 { return read }
            let code = errno
            if code != EINTR { throw .fileUnreadable(url, reason: systemMessage(code)) }
        }
    }

    private static func systemMessage(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

import Foundation

/// Reads a file a developer names in the configuration (a certificate, a CA bundle, a route file
/// or an OpenAPI document): a plain file only, with a size cap, so a path that names something
/// endless (`/dev/zero`), something that may never answer (a FIFO, `/dev/stdin`) or a huge file
/// by mistake fails with a reason instead of taking the process's memory or waiting for good.
enum ConfigurationFile {
    /// Why a file was not read, as a clause ("cannot be read: …", "is larger than … bytes").
    struct Refusal: Error {
        let reason: String
    }

    /// The whole file, at most `limit` bytes.
    static func contents(of url: URL, limit: Int) throws(Refusal) -> Data {
        guard url.isFileURL else { throw Refusal(reason: "cannot be read: it is not a file URL") }
        // Opened without waiting (a FIFO put in its place would block an open for reading until
        // a writer comes), then checked through the descriptor: what is read is what was checked.
        let descriptor = POSIX.open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw Refusal(reason: "cannot be read: \(POSIX.lastError)") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        defer { try? handle.close() }
        switch POSIX.kind(of: descriptor) {
        case .unreadable(let reason): throw Refusal(reason: "cannot be read: \(reason)")
        case .other: throw Refusal(reason: "cannot be read: it is not a plain file (a folder, a pipe or a device)")
        case .regular(let size) where size > limit: throw Refusal(reason: "is larger than \(limit) bytes")
        case .regular: break
        }
        let data: Data
        do {
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw Refusal(reason: "cannot be read: \(error.localizedDescription.clause)")
        }
        // It grew since it was looked at.
        guard data.count <= limit else { throw Refusal(reason: "is larger than \(limit) bytes") }
        return data
    }

    /// The most bytes read from a certificate or CA file: a bundle of every public root is ~200 KiB.
    static let maximumCertificateSize = 16 * 1024 * 1024
    /// The most bytes read from a route file or an OpenAPI document.
    static let maximumDocumentSize = 64 * 1024 * 1024
}

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
        switch POSIX.kind(ofFileAt: url.path) {
        case .unreadable(let reason): throw Refusal(reason: "cannot be read: \(reason)")
        case .other: throw Refusal(reason: "cannot be read: it is not a plain file (a folder, a pipe or a device)")
        case .regular(let size) where size > limit: throw Refusal(reason: "is larger than \(limit) bytes")
        case .regular: break
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw Refusal(reason: "cannot be read: \(error.localizedDescription.clause)")
        }
        defer { try? handle.close() }
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

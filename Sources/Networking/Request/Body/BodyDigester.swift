import Foundation
import Synchronization

/// Computes a request's ``ContentDigests`` before it is sent and sets their headers.
///
/// A data or file body is read once more, piece by piece, on a thread of its own (files are never
/// loaded whole, and Swift's cooperative threads are not held by disk reads). A body that cannot
/// be read twice — compressed on the fly, or a stream — is staged in a temporary file while it is
/// hashed, on the calling task and within a timeout of its own, the request's (a stream that
/// stalls fails with a timeout; the sending then has the whole timeout again), and that file is
/// sent instead, so the digests cover exactly the bytes sent. A compressed body
/// staged so keeps its `Content-Encoding: gzip`: the file holds gzip bytes but is no longer a
/// gzipped ``RequestBody``, so no transport would add the header for it.
enum BodyDigester {
    /// The request with its digest headers, and the staged file to remove after the call, if any.
    ///
    /// - Throws: ``RepositoryError/invalidRequest(reason:request:)`` when the body cannot be read,
    ///   ``RepositoryError/cancelled(_:)`` when the call is cancelled meanwhile (hashing stops
    ///   between pieces of the body), ``RepositoryError/timeout(_:)`` when staging a body takes
    ///   longer than the request's timeout (staging and sending each have the whole of it).
    static func prepare(_ request: TransportRequest, digests: ContentDigests) async throws(RepositoryError)
        -> (request: TransportRequest, staged: URL?)
    {
        guard !digests.isEmpty else { return (request, nil) }
        var request = request
        var md5 = MD5()
        var sha256 = SHA256()
        var staged: URL?
        let body = request.body ?? .data(Data())
        do {
            if body.isRepeatable, !body.isGzipped {
                // Sent as hashed: a file sent "to its end" is sent to where it ended when hashed,
                // or a file still growing (a log) would go longer than its digests say.
                let pinned = try body.pinningFileLengths()
                (md5, sha256) = try await hashOnOwnThread(pinned, digests: digests)
                request.body = pinned
            } else {
                let deadline = ContinuousClock.now + .clampedSeconds(request.timeout)
                let file = try await BodySpool.spool(body, deadline: deadline, idleTimeout: request.idleTimeout) { bytes in
                    if digests.contains(.md5) { md5.update(buffer: bytes) }
                    if digests.contains(.sha256) { sha256.update(buffer: bytes) }
                }
                staged = file
                request.body = .file(file)
                if body.isGzipped { request.headers.setIfAbsent("Content-Encoding", "gzip") }
            }
        } catch {
            // Before anything was sent: a cancellation here says so.
            throw RepositoryError(error, request: request.summary, attempts: 0)
        }
        if digests.contains(.md5) { request.headers["Content-MD5"] = DigestHeaders.contentMD5(md5.finalize()) }
        if digests.contains(.sha256) { request.headers["Content-Digest"] = DigestHeaders.contentDigestSHA256(sha256.finalize()) }
        return (request, staged)
    }

    private static func hashOnOwnThread(_ body: RequestBody, digests: ContentDigests) async throws(TransportError) -> (MD5, SHA256) {
        try await OwnThread.run { cancelled in hash(body, digests: digests, cancelled: cancelled) }.get()
    }

    /// Hashes the body piece by piece; a cancelled call stops it between pieces, so a large file
    /// is not read to its end for a request that will never be sent.
    private static func hash(_ body: RequestBody, digests: ContentDigests, cancelled: CancelFlag) -> Result<(MD5, SHA256), TransportError> {
        var md5 = MD5()
        var sha256 = SHA256()
        let reader: BodyReader
        do {
            reader = try BodyReader(body) {}
        } catch {
            return .failure(error)
        }
        defer { reader.close() }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            if cancelled.isSet { return .failure(.cancelled) }
            let outcome = buffer.withUnsafeMutableBytes { reader.read(into: $0) }
            switch outcome {
            case .bytes(let count):
                buffer.withUnsafeBytes { bytes in
                    let piece = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                    if digests.contains(.md5) { md5.update(buffer: piece) }
                    if digests.contains(.sha256) { sha256.update(buffer: piece) }
                }
            case .end: return .success((md5, sha256))
            case .wouldBlock: return .failure(.invalidRequest("the body cannot be hashed: it is a stream"))
            case .failed(let error): return .failure(error)
            }
        }
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a download's body into its partial file as it arrives, as ``DownloadStateMachine``
/// decides for each response head: from the start, or appended to a kept partial file. It hashes
/// what it writes when a checksum is expected, keeps the resumption record beside the partial file
/// when the download is resumable, and reports progress counting the bytes already kept.
///
/// When the retry policy sends a resumable download again within its call, the next attempt asks
/// only for the bytes after those written (``retrying(_:)``), as a new call would.
///
/// Thread-safety (hence `@unchecked Sendable`): a transport calls ``begin(_:canPause:resume:)``
/// and ``receive(_:)`` from one thread at a time, strictly before the exchange that carries the
/// sink returns, and the retry step calls ``retrying(_:)`` between attempts; the download reads
/// the outcome (``decision``, ``finish()``) only after that.
final class FileDownloadSink: ResumingBodySink, @unchecked Sendable {
    let partialURL: URL
    let resumptionURL: URL?
    let requestURL: URL
    private(set) var start: DownloadStateMachine.Start
    private var prefixHasher: SHA256?
    private let progress: ProgressHandler?
    /// The most bytes the file may hold (``DownloadOptions/maximumSize``), `nil` for no limit.
    private let maximumSize: Int64?

    private(set) var decision: DownloadStateMachine.Decision?
    private(set) var head: ResponseHead?
    private(set) var written: Int64 = 0
    private(set) var failure: DownloadFailure?
    /// Why the server's body was refused: longer than its head announced (the download reports
    /// it as ``RepositoryError/invalidResponse(reason:context:)``, with that head).
    private(set) var serverFault: String?
    /// Where this answer's body starts in the file and where its head says it ends (a 206's
    /// range, else its `Content-Length`); no end when the head does not say.
    private var bodyBounds: (start: Int64, end: Int64?) = (0, nil)
    private var descriptor: Int32 = -1
    private var hasher: SHA256?
    private var total: Int64?
    /// The `If-Range` value that would resume the bytes written.
    private var validator: String?

    /// - Parameters:
    ///   - prefixHasher: with a checksum, the hash of the kept partial file's bytes when resuming,
    ///     or a fresh hasher; `nil` without a checksum.
    ///   - resumptionURL: where the resumption record goes, for a resumable download.
    ///   - maximumSize: the most bytes the file may hold (0 or more); `nil` for no limit.
    init(
        partialURL: URL, resumptionURL: URL?, requestURL: URL, start: DownloadStateMachine.Start, prefixHasher: SHA256?,
        progress: ProgressHandler?, maximumSize: Int64? = nil
    ) {
        self.partialURL = partialURL
        self.resumptionURL = resumptionURL
        self.requestURL = requestURL
        self.start = start
        self.prefixHasher = prefixHasher
        self.progress = progress
        self.maximumSize = maximumSize
    }

    deinit { closeFile() }

    func begin(_ head: ResponseHead, canPause: Bool, resume: @escaping @Sendable () -> Void) -> Bool {
        let decision = DownloadStateMachine.decide(status: head.statusCode, headers: head.headers, start: start)
        self.decision = decision
        self.head = head
        failure = nil
        serverFault = nil
        closeFile()
        let announced: Int64? = if case .writeFromStart(let total) = decision { total } else { decision.appending?.total }
        if let maximumSize, let announced, announced > maximumSize {
            // The first byte of the body fails the transfer, with nothing written (a kept partial
            // file is left as it was).
            failure = .tooLarge(limit: maximumSize, announced: announced)
            return true
        }
        switch decision {
        case .notADownload, .alreadyComplete: return false
        case .restart: return true
        case .writeFromStart(let total):
            // The file starts over (it changed since the parts before): nothing was resumed.
            resumedFrom = nil
            guard open(truncatingTo: 0) else { return true }
            hasher = prefixHasher == nil ? nil : SHA256()
            self.total = total
        case .append, .appendPart:
            guard let appending = decision.appending, open(truncatingTo: appending.offset) else { return true }
            hasher = prefixHasher
            total = appending.total
        }
        bodyBounds = (written, DownloadStateMachine.bodyEnd(status: head.statusCode, headers: head.headers, announced: announced))
        // Appending keeps the validator the request sent when the answer has no ETag (an ETag,
        // even a weak one, rules a date out), over a date the answer has: a known entity tag
        // is never replaced by a date (RFC 9110 §13.1.5).
        let sent: String? =
            if case .resume(_, let validator, _) = start, decision.appending != nil, head.headers["ETag"] == nil { validator } else { nil }
        validator = sent ?? DownloadStateMachine.validator(in: head.headers)
        if let resumptionURL {
            if let validator {
                let record = DownloadStateMachine.Resumption(url: requestURL.absoluteString, validator: validator, total: total)
                try? JSONEncoder().encode(record).write(to: resumptionURL, options: .atomic)
            } else {
                // An older record would resume these new bytes with another file's validator.
                try? FileManager.default.removeItem(at: resumptionURL)
            }
        }
        report()
        return true
    }

    func receive(_ bytes: UnsafeRawBufferPointer) -> ResponseBodySinkStatus {
        switch decision {
        case .writeFromStart?, .append?, .appendPart?:
            // After a failed write, nothing more: a later byte would leave a hole in the file.
            guard failure == nil, descriptor >= 0 else { return failed() }
            // A body longer than its head announced (Content-Range, Content-Length) would put bytes
            // past the file's end, or a part's bytes where the next part's go: what is within it
            // is written, the rest refused, so the file stays good to resume from.
            if let end = bodyBounds.end, Int64(bytes.count) > end - written {
                let within = Int(clamping: max(0, end - written))
                if within > 0, case .failed(let error) = write(UnsafeRawBufferPointer(rebasing: bytes.prefix(within))) {
                    return .failed(error)
                }
                let announced = end - bodyBounds.start
                let reason = "the server sent more than the \(announced) bytes its head announced (Content-Range or Content-Length)"
                serverFault = reason
                return .failed(.invalidResponse(reason))
            }
            return write(bytes)
        default:
            return .failed(.invalidRequest("the download starts over"))
        }
    }

    /// Flushes and closes the partial file; returns its size and, with a checksum, its hex SHA-256.
    func finish() -> (size: Int64, sha256: String?)? {
        guard descriptor >= 0 else { return nil }
        defer { closeFile() }
        guard fsync(descriptor) == 0 else {
            failure = .fileSystem("the partial file \(partialURL.path) could not be flushed: \(POSIX.lastError)")
            return nil
        }
        let digest = hasher.map { SHA256.hex($0.finalize()) }
        return (written, digest)
    }

    /// The size announced for the whole file.
    var expectedTotal: Int64? { total }

    /// The head that came, as a response without its body, for an error's context.
    var headResponse: TransportResponse? {
        head.map { TransportResponse(statusCode: $0.statusCode, headers: $0.headers, url: $0.url) }
    }

    /// The request of the next attempt, and this sink made ready for it. A resumable download that
    /// wrote bytes it can resume asks for the rest (`Range` and `If-Range`) and appends it; one
    /// whose file was truncated (a 200) and cannot be resumed starts from nothing, never with a
    /// `Range` that the emptied file no longer matches. A file the attempt did not touch (no
    /// answer, an error status) is asked for as before.
    func retrying(_ request: TransportRequest) -> TransportRequest {
        switch decision {
        case .writeFromStart?, .append?, .appendPart?:
            closeFile()
            if resumptionURL != nil, failure == nil, let validator, written > 0 {
                start = .resume(from: written, validator: validator, total: total)
                prefixHasher = hasher
            } else {
                start = .fresh
                prefixHasher = prefixHasher.map { _ in SHA256() }
            }
        default:
            break
        }
        // What the next attempt brings is its own: no head yet (an interceptor may answer it), and
        // no failure of this one's to report for an attempt that fails before its head.
        head = nil
        decision = nil
        failure = nil
        serverFault = nil
        var next = request
        next.headers["Range"] = nil
        next.headers["If-Range"] = nil
        for field in DownloadStateMachine.headers(for: start) { next.headers[field.name] = field.value }
        return next
    }

    /// Where the call's first answer appended to a kept partial file, once a part of it was
    /// followed by a request for the rest (``continuing()``).
    private(set) var resumedFrom: Int64?

    /// The start of the request for the rest of the file after a part written whole (a server
    /// that caps the size of a range), and this sink made ready to append it; `nil` when there is
    /// no rest to ask for, or the part did not come whole.
    func continuing() -> DownloadStateMachine.Start? {
        guard failure == nil, let next = DownloadStateMachine.continuation(after: decision, written: written, validator: validator)
        else { return nil }
        if resumedFrom == nil, case .appendPart(let offset, _, _)? = decision { resumedFrom = offset }
        closeFile()
        start = next
        prefixHasher = hasher
        head = nil
        decision = nil
        return next
    }

    /// Reports the whole file as received: a partial file that was complete already.
    func reportComplete(size: Int64) {
        written = size
        total = size
        report()
    }

    /// The status that stops the transfer for ``failure`` (which the download reports as
    /// ``RepositoryError/downloadFailed(_:_:)``; the chain sees its description).
    private func failed() -> ResponseBodySinkStatus {
        .failed(.invalidRequest(failure?.description ?? "the partial file is not open"))
    }

    private func write(_ bytes: UnsafeRawBufferPointer) -> ResponseBodySinkStatus {
        guard bytes.baseAddress != nil else { return .accepted }
        if let maximumSize, Int64(bytes.count) > maximumSize - written {
            failure = .tooLarge(limit: maximumSize, announced: nil)
            return failed()
        }
        if let reason = POSIX.writeAll(descriptor, bytes) {
            failure = .fileSystem("the partial file \(partialURL.path) could not be written: \(reason)")
            return failed()
        }
        hasher?.update(buffer: bytes)
        written += Int64(bytes.count)
        report()
        return .accepted
    }

    private func open(truncatingTo size: Int64) -> Bool {
        // Never through a link: one planted in a shared folder would have the bytes appended to
        // (or the file truncated at) wherever it points.
        switch POSIX.openOwnFile(partialURL.path, O_WRONLY | O_CREAT, 0o600) {
        case .success(let opened): descriptor = opened
        case .failure(let refusal):
            failure = .fileSystem(DownloadFiles.problem(refusal, path: partialURL.path, doing: "opened"))
            return false
        }
        // `off_t` has 32 bits on Linux for armv7: a size past it fails here, not with a trap.
        guard let end = off_t(exactly: size), ftruncate(descriptor, end) == 0, lseek(descriptor, end, SEEK_SET) >= 0
        else {
            failure = .fileSystem("the partial file \(partialURL.path) could not be opened: \(POSIX.lastError)")
            closeFile()
            return false
        }
        written = size
        return true
    }

    private func closeFile() {
        if descriptor >= 0 {
            POSIX.close(descriptor)
            descriptor = -1
        }
    }

    private func report() {
        guard let progress else { return }
        let snapshot = TransferProgress(bytesReceived: written, totalBytesToReceive: total)
        BlockingGuard.runningTransportCallback { progress(snapshot) }
    }
}

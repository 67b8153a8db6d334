import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension AbstractRepository {
    /// Downloads the response body to a file: streamed to a partial file beside the destination
    /// (never held in memory), checked, then moved into place atomically.
    ///
    /// ```swift
    /// func fetchExport(to file: URL) async -> Result<DownloadedFile, RepositoryError> {
    ///     await performRequest(Endpoint.get("exports/latest.csv").downloading(to: file, resumable: true))
    /// }
    /// ```
    ///
    /// - Nothing is left behind when the download fails or is cancelled, unless it is
    ///   `resumable`: then the partial file (hidden beside the destination) and its validator are
    ///   kept, and the next download to the same destination asks only for the rest (`Range` with
    ///   `If-Range`), as does a retry of the same call. When the server ignores the range (200),
    ///   or the file changed, it starts over. A server that caps the size of a range answers a
    ///   resumed call with parts: each is appended and the rest asked for within the call, up to
    ///   64 parts under 64 KiB (then it fails with ``DownloadFailure/incomplete(received:expected:)``
    ///   and keeps them for the next call). A `Range` or `If-Range` of the caller's is refused.
    /// - With `expectedSHA256`, a file whose digest differs fails with
    ///   ``RepositoryError/downloadFailed(_:_:)`` and is removed.
    /// - Progress (``Endpoint/reportingProgress(_:)``) counts the bytes in the file, resumed ones
    ///   included, with the total when the server says it.
    /// - A non-2xx answer fails as any call does (its body is kept for the error, not written);
    ///   so do a `202` (not ready yet), a `204` and a `205` (no content: a file already at the
    ///   destination is left as it is), with ``RepositoryError/invalidResponse(reason:context:)``.
    /// - One download at a time per destination: another one running (in this process or
    ///   another) fails this one at once with ``DownloadFailure/destinationInUse(path:)``.
    /// - The destination is a file URL naming a file (or none yet) in a folder that exists: one
    ///   that is not a file URL, names a folder, a device or a FIFO is refused with
    ///   ``RepositoryError/invalidRequest(reason:request:)`` before anything is sent.
    /// - A body longer than its head announced (a `206` past its `Content-Range`, a body past its
    ///   `Content-Length`) fails with ``RepositoryError/invalidResponse(reason:context:)`` at the
    ///   first byte past it; what came within it is kept for a resumable download.
    public func performRequest(_ endpoint: Endpoint<DownloadedFile>) async -> Result<DownloadedFile, RepositoryError> {
        await run(endpoint) { (endpoint) async throws(RepositoryError) -> DownloadedFile in try await self.download(endpoint) }
    }

    private func download(_ endpoint: Endpoint<DownloadedFile>) async throws(RepositoryError) -> DownloadedFile {
        var options = endpoint.downloadOptions ?? DownloadOptions()
        let requestURL = try builder.build(endpoint).url
        // Hex in either case (PowerShell's Get-FileHash prints upper case), set through the
        // initializer or the property; anything else could never match, so nothing is sent.
        options.expectedSHA256 = options.expectedSHA256.map { $0.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() }
        // A limit below 0 is 0 (nothing fits but an empty file).
        options.maximumSize = options.maximumSize.map { max(0, $0) }
        if let expected = options.expectedSHA256,
            expected.utf8.count != 64 || !expected.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        {
            throw .invalidRequest(
                reason: "expectedSHA256 must be 64 hexadecimal digits, not \"\(expected.prefix(80))\"",
                request: RequestSummary(method: endpoint.method, url: requestURL))
        }
        // The download asks for ranges itself; one of the caller's would be read as the whole file.
        guard endpoint.headers["Range"] == nil, endpoint.headers["If-Range"] == nil else {
            throw .invalidRequest(
                reason: "a download sets Range and If-Range itself (to resume): read a range with Endpoint<Data> or ResponseChunks",
                request: RequestSummary(method: endpoint.method, url: requestURL))
        }
        guard options.destination != nil || !options.resumable else {
            throw .invalidRequest(
                reason: "a resumable download needs a destination to resume into",
                request: RequestSummary(method: endpoint.method, url: requestURL))
        }
        if let destination = options.destination, let problem = Self.problem(withDestination: destination) {
            throw .invalidRequest(reason: problem, request: RequestSummary(method: endpoint.method, url: requestURL))
        }
        let destination = options.destination ?? Self.temporaryDestination(for: requestURL)
        let files = DownloadFiles(destination: destination)
        // One download per destination at a time: two would write the same partial file.
        let lock: DownloadFiles.Lock
        switch files.lock() {
        case .acquired(let acquired): lock = acquired
        case .refused(let failure):
            throw .downloadFailed(failure, ErrorContext(request: RequestSummary(method: endpoint.method, url: requestURL), attempts: 0))
        }
        defer { lock.release() }
        if !options.resumable { files.removePartial() }
        // One call, however many times it starts over: a restart keeps to the first exchange's session.
        let call = callContext(for: endpoint)
        // A start over sends the request again: not a write the retry policy would not send
        // again (a `POST` that makes an export would make it twice), nor a stream, read once.
        let canStartOver =
            endpoint.requestBody?.isStreamed != true
            && (endpoint.retryPolicy ?? configuration.retryPolicy).retryableMethods.contains(endpoint.method)
        restarts: for _ in 0..<2 {
            let start =
                options.resumable
                ? DownloadStateMachine.start(partialSize: files.partialSize, resumption: files.resumption, url: requestURL) : .fresh
            if start == .fresh { files.removePartial() }
            let sink = FileDownloadSink(
                partialURL: files.partial, resumptionURL: options.resumable ? files.resumptionRecord : nil, requestURL: requestURL,
                start: start,
                prefixHasher: try await Self.prefixHasher(
                    options: options, start: start, files: files, request: RequestSummary(method: endpoint.method, url: requestURL)),
                progress: endpoint.progress, maximumSize: options.maximumSize)
            var attempt = endpoint
            for field in DownloadStateMachine.headers(for: start) { attempt.headers.setIfAbsent(field.name, field.value) }
            // The file holds the bytes as sent: a compressed answer's length and ranges would not fit it.
            attempt.headers.setIfAbsent("Accept-Encoding", "identity")
            attempt.protocolHeaders.formUnion(["Accept-Encoding", "Range", "If-Range"])
            attempt.responseBodySink = sink
            attempt.progress = nil
            // Parts of less than 64 KiB a server capping its ranges sent: past `maximumSmallParts`
            // of them, the call ends with the file incomplete (and kept), rather than crawl.
            var smallParts = 0
            while true {
                let response: TransportResponse
                let request: TransportRequest
                do throws(RepositoryError) {
                    (request, response) = try await exchange(attempt, in: call)
                    // An interceptor answered without the transport (a stub, a mock): its body goes
                    // to the file as a transport's would.
                    if sink.head == nil { try RequestPipeline.feedAnswer(response, to: sink, request: request.summary) }
                } catch {
                    // A 416 that says the partial file is whole, whatever error a custom mapping made of it.
                    if case .alreadyComplete? = sink.decision, let context = error.context, context.statusCode == 416 {
                        return try await finalize(sink: sink, files: files, options: options, context: context, complete: true)
                    }
                    if case .restart? = sink.decision, canStartOver {
                        files.removePartial()
                        continue restarts
                    } else if case .restart(let reason)? = sink.decision {
                        files.removePartial()
                        let context = error.context ?? ErrorContext(request: RequestSummary(method: endpoint.method, url: requestURL))
                        throw .invalidResponse(
                            reason: Self.cannotStartOver(reason, endpoint.method),
                            context: ErrorContext(
                                request: context.request, response: context.response ?? sink.headResponse, attempts: context.attempts))
                    }
                    // Whatever the partial file holds stays to resume from: the bytes of this attempt,
                    // or those kept before when it failed without touching them (no network, a 503, a
                    // cancellation before the head).
                    files.abandon(keepingPartial: options.resumable && (files.partialSize ?? 0) > 0)
                    // The head that came belongs in the error: the status and fields that explain it.
                    let context = error.context.map {
                        ErrorContext(request: $0.request, response: $0.response ?? sink.headResponse, attempts: $0.attempts)
                    }
                    if let fault = sink.serverFault, let context { throw .invalidResponse(reason: fault, context: context) }
                    if let failure = sink.failure, let context { throw .downloadFailed(failure, context) }
                    throw error
                }
                if case .restart(let reason)? = sink.decision {
                    files.removePartial()
                    guard canStartOver else {
                        throw .invalidResponse(
                            reason: Self.cannotStartOver(reason, endpoint.method),
                            context: ErrorContext(request: request.summary, response: response, attempts: response.attempts))
                    }
                    continue restarts
                }
                if case .notADownload? = sink.decision {
                    // A 202 (not ready yet), or no content: not the file, and the kept bytes stay.
                    files.abandon(keepingPartial: options.resumable && (files.partialSize ?? 0) > 0)
                    throw .invalidResponse(
                        reason: "the server answered \(response.statusCode) without the file",
                        context: ErrorContext(request: request.summary, response: response, attempts: response.attempts))
                }
                if case .appendPart(let offset, let end, _)? = sink.decision, end - offset < Self.smallPartBytes {
                    smallParts += 1
                }
                // A server that caps its ranges sent a part: ask for the rest, as it was asked for.
                if smallParts < Self.maximumSmallParts, let next = sink.continuing() {
                    for field in DownloadStateMachine.headers(for: next) { attempt.headers[field.name] = field.value }
                    continue
                }
                return try await finalize(
                    sink: sink, files: files, options: options,
                    context: ErrorContext(request: request.summary, response: response, attempts: response.attempts), complete: false)
            }
        }
        throw .invalidResponse(
            reason: "the server keeps answering with ranges that do not fit the file",
            context: ErrorContext(request: RequestSummary(method: endpoint.method, url: requestURL)))
    }

    /// Why a download that would start over ends instead.
    private static func cannotStartOver(_ reason: String, _ method: HTTPMethod) -> String {
        "\(reason), and the download cannot start over: its \(method.rawValue) is not one the retry policy sends again, or its body is a stream"
    }

    /// Why nothing can be downloaded to `destination`, before anything is sent: it is not a file
    /// URL (its path would be taken from a web address), it names a folder (the whole body would
    /// come before the rename into it failed), or a device, FIFO or socket (which the rename would
    /// replace); `nil` when it can be written.
    static func problem(withDestination destination: URL) -> String? {
        // Only its scheme is named: a web address given by mistake may carry a signature or a token.
        guard destination.isFileURL else {
            return "the destination must be a file URL (URL(fileURLWithPath:)), not a \(destination.scheme ?? "relative") URL"
        }
        var information = stat()
        if destination.hasDirectoryPath || (stat(destination.path, &information) == 0 && information.st_mode & S_IFMT == S_IFDIR) {
            return "the destination \(destination.path) is a folder: name the file to write"
        }
        // A device or a FIFO (`/dev/null`) would be replaced by the file, not written to.
        if lstat(destination.path, &information) == 0, ![S_IFREG, S_IFLNK].contains(information.st_mode & S_IFMT) {
            return "the destination \(destination.path) is not a plain file (a device, a FIFO or a socket) that the download could replace"
        }
        return nil
    }

    /// A part of a capped range smaller than this counts against ``maximumSmallParts``.
    static let smallPartBytes: Int64 = 64 * 1024
    /// The most parts smaller than ``smallPartBytes`` one call appends, its first answer's included.
    static let maximumSmallParts = 64

    /// Checks the finished partial file and moves it into place.
    private func finalize(
        sink: FileDownloadSink, files: DownloadFiles, options: DownloadOptions, context: ErrorContext, complete: Bool
    ) async throws(RepositoryError) -> DownloadedFile {
        let size: Int64
        var sha256: String?
        if complete {
            // Written by an earlier run, which may have ended before it was flushed to disk.
            // On a thread of its own: flushing a large file can block for seconds.
            if let problem = await OwnThread.run({ _ in files.syncPartial() }) { throw .downloadFailed(.fileSystem(problem), context) }
            size = files.partialSize ?? 0
            // Whole already, but kept by a call with a larger limit (or none).
            if let limit = options.maximumSize, size > limit {
                files.abandon(keepingPartial: options.resumable)
                throw .downloadFailed(.tooLarge(limit: limit, announced: size), context)
            }
            if options.expectedSHA256 != nil {
                let whole = await OwnThread.run { cancelled in files.hashPartial(upTo: size, cancelled: cancelled) }
                sha256 = SHA256.hex(try whole.mapError { $0.error(context) }.get().finalize())
                if Task.isCancelled { throw .cancelled(context) }
            }
            sink.reportComplete(size: size)
        } else {
            guard let finished = await OwnThread.run({ _ in sink.finish() }) else {
                // Refused on its announced size with no body to fail on (an interceptor's answer):
                // the kept partial file stays as it was.
                let refused = if case .tooLarge? = sink.failure { true } else { false }
                files.abandon(keepingPartial: refused && options.resumable)
                throw .downloadFailed(sink.failure ?? .fileSystem("the partial file \(files.partial.path) was not written"), context)
            }
            (size, sha256) = finished
            if let total = sink.expectedTotal, size != total {
                files.abandon(keepingPartial: options.resumable)
                throw .downloadFailed(.incomplete(received: size, expected: total), context)
            }
        }
        if let expected = options.expectedSHA256, let actual = sha256, actual != expected {
            files.abandon(keepingPartial: false)
            throw .downloadFailed(.checksumMismatch(expected: expected, actual: actual), context)
        }
        if let failure = files.moveIntoPlace(withUsualPermissions: options.destination != nil) {
            // Whole and checked: a resumable download keeps it for the next call (a 416 then
            // confirms it), rather than downloading it all again once the destination is fixed.
            files.abandon(keepingPartial: options.resumable)
            throw .downloadFailed(.fileSystem(failure), context)
        }
        // What the kept partial file contributed: nothing when the answer started over (200).
        let resumedFrom: Int64 =
            if let first = sink.resumedFrom { first } else if case .append(let from, _)? = sink.decision { from } else { 0 }
        return DownloadedFile(
            url: files.destination, size: size, resumedFrom: complete ? size : resumedFrom, sha256: sha256,
            statusCode: context.statusCode ?? 200, headers: context.response?.headers ?? [:])
    }

    /// With a checksum: a hasher that has seen the kept partial file's bytes (resuming) or
    /// nothing. Resuming, the partial file is checked to be a plain file of its own either way.
    private static func prefixHasher(
        options: DownloadOptions, start: DownloadStateMachine.Start, files: DownloadFiles, request: RequestSummary
    ) async throws(RepositoryError) -> SHA256? {
        guard case .resume(let from, _, _) = start else { return options.expectedSHA256 == nil ? nil : SHA256() }
        guard options.expectedSHA256 != nil else {
            // Resumed without a checksum: the kept file is not read, but one planted in its place
            // (a link, a FIFO) is refused before anything is sent, as when it is hashed.
            switch POSIX.openOwnFile(files.partial.path, O_RDONLY) {
            case .success(let descriptor):
                POSIX.close(descriptor)
                return nil
            case .failure(let refusal):
                throw .downloadFailed(
                    .fileSystem(DownloadFiles.problem(refusal, path: files.partial.path, doing: "opened")),
                    ErrorContext(request: request, attempts: 0))
            }
        }
        let hashed = await OwnThread.run { cancelled in files.hashPartial(upTo: from, cancelled: cancelled) }
        // Before anything was sent.
        if Task.isCancelled { throw .cancelled(ErrorContext(request: request, attempts: 0)) }
        return try hashed.mapError { $0.error(ErrorContext(request: request, attempts: 0)) }.get()
    }

    /// A new file in the temporary folder named after the URL: `<name>.<random>.<extension>`.
    static func temporaryDestination(for url: URL) -> URL {
        // The last segment is percent-decoded: an encoded "/" or a leading ".." must not lead
        // out of the temporary folder, nor a leading "." hide the file.
        var last = url.lastPathComponent.split(separator: "/").last.map(String.init) ?? ""
        last.removeAll { $0 == "\0" }
        while last.hasPrefix(".") { last.removeFirst() }
        let name = last.isEmpty ? "download.dat" : last
        // Room for the random part and the hidden files' suffixes within a file name's 255 bytes.
        let stem = DownloadFiles.fitting((name as NSString).deletingPathExtension, within: 160)
        let pathExtension = (name as NSString).pathExtension
        // A whole UUID: the move into place replaces what is at the path, so no two downloads may
        // ever share a name (8 characters, 32 bits, could).
        let random = UUID().uuidString
        let file = pathExtension.isEmpty ? "\(stem).\(random)" : "\(stem).\(random).\(DownloadFiles.fitting(pathExtension, within: 32))"
        return FileManager.default.temporaryDirectory.appendingPathComponent(file)
    }
}

/// The files of one download: the destination, the hidden partial file beside it, the
/// resumption record beside that, and the lock file that keeps a second download out.
struct DownloadFiles: Sendable {
    let destination: URL
    let partial: URL
    let resumptionRecord: URL
    let lockFile: URL

    init(destination: URL) {
        self.destination = destination
        let folder = destination.deletingLastPathComponent()
        // The hidden names add 15 bytes to the destination's, which may already be near the 255
        // a file name can have.
        let name = Self.fitting(destination.lastPathComponent, within: 240)
        partial = folder.appendingPathComponent(".\(name).download")
        resumptionRecord = folder.appendingPathComponent(".\(name).download.json")
        lockFile = folder.appendingPathComponent(".\(name).download.lock")
    }

    /// `name`, or when it has more than `limit` bytes of UTF-8, its first characters and a digest
    /// of the whole (so two long names stay apart, and the same name gives the same files).
    static func fitting(_ name: String, within limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        let digest = SHA256.hex(SHA256.hash(Array(name.utf8)).prefix(8))
        var kept = ""
        for character in name {
            guard kept.utf8.count + character.utf8.count + 17 <= limit else { break }
            kept.append(character)
        }
        return kept + "-" + digest
    }

    /// An exclusive `flock` on the lock file, held while a download runs; the file goes with it.
    struct Lock: Sendable {
        let file: URL
        let descriptor: Int32

        /// Removes the lock file, then lets it go (in that order, so that a waiting download
        /// that opened the removed file sees it is gone; see ``DownloadFiles/lock()``).
        func release() {
            _ = unlink(file.path)
            POSIX.close(descriptor)
        }
    }

    /// How taking the lock went.
    enum Locking {
        case acquired(Lock)
        case refused(DownloadFailure)
    }

    /// Takes the destination's lock, or fails at once when another download holds it (in this
    /// process or another: `flock` locks of two opens exclude each other either way).
    func lock() -> Locking {
        // A holder may remove the file between our open and our flock: then the lock we got is
        // on a file nobody else will open, so open the current one again.
        for _ in 0..<8 {
            // Not through a link, which would create a file wherever it points.
            let descriptor = POSIX.open(lockFile.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
            guard descriptor >= 0 else {
                return .refused(.fileSystem("the download's lock file \(lockFile.path) could not be created: \(POSIX.lastError)"))
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let failure = errno
                let reason = POSIX.lastError
                POSIX.close(descriptor)
                guard failure == EWOULDBLOCK else {
                    return .refused(.fileSystem("the download's lock file \(lockFile.path) could not be locked: \(reason)"))
                }
                return .refused(.destinationInUse(path: destination.path))
            }
            var locked = stat()
            var current = stat()
            if fstat(descriptor, &locked) == 0, stat(lockFile.path, &current) == 0, locked.st_ino == current.st_ino,
                locked.st_dev == current.st_dev
            {
                return .acquired(Lock(file: lockFile, descriptor: descriptor))
            }
            POSIX.close(descriptor)
        }
        return .refused(.destinationInUse(path: destination.path))
    }

    var partialSize: Int64? {
        ((try? FileManager.default.attributesOfItem(atPath: partial.path))?[.size] as? NSNumber)?.int64Value
    }

    /// The record kept beside the partial file, read only from a plain file of its own (a FIFO
    /// planted there would block the read), or `nil`.
    var resumption: DownloadStateMachine.Resumption? {
        guard case .success(let descriptor) = POSIX.openOwnFile(resumptionRecord.path, O_RDONLY) else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        // A record is a few hundred bytes: a larger file is not one.
        guard let data = try? handle.read(upToCount: 64 * 1024) else { return nil }
        return try? FastJSONDecoder().decode(DownloadStateMachine.Resumption.self, from: data)
    }

    /// Says why the partial file (or its record) at `path` could not be `doing` ("opened", "read").
    static func problem(_ refusal: POSIX.OwnFileRefusal, path: String, doing: String) -> String {
        switch refusal {
        case .unopened(let reason): "the partial file \(path) could not be \(doing): \(reason)"
        case .notOwnPlainFile: "the partial file \(path) is not a plain file of its own (a link, or another kind of file)"
        }
    }

    func removePartial() {
        try? FileManager.default.removeItem(at: partial)
        try? FileManager.default.removeItem(at: resumptionRecord)
    }

    /// After a failure: keeps the partial file and its record to resume, or removes both.
    func abandon(keepingPartial: Bool) {
        if !keepingPartial { removePartial() }
    }

    /// Renames the partial file onto the destination (atomic on one file system) and makes the
    /// rename durable; the reason it failed, or `nil`. With `withUsualPermissions`, the file first
    /// gets ``usualPermissions()``: the partial file is private (`0600`) while it is unchecked,
    /// and stays so for a download to the temporary folder.
    func moveIntoPlace(withUsualPermissions: Bool) -> String? {
        if withUsualPermissions, let permissions = usualPermissions() {
            guard case .success(let descriptor) = POSIX.openOwnFile(partial.path, O_RDONLY) else {
                return "the partial file \(partial.path) could not be opened to set its permissions"
            }
            defer { POSIX.close(descriptor) }
            guard fchmod(descriptor, permissions) == 0 else {
                return "the permissions of the partial file \(partial.path) could not be set: \(POSIX.lastError)"
            }
        }
        guard rename(partial.path, destination.path) == 0 else {
            return "the download could not be moved to \(destination.path): \(POSIX.lastError)"
        }
        try? FileManager.default.removeItem(at: resumptionRecord)
        _ = POSIX.synchronize(destination.deletingLastPathComponent().path)
        return nil
    }

    /// The permissions the file at the destination would have if any other tool had made it:
    /// those of the file it replaces, else what a new file in the folder gets — `0666` less the
    /// umask (and a default ACL's mask), as `curl -o` and `cp` give. Read from a file made and
    /// removed at once, since the umask cannot be read without setting it for the whole process.
    /// `nil` when neither can be read (the partial file keeps its own).
    func usualPermissions() -> mode_t? {
        var information = stat()
        if lstat(destination.path, &information) == 0, information.st_mode & S_IFMT == S_IFREG {
            return information.st_mode & 0o777
        }
        // One a crash left behind would keep the exclusive open failing; the destination's lock is held.
        let probe = partial.path + ".mode"
        _ = unlink(probe)
        let descriptor = POSIX.open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { return nil }
        defer {
            _ = unlink(probe)
            POSIX.close(descriptor)
        }
        return fstat(descriptor, &information) == 0 ? information.st_mode & 0o777 : nil
    }

    /// Flushes the partial file to disk (a plain file of its own); the reason when it cannot be.
    func syncPartial() -> String? {
        switch POSIX.openOwnFile(partial.path, O_RDONLY) {
        case .success(let descriptor):
            defer { POSIX.close(descriptor) }
            return fsync(descriptor) == 0 ? nil : "the partial file \(partial.path) could not be flushed to disk: \(POSIX.lastError)"
        case .failure(let refusal):
            return Self.problem(refusal, path: partial.path, doing: "opened")
        }
    }

    /// A hasher that has seen the partial file's first `count` bytes, or why it could not be read
    /// (opened as the download writes it: a plain file of its own, never through a link).
    ///
    /// Reads for as long as the file is large: call it on a thread of its own (``OwnThread``),
    /// which stops it, with `.cancelled`, once `cancelled` is set.
    func hashPartial(upTo count: Int64, cancelled: CancelFlag) -> Result<SHA256, PartialReadFailure> {
        let handle: FileHandle
        switch POSIX.openOwnFile(partial.path, O_RDONLY) {
        case .success(let descriptor): handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        case .failure(let refusal): return .failure(.unreadable(Self.problem(refusal, path: partial.path, doing: "read")))
        }
        var hasher = SHA256()
        var remaining = count
        while remaining > 0 {
            if cancelled.isSet { return .failure(.cancelled) }
            guard let chunk = try? handle.read(upToCount: Int(min(remaining, 1 << 20))), !chunk.isEmpty else {
                return .failure(.unreadable("the partial file \(partial.path) could not be read: it is shorter than \(count) bytes"))
            }
            chunk.withUnsafeBytes { hasher.update(buffer: $0) }
            remaining -= Int64(chunk.count)
        }
        return .success(hasher)
    }

    /// Why ``hashPartial(upTo:cancelled:)`` gave no hasher.
    enum PartialReadFailure: Error {
        case cancelled
        case unreadable(String)

        /// The call's error, in `context`.
        func error(_ context: ErrorContext) -> RepositoryError {
            switch self {
            case .cancelled: .cancelled(context)
            case .unreadable(let problem): .downloadFailed(.fileSystem(problem), context)
            }
        }
    }
}

extension AbstractRepository {
    /// Sends the endpoint and returns its body as it arrives, as soon as a 2xx head is in: read
    /// the ``ResponseChunks`` while the transfer runs. A non-2xx answer fails as any call does.
    public func performRequest(_ endpoint: Endpoint<ResponseChunks>) async -> Result<ResponseChunks, RepositoryError> {
        await performRequest(endpoint.retyped(as: RepositoryResponse<ResponseChunks>.self)).map(\.value)
    }

    /// Sends the endpoint and returns its status, headers and body as it arrives; see
    /// ``performRequest(_:)-(Endpoint<ResponseChunks>)``.
    public func performRequest(_ endpoint: Endpoint<RepositoryResponse<ResponseChunks>>) async
        -> Result<RepositoryResponse<ResponseChunks>, RepositoryError>
    {
        await run(endpoint) { (endpoint) async throws(RepositoryError) -> RepositoryResponse<ResponseChunks> in
            // A streaming transport that cannot pause (URLSession, or one of the app's) buffers
            // what the reader has not taken, up to URLSession's limit or the default one (a body
            // a transport that does not stream or an interceptor hands over is in memory already).
            let unreadLimit =
                !self.transport.streamsBodies
                ? Int.max
                : max(
                    (self.transport as? URLSessionTransport)?.maximumResponseSize ?? ChunkSink.defaultUnreadLimit,
                    4 * ChunkSink.highWater)
            let chunks = ResponseChunks(
                method: endpoint.method,
                unreadLimit: unreadLimit,
                wire: endpoint.options[WireActivityOption.self] ?? WireActivity())
            let request = RequestSummary(method: endpoint.method, url: try self.builder.build(endpoint).url)
            var streaming = endpoint
            streaming.responseBodySink = chunks.sink
            let sink = chunks.sink
            // The body outlives this call's activity: once its head is handed over, it counts as
            // activity of its own until it ends.
            let body = StreamedBodyActivity(
                activity: self.configuration.activity,
                call: ActivityEvent.Call(id: CallIdentifier.next(), name: endpoint.name, preventsUserInteraction: false))
            chunks.drive(
                with: Task {
                    defer { body.end() }
                    do throws(RepositoryError) {
                        let (_, response) = try await self.exchange(streaming)
                        // An interceptor answered without the transport (a stub, a mock): its
                        // body goes to the reader as a transport's would.
                        if !sink.hasStarted { try RequestPipeline.feedAnswer(response, to: sink, request: request) }
                        sink.end(nil)
                    } catch {
                        sink.end(error)
                    }
                })
            let start = await withTaskCancellationHandler {
                await sink.waitForStart()
            } onCancel: {
                // Woken at once: a transport that does not heed cancellation before its head
                // would otherwise hold the caller (and a stream's timeout) until it answered.
                chunks.cancel(waking: .cancelled(ErrorContext(request: request, attempts: sink.wire.sentAt == nil ? 0 : 1)))
            }
            switch start {
            case .head(let head):
                body.handOver()
                return RepositoryResponse(
                    value: chunks, statusCode: head.statusCode, headers: head.headers, url: head.url, request: request)
            case .ended(let error?): throw error
            case .ended(nil):
                throw .invalidResponse(
                    reason: "the response ended without a body to stream",
                    context: ErrorContext(request: request))
            }
        }
    }
}

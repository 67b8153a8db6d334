#if canImport(CCurl)
    import CCurl
    import Foundation
    import Synchronization

    /// One HTTP exchange on a ``LibcurlEventLoop``: the request, the buffers libcurl's callbacks
    /// fill, and the caller's continuation, resumed exactly once.
    ///
    /// Thread-safety (hence `@unchecked Sendable`): the caller's task creates it and then only
    /// touches ``phase`` (under its mutex). Everything else — the easy handle, the header list,
    /// the response buffers, the upload offset — is used only by the event-loop thread between
    /// `curl_multi_add_handle` and the transfer's completion, and read by nobody afterwards
    /// (the response moves out through the continuation).
    final class LibcurlTransfer: @unchecked Sendable {
        /// What a finished transfer hands back: status, raw header lines and body.
        struct Reply: Sendable {
            var statusCode: Int
            var headerBytes: [UInt8]
            var body: Data
        }

        typealias Continuation = UnsafeContinuation<Result<Reply, TransportError>, Never>

        /// Where the caller's side of the exchange stands.
        private enum Phase {
            /// Made; the continuation is not there yet.
            case created
            /// Cancelled before the continuation arrived: it is resumed as soon as it does.
            case cancelledBeforeStart
            /// Handed to the loop; the continuation waits for the outcome.
            case running(Continuation)
            /// The continuation was resumed.
            case finished
        }

        let request: TransportRequest
        /// The whole transfer's limit, in milliseconds (0: none).
        let timeoutMilliseconds: Int
        /// The connection phase's limit, in milliseconds.
        let connectTimeoutMilliseconds: Int
        let maximumResponseSize: Int

        private let phase = Mutex<Phase>(.created)
        /// Set when the caller cancels, so that no progress is reported from then on.
        private let cancelRequested = Atomic<Bool>(false)

        // Event-loop thread only, while the transfer runs.
        var easy: UnsafeMutableRawPointer?
        var headerList: UnsafeMutablePointer<curl_slist>?
        var headerBytes: [UInt8] = []
        var body = Data()
        var uploadOffset = 0
        /// Why a callback stopped the transfer, when one did.
        var abortReason: TransportError?
        private var reservedBody = false
        private var progress = TransferProgress()
        let errorBuffer: UnsafeMutablePointer<CChar>

        init(request: TransportRequest, timeoutMilliseconds: Int, connectTimeoutMilliseconds: Int, maximumResponseSize: Int) {
            self.request = request
            self.timeoutMilliseconds = timeoutMilliseconds
            self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
            self.maximumResponseSize = maximumResponseSize
            errorBuffer = .allocate(capacity: Int(networking_curl_error_size))
            errorBuffer.initialize(repeating: 0, count: Int(networking_curl_error_size))
        }

        deinit {
            errorBuffer.deallocate()
            if let headerList { curl_slist_free_all(headerList) }
        }

        // MARK: - Caller side

        /// Hands the continuation over and submits the transfer, or resumes at once when the task
        /// was cancelled before.
        func start(_ continuation: Continuation, on loop: LibcurlEventLoop) {
            let submit = phase.withLock { phase -> Bool in
                switch phase {
                case .created:
                    phase = .running(continuation)
                    return true
                case .cancelledBeforeStart, .running, .finished:
                    phase = .finished
                    return false
                }
            }
            if submit {
                loop.submit(self)
            } else {
                continuation.resume(returning: .failure(.cancelled))
            }
        }

        /// Called by the task's cancellation handler, at any time and on any thread.
        func cancel(on loop: LibcurlEventLoop) {
            cancelRequested.store(true, ordering: .releasing)
            let running = phase.withLock { phase -> Bool in
                switch phase {
                case .created:
                    phase = .cancelledBeforeStart
                    return false
                case .running: return true
                case .cancelledBeforeStart, .finished: return false
                }
            }
            if running { loop.cancel(self) }
        }

        /// Resumes the caller with the outcome; later calls do nothing.
        func complete(_ result: Result<Reply, TransportError>) {
            let continuation = phase.withLock { phase -> Continuation? in
                guard case .running(let continuation) = phase else { return nil }
                phase = .finished
                return continuation
            }
            continuation?.resume(returning: result)
        }

        // MARK: - Event-loop side

        /// The outcome of the finished transfer; moves the response buffers out.
        func result(of code: CURLcode) -> Result<Reply, TransportError> {
            if let abortReason, code == CURLE_WRITE_ERROR || code == CURLE_ABORTED_BY_CALLBACK {
                return .failure(abortReason)
            }
            guard code == CURLE_OK else {
                let message = LibcurlErrors.message(code: code, errorBuffer: errorBuffer)
                return .failure(
                    LibcurlErrors.map(code, message: message, host: request.url.host ?? "", maximumResponseSize: maximumResponseSize))
            }
            var status = 0
            if let easy { _ = networking_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status) }
            guard (100...999).contains(status) else {
                return .failure(.invalidResponse("the server's answer has no valid HTTP status"))
            }
            let reply = Reply(statusCode: status, headerBytes: headerBytes, body: body)
            headerBytes = []
            body = Data()
            return .success(reply)
        }

        // MARK: - libcurl callbacks (event-loop thread)

        /// Appends received body bytes; returns how many were taken (fewer stops the transfer).
        func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
            guard body.count <= maximumResponseSize - bytes.count else {
                abortReason = .responseTooLarge(limit: maximumResponseSize)
                return 0
            }
            if !reservedBody {
                reservedBody = true
                body = Data(capacity: expectedBodySize())
            }
            if let base = bytes.baseAddress {
                body.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            }
            if request.progress != nil {
                progress.bytesReceived += Int64(bytes.count)
                progress.totalBytesToReceive = announcedBodySize()
                reportProgress()
            }
            return bytes.count
        }

        /// Appends one header line as libcurl gives it (ending in CRLF).
        func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Int {
            guard headerBytes.count <= maximumResponseSize - bytes.count else {
                abortReason = .responseTooLarge(limit: maximumResponseSize)
                return 0
            }
            headerBytes.append(contentsOf: bytes)
            return bytes.count
        }

        /// Copies the next request-body bytes into libcurl's buffer; returns how many.
        func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
            guard let source = request.body, uploadOffset < source.count, let destination = buffer.baseAddress else { return 0 }
            let count = min(buffer.count, source.count - uploadOffset)
            let start = source.startIndex + uploadOffset
            source.copyBytes(to: destination.assumingMemoryBound(to: UInt8.self), from: start..<(start + count))
            uploadOffset += count
            if request.progress != nil {
                progress.bytesSent = Int64(uploadOffset)
                progress.totalBytesToSend = Int64(source.count)
                reportProgress()
            }
            return count
        }

        /// Tells the request's progress handler, unless the caller has cancelled.
        private func reportProgress() {
            guard let handler = request.progress, !cancelRequested.load(ordering: .acquiring) else { return }
            let snapshot = progress
            BlockingGuard.runningTransportCallback { handler(snapshot) }
        }

        /// Moves the upload back to `offset` (libcurl retries a request on a fresh connection).
        func seekBody(to offset: Int) -> Bool {
            guard offset >= 0, offset <= request.body?.count ?? 0 else { return false }
            uploadOffset = offset
            return true
        }

        /// The most body bytes reserved up front: a server that announces a large body but sends
        /// little must not make the client hold that much memory.
        private static let maximumReservation = 8 * 1024 * 1024

        /// The body size announced by `Content-Length`, within limits, to reserve once.
        private func expectedBodySize() -> Int {
            guard let length = announcedBodySize(), length > 0 else { return 0 }
            return Int(min(length, Int64(min(maximumResponseSize, Self.maximumReservation))))
        }

        /// The body size the server announced with `Content-Length`, if it did.
        private func announcedBodySize() -> Int64? {
            guard let easy else { return nil }
            var length: curl_off_t = -1
            guard networking_curl_easy_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK,
                length >= 0
            else { return nil }
            return Int64(length)
        }
    }
#endif

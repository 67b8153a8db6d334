#if os(Linux) && canImport(CCurl)
    import CCurl
    import Foundation
    import Synchronization

    /// One HTTP exchange on a ``LibcurlEventLoop``: the request, the buffers libcurl's callbacks
    /// fill, and the hand-over of the result to the caller, exactly once.
    ///
    /// The hand-over is a small state machine (``Phase``) behind a mutex: the caller submits,
    /// then suspends on a continuation; the loop completes; cancellation may come at any point,
    /// even before submission or between submission and the loop taking the transfer (the loop
    /// then refuses it: see ``isCancelRequested``). Whatever the order, the caller gets one
    /// result and the continuation is resumed once.
    ///
    /// Thread-safety (hence `@unchecked Sendable`): the caller's task creates it and then only
    /// touches the phase (under its mutex) and the cancellation flag (an atomic). Everything else — the
    /// easy handle, the header list, the response buffers, the upload offset, `startedAt` — is
    /// used only by the event-loop thread between `curl_multi_add_handle` and the transfer's
    /// completion, and by nobody afterwards (the response moves out through the phase).
    final class LibcurlTransfer: @unchecked Sendable {
        /// What a finished transfer hands back: status, raw header lines and body.
        struct Reply: Sendable {
            var statusCode: Int
            var headerBytes: [UInt8]
            var body: Data
        }

        /// Unsafe rather than checked, to spare an allocation per request: the phase machine
        /// below is what guarantees a single resumption.
        typealias Continuation = UnsafeContinuation<Result<Reply, TransportError>, Never>

        /// Where the caller's side of the exchange stands.
        private enum Phase {
            /// Made, not submitted yet.
            case created
            /// Cancelled before it was submitted: it never will be.
            case cancelledBeforeStart
            /// Handed to the loop; the caller has not suspended yet.
            case submitted
            /// On the loop; the caller waits on this continuation.
            case waiting(Continuation)
            /// The loop finished it before the caller suspended; the caller takes the result.
            case completed(Result<Reply, TransportError>)
            /// The result was handed over.
            case finished
        }

        let request: TransportRequest
        /// The whole transfer's limit, in milliseconds (0: none).
        let timeoutMilliseconds: Int
        /// The connection phase's limit, in milliseconds.
        let connectTimeoutMilliseconds: Int
        let maximumResponseSize: Int
        /// The most bytes of response head (status line and header fields) accepted.
        let maximumHeadSize: Int
        /// The transport's proxy options; `nil` when the environment's apply.
        let proxy: LibcurlProxyOptions?
        /// The Unix domain socket every connection goes to, if the transport has one.
        let unixSocketPath: String?

        private let phase = Mutex<Phase>(.created)
        /// Set when the caller cancels, so that no progress is reported from then on, and so that
        /// the loop does not start a transfer whose cancellation it has already seen go by.
        private let cancelRequested = Atomic<Bool>(false)
        /// When the loop added it to the multi handle, for the spin policy's latency estimate: set only
        /// when spinning is allowed and the transfer starts alone (no clock reads otherwise).
        var startedAt: ContinuousClock.Instant?

        // Event-loop thread only, while the transfer runs.
        var easy: UnsafeMutableRawPointer?
        var headerList: UnsafeMutablePointer<curl_slist>?
        var headerBytes: [UInt8] = []
        var body = Data()
        /// Reads the request body; made by the caller before submission, used by the loop after.
        var bodyReader: BodyReader?
        /// Whether the response's body goes to the request's sink (decided when its head ends).
        private var streamsToSink = false
        /// Why a callback stopped the transfer, when one did.
        var abortReason: TransportError?
        private var reservedBody = false
        private var progress = TransferProgress()
        let errorBuffer: UnsafeMutablePointer<CChar>

        init(
            request: TransportRequest, timeoutMilliseconds: Int, connectTimeoutMilliseconds: Int, maximumResponseSize: Int,
            maximumHeadSize: Int, proxy: LibcurlProxyOptions? = nil, unixSocketPath: String? = nil
        ) {
            self.request = request
            self.timeoutMilliseconds = timeoutMilliseconds
            self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
            self.maximumResponseSize = maximumResponseSize
            self.maximumHeadSize = maximumHeadSize
            self.proxy = proxy
            self.unixSocketPath = unixSocketPath
            errorBuffer = .allocate(capacity: Int(networking_curl_error_size))
            errorBuffer.initialize(repeating: 0, count: Int(networking_curl_error_size))
        }

        deinit {
            errorBuffer.deallocate()
            if let headerList { curl_slist_free_all(headerList) }
        }

        // MARK: - Caller side

        /// Prepares the request body for the loop (measures files, starts a stream's producer).
        ///
        /// - Throws: ``TransportError/invalidRequest(_:)`` when the body cannot be read.
        func prepareBody(for loop: LibcurlEventLoop) throws(TransportError) {
            guard let body = request.body else { return }
            bodyReader = try BodyReader(body) { [weak self, weak loop] in
                guard let self, let loop else { return }
                loop.resume(self)
            }
        }

        /// Submits the transfer to the loop; `false` when the task was cancelled before.
        func submit(to loop: LibcurlEventLoop) -> Bool {
            let submit = phase.withLock { phase -> Bool in
                guard case .created = phase else {
                    phase = .finished
                    return false
                }
                phase = .submitted
                return true
            }
            if submit {
                resumeLoop = loop
                loop.submit(self)
            }
            return submit
        }

        /// Suspends the caller until the loop completes the transfer (at once when it has).
        func wait(_ continuation: Continuation) {
            let ready = phase.withLock { phase -> Result<Reply, TransportError>? in
                switch phase {
                case .submitted:
                    phase = .waiting(continuation)
                    return nil
                case .completed(let result):
                    phase = .finished
                    return result
                case .created, .cancelledBeforeStart, .waiting, .finished:
                    // Not reachable: `wait` follows a successful `submit`, once.
                    phase = .finished
                    return .failure(.cancelled)
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }

        /// Whether the caller has cancelled: the loop checks it before starting the transfer, since
        /// a cancellation that reached the loop before the submission found nothing to abort.
        var isCancelRequested: Bool { cancelRequested.load(ordering: .acquiring) }

        /// Called by the task's cancellation handler, at any time and on any thread.
        func cancel(on loop: LibcurlEventLoop) {
            cancelRequested.store(true, ordering: .releasing)
            let onLoop = phase.withLock { phase -> Bool in
                switch phase {
                case .created:
                    phase = .cancelledBeforeStart
                    return false
                case .submitted, .waiting: return true
                case .cancelledBeforeStart, .completed, .finished: return false
                }
            }
            if onLoop { loop.cancel(self) }
        }

        /// Hands the outcome to the caller (resuming it when it waits); later calls do nothing.
        func complete(_ result: Result<Reply, TransportError>) {
            let continuation = phase.withLock { phase -> Continuation? in
                switch phase {
                case .waiting(let continuation):
                    phase = .finished
                    return continuation
                case .submitted:
                    phase = .completed(result)
                    return nil
                case .created, .cancelledBeforeStart, .completed, .finished:
                    return nil
                }
            }
            continuation?.resume(returning: result)
        }

        // MARK: - Event-loop side

        /// The outcome of the finished transfer; moves the response buffers out.
        func result(of code: CURLcode) -> Result<Reply, TransportError> {
            bodyReader?.close()
            if let abortReason, code == CURLE_WRITE_ERROR || code == CURLE_ABORTED_BY_CALLBACK || code == CURLE_READ_ERROR {
                return .failure(abortReason)
            }
            guard code == CURLE_OK else {
                var message = LibcurlErrors.message(code: code, errorBuffer: errorBuffer)
                if let easy {
                    // A proxy that would not open the tunnel: its status, not the server's answer.
                    var connectStatus = 0
                    _ = networking_curl_easy_getinfo_long(easy, CURLINFO_HTTP_CONNECTCODE, &connectStatus)
                    if connectStatus >= 300 { return .failure(.network(.proxyRefused(status: connectStatus))) }
                    if code == CURLE_PROXY {
                        var reason = 0
                        _ = networking_curl_easy_getinfo_long(easy, CURLINFO_PROXY_ERROR, &reason)
                        return .failure(LibcurlErrors.mapProxy(reason: reason, message: message))
                    }
                    if proxy?.isTLS == true, LibcurlErrors.isTLS(code) {
                        var verification = 0
                        _ = networking_curl_easy_getinfo_long(easy, CURLINFO_PROXY_SSL_VERIFYRESULT, &verification)
                        if verification != 0 { message = "the proxy's certificate: \(message)" }
                    }
                }
                return .failure(
                    LibcurlErrors.map(
                        code, message: message, host: request.url.host ?? "", maximumResponseSize: maximumResponseSize,
                        answered: !headerBytes.isEmpty))
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

        /// Appends received body bytes (or hands them to the sink); returns how many were taken
        /// (fewer stops the transfer, the pause value pauses it).
        func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
            if streamsToSink, let sink = request.responseBodySink {
                // Cancelled: the loop is about to abort the transfer. Pausing keeps these bytes
                // from the sink, which would write them and report progress after the cancel.
                if cancelRequested.load(ordering: .acquiring) { return networking_curl_writefunc_pause }
                switch sink.receive(bytes) {
                case .accepted: break
                case .paused: return networking_curl_writefunc_pause
                case .failed(let error):
                    abortReason = error
                    return 0
                }
                if request.progress != nil {
                    progress.bytesReceived += Int64(bytes.count)
                    progress.totalBytesToReceive = announcedBodySize()
                    reportProgress()
                }
                return bytes.count
            }
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
            guard headerBytes.count <= maximumHeadSize - bytes.count else {
                abortReason = .invalidResponse(LibcurlErrors.headTooLarge(limit: maximumHeadSize))
                return 0
            }
            if headerBytes.capacity == 0 { headerBytes.reserveCapacity(1024) }
            headerBytes.append(contentsOf: bytes.assumingMemoryBound(to: UInt8.self))
            if bytes.count <= 2, request.responseBodySink != nil, isEndOfHead(bytes) { headReceived() }
            return bytes.count
        }

        /// Whether a header line is the empty line that ends a head.
        private func isEndOfHead(_ line: UnsafeRawBufferPointer) -> Bool {
            line.elementsEqual([13, 10]) || line.elementsEqual([10])
        }

        /// A whole head arrived: a final (non-1xx) one asks the sink whether it takes the body.
        private func headReceived() {
            guard let easy, let sink = request.responseBodySink else { return }
            var status = 0
            _ = networking_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            guard status >= 200 else { return }
            let head = ResponseHead(statusCode: status, headers: LibcurlHeaderParser.parse(headerBytes), url: request.url)
            streamsToSink = sink.begin(head, canPause: true) { [weak self, weak loop = resumeLoop] in
                guard let self, let loop else { return }
                loop.resume(self)
            }
        }

        /// Copies the next request-body bytes into libcurl's buffer; returns how many, the pause
        /// value when a stream has none yet, or the abort value.
        func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
            guard let bodyReader else { return 0 }
            switch bodyReader.read(into: buffer) {
            case .bytes(let count):
                if request.progress != nil {
                    progress.bytesSent = bodyReader.bytesRead
                    progress.totalBytesToSend = bodyReader.length
                    reportProgress()
                }
                return count
            case .end: return 0
            case .wouldBlock: return networking_curl_readfunc_pause
            case .failed(let error):
                abortReason = error
                return networking_curl_readfunc_abort
            }
        }

        /// Tells the request's progress handler, unless the caller has cancelled.
        private func reportProgress() {
            guard let handler = request.progress, !cancelRequested.load(ordering: .acquiring) else { return }
            let snapshot = progress
            BlockingGuard.runningTransportCallback { handler(snapshot) }
        }

        /// Moves the upload back to its start (libcurl retries a request on a fresh connection);
        /// `false` for streams, which cannot start again. The seek callback calls it for offset 0 only.
        func rewindBody() -> Bool {
            bodyReader?.rewind() ?? true
        }

        /// The loop to ask for a resumption from a sink's `resume` (set when submitted).
        weak var resumeLoop: LibcurlEventLoop?

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

#if os(Linux) && canImport(CCurl)
    import CCurl
    import Foundation

    /// A ``Transport`` on the system libcurl: the default on Linux, where it is several times
    /// faster than `URLSession` and can pin certificates.
    ///
    /// ## What it does
    /// - One event-loop thread per instance drives every transfer through one libcurl multi
    ///   handle (no thread per request); connections, TLS sessions (not those made with a client
    ///   certificate) and DNS answers are reused; a ``ClientCertificate`` is presented, PEM or PKCS#12.
    /// - HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 on plain `http`;
    ///   ``maximumConnectionsPerHost`` caps the connections to one host.
    /// - Responses in gzip, deflate, brotli or zstd are decoded.
    /// - Request bodies are sent from the request's `Data` without another copy; response bodies
    ///   grow from the announced `Content-Length` without quadratic copying.
    /// - Redirects follow the same rules as every transport (see ``URLSessionTransport``): 307
    ///   and 308 keep the method and the body (never sent again from `https` to `http`: that
    ///   redirect fails), 301/302 turn `POST` into `GET` (unless
    ///   ``TransportRequest/keepsMethodOnRedirect``), 303 turns everything but `HEAD` into `GET`;
    ///   the request's own `Authorization` and `Cookie` stay on their origin, and other fields
    ///   named like a credential (`X-Api-Key`) on their host and the hosts under it, never sent
    ///   over `http` after `https` (with a ``TransportRequest/cookieStorage``, each hop gets the
    ///   storage's cookies for its URL; see `RedirectPolicy`).
    /// - ``TransportRequest/timeout`` bounds the whole exchange, redirects included; the connection
    ///   phase of each hop is also bounded by ``connectTimeout``.
    /// - Cancelling the calling task aborts the transfer on the wire (its connection is closed)
    ///   and the call throws ``TransportError/cancelled`` at once.
    /// - Used one request at a time against a fast server (one that answered within 1 ms, as on
    ///   loopback), the loop thread waits up to 250 µs without sleeping (for the answer, and for
    ///   the caller's next request, which may first decode a body), because a thread wake-up costs
    ///   more than such an exchange: lower latency for some CPU time (`script/bench` prints both).
    ///   A wait that keeps running out of time is skipped for a while. With several requests in
    ///   flight or a slower server nothing spins, and `spinsWhenSequential: false` turns it off.
    ///   The calling task never spins: it suspends until the loop hands it the answer.
    /// - Tasks that prefer ``taskExecutor`` run on the loop thread itself: no hand-over between
    ///   threads at all, for the least CPU per request.
    /// - A response head (status line and header fields) larger than ``maximumResponseHeadSize``
    ///   fails with ``TransportError/invalidResponse(_:)``, as do a malformed head and broken chunked framing.
    /// - Pinning: with ``TransportSecurity/pinnedPublicKeys``, the server's certificate must be
    ///   trusted *and* its SubjectPublicKeyInfo must hash to one of the pins; otherwise the
    ///   handshake stops before any byte of the request (headers, token or body) is sent.
    ///   ``TransportSecurity/certificateAuthorityFile`` replaces the system's authorities.
    /// - The transport keeps no cookies of its own and caches nothing, as with
    ///   ``URLSessionTransport``: a request's `Cookie` field is sent as given, and only a request
    ///   with a ``TransportRequest/cookieStorage`` has the `Set-Cookie` fields of the redirects
    ///   followed inside the transport kept there and the next hop's `Cookie` chosen from it;
    ///   connections go through ``proxy`` when one is given, else through the proxy the
    ///   environment variables curl reads name (`http_proxy`, `https_proxy`, `all_proxy`,
    ///   `no_proxy`), unless ``readsProxyEnvironment`` is `false`.
    ///
    /// ## Errors
    /// `send(_:)` throws:
    /// - ``TransportError/network(_:)``: ``NetworkFailure/connectionRefused`` (nothing listens),
    ///   ``NetworkFailure/hostNotFound`` (DNS), ``NetworkFailure/notConnected`` (no route),
    ///   ``NetworkFailure/connectionLost`` (closed before or during the response, including an
    ///   empty reply), or ``NetworkFailure/other(_:)`` with libcurl's message;
    /// - ``TransportError/timedOut``: the timeout passed (connecting, waiting or receiving);
    /// - ``TransportError/cancelled``: the calling task was cancelled (or the transport's loop stopped);
    /// - ``TransportError/tls(_:)``: ``TLSFailure/untrustedCertificate(_:)`` (self-signed or
    ///   unknown authority), ``TLSFailure/expiredCertificate(_:)``, ``TLSFailure/hostnameMismatch(_:)``,
    ///   or ``TLSFailure/handshakeFailed(_:)``;
    /// - ``TransportError/pinMismatch(host:)``: the trusted certificate chain has none of the pins;
    /// - ``TransportError/responseTooLarge(limit:)``: the body (announced or received) exceeds
    ///   ``maximumResponseSize``;
    /// - ``TransportError/invalidResponse(_:)``: the answer is not HTTP (garbage, a bad status
    ///   line, a head over ``maximumResponseHeadSize``, broken chunked framing, a broken encoding),
    ///   or a redirect cannot be followed (too many, a bad `Location`, another scheme, a pinned
    ///   request or one with a client certificate sent to plain `http`);
    /// - ``TransportError/invalidRequest(_:)``: the URL is not `http`/`https` with a host, a header
    ///   cannot be sent (a control character other than a tab), pins or a client certificate were given for plain
    ///   `http`, ``proxy`` is not valid (a port out of range, say), or libcurl refused an option;
    /// - ``TransportError/network(_:)`` with ``NetworkFailure/proxyRefused(status:)``: a proxy
    ///   would not open the way to the server (see ``ProxyServer``).
    ///
    /// It never throws ``TransportError/pinningUnsupported(transport:)``.
    ///
    /// ## Choosing a transport
    /// This type exists on Linux, where the package links the system libcurl (Debian:
    /// `libcurl4-openssl-dev`). ``DefaultTransport/shared`` is ``shared`` on Linux and
    /// ``URLSessionTransport/shared`` on Apple platforms. Pass a transport to a repository to choose: this one where libcurl is
    /// available and pinning or speed matter, `URLSessionTransport` on Apple platforms or to
    /// use `URLSessionConfiguration` features.
    ///
    /// ## Thread-safety
    /// Instances are `Sendable`: call ``send(_:)`` from any number of tasks at once. Share one
    /// instance (each owns a thread and a connection pool). When the last reference goes, the
    /// thread stops and closes its connections.
    public final class LibcurlTransport: Transport {
        /// Request bodies are read as they are sent and response bodies go to sinks as they arrive.
        public var streamsBodies: Bool { true }

        /// A transport shared by every repository that is given none (on Linux).
        public static let shared = LibcurlTransport()

        /// The default of ``maximumResponseSize``: 100 MiB, as for ``URLSessionTransport``.
        public static let defaultMaximumResponseSize = 100 * 1024 * 1024

        /// The most body bytes accepted before a response fails with ``TransportError/responseTooLarge(limit:)``.
        public let maximumResponseSize: Int
        /// The most redirects followed for one request; one more fails with ``TransportError/invalidResponse(_:)``.
        public let maximumRedirects: Int
        /// The longest the connection phase (DNS, TCP, TLS) of each hop may take, in seconds;
        /// never more than what is left of the request's timeout.
        public let connectTimeout: TimeInterval
        /// The most bytes of a response head (status line and header fields) accepted; a longer
        /// one fails with ``TransportError/invalidResponse(_:)``. Default 256 KiB. (libcurl itself
        /// refuses heads over 300 KiB and header lines over 100 KiB, with the same error.)
        public let maximumResponseHeadSize: Int
        /// Whether the loop thread may wait without sleeping when used one request at a time
        /// against a fast server (see the type's documentation). Default `true`.
        public let spinsWhenSequential: Bool
        /// The proxy every connection goes through (but those to its excluded hosts), or `nil`.
        public let proxy: ProxyServer?
        /// Whether, without ``proxy``, the proxy named by the environment variables curl reads
        /// is used (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`). Default `true`.
        public let readsProxyEnvironment: Bool
        /// The Unix domain socket every connection goes to (a file URL), or `nil` for TCP.
        ///
        /// For a server on the same machine that listens on a socket file rather than a port —
        /// the Docker daemon (`/var/run/docker.sock`), a sidecar, an nginx or a gunicorn bound to
        /// `unix:` — as AsyncHTTPClient's `http+unix` URLs and `curl --unix-socket` do. The
        /// request URLs keep a host, which only names the server (the `Host` field, and the
        /// name TLS checks for an `https` URL): `http://localhost/v1.47/containers/json`.
        /// Redirects to other hosts go to the same socket. No proxy applies: a transport with
        /// both fails every request with ``TransportError/invalidRequest(_:)``, as it does for a
        /// URL that is not a file URL or a path longer than a socket address holds (107 bytes).
        /// A socket file that does not exist, or that nothing listens on, fails with
        /// ``NetworkFailure/connectionRefused``.
        public let unixSocket: URL?
        /// The most connections open at once to one host and port (or to the proxy), or `nil`
        /// for no limit (the default).
        ///
        /// Requests beyond it wait for a connection to be free, in the order they were sent, as
        /// with `URLSessionConfiguration.httpMaximumConnectionsPerHost` or AsyncHTTPClient's
        /// connection pool: a burst of a thousand calls to one backend opens this many
        /// connections, not a thousand. HTTP/2 requests share a connection once one is open. The wait
        /// counts in the request's timeout; with libcurl 7.88 (Debian 12, tested) not in
        /// ``connectTimeout``, but libcurl's manual warns that later versions may count it there
        /// too: give such a transport a `connectTimeout` that covers the waits you expect.
        public let maximumConnectionsPerHost: Int?

        /// The loop thread as a task executor: tasks that prefer it run their code on the loop
        /// thread between two passes over the sockets, so a request they send starts without
        /// waking another thread and its answer resumes them without one either.
        ///
        /// Use it for small requests, where the hand-over between threads costs more than the
        /// exchange: `withTaskExecutorPreference(transport.taskExecutor) { … }` around the calls,
        /// or `Task(executorPreference: transport.taskExecutor)` (see <doc:Performance>). The rate
        /// with many in flight is then bound by this one thread, for about a quarter less CPU
        /// per request.
        ///
        /// While such code runs, no transfer of this transport makes progress: keep long
        /// computations (decoding megabytes) and blocking calls off it, and never wait
        /// synchronously there for a request of this transport. Once the transport is gone, the
        /// tasks go on on Dispatch's global queue.
        public var taskExecutor: any TaskExecutor { loop }

        let loop: LibcurlEventLoop
        private let redirectPolicy: RedirectPolicy
        private let proxyOptions: LibcurlProxyOptions?
        /// Why ``unixSocket`` cannot be used, if it cannot.
        private let unixSocketProblem: String?

        /// Creates a transport with its own event-loop thread and connection pool.
        ///
        /// - Parameters:
        ///   - maximumResponseSize: the most body bytes accepted; default 100 MiB. Values below 1 become 1.
        ///   - maximumRedirects: the most redirects followed for one request; default 10. Negative values become 0.
        ///   - connectTimeout: the longest a connection may take to open, in seconds; default 10.
        ///     Values that are not positive and finite mean the default.
        ///   - maximumResponseHeadSize: the most bytes of response head accepted; default 256 KiB.
        ///     Values below 1 KiB become 1 KiB.
        ///   - spinsWhenSequential: whether the loop thread may spin briefly instead of sleeping
        ///     when used one request at a time against a fast server; default `true`.
        ///   - proxy: the proxy every connection goes through; default none. One that is not
        ///     valid (an empty host, a port out of range) fails every request with
        ///     ``TransportError/invalidRequest(_:)`` rather than connect without it.
        ///   - readsProxyEnvironment: whether, without `proxy`, the environment's proxy variables
        ///     apply; default `true`. `false` connects directly whatever the environment says.
        ///   - unixSocket: the Unix domain socket (a file URL) every connection goes to instead of
        ///     the URL's host and port; default none (see ``unixSocket``).
        ///   - maximumConnectionsPerHost: the most connections open at once to one host; default
        ///     none (see ``maximumConnectionsPerHost``). Values below 1 become 1.
        public init(
            maximumResponseSize: Int = LibcurlTransport.defaultMaximumResponseSize, maximumRedirects: Int = 10,
            connectTimeout: TimeInterval = 10, maximumResponseHeadSize: Int = 256 * 1024, spinsWhenSequential: Bool = true,
            proxy: ProxyServer? = nil, readsProxyEnvironment: Bool = true, unixSocket: URL? = nil,
            maximumConnectionsPerHost: Int? = nil
        ) {
            self.maximumResponseSize = max(1, maximumResponseSize)
            self.maximumRedirects = max(0, maximumRedirects)
            self.connectTimeout = connectTimeout > 0 && connectTimeout.isFinite ? connectTimeout : 10
            self.maximumResponseHeadSize = max(1024, maximumResponseHeadSize)
            self.spinsWhenSequential = spinsWhenSequential
            self.proxy = proxy
            self.readsProxyEnvironment = readsProxyEnvironment
            proxyOptions = LibcurlProxyOptions.make(proxy: proxy, readsEnvironment: readsProxyEnvironment)
            self.unixSocket = unixSocket
            unixSocketProblem = unixSocket.flatMap { Self.problem(unixSocket: $0, proxy: proxy) }
            redirectPolicy = RedirectPolicy(maximumRedirects: self.maximumRedirects)
            self.maximumConnectionsPerHost = maximumConnectionsPerHost.map { max(1, $0) }
            loop = LibcurlEventLoop(spinning: spinsWhenSequential, maximumConnectionsPerHost: self.maximumConnectionsPerHost)
        }

        deinit {
            loop.shutdown()
        }

        /// Sends the request, following redirects, and returns the final response.
        ///
        /// - Throws: the ``TransportError`` cases listed in the type's documentation.
        public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
            if let problem = request.problemSending { throw .invalidRequest(problem) }
            if let problem = proxyOptions?.problem ?? unixSocketProblem { throw .invalidRequest(problem) }
            // A timeout at or below zero has passed already (see `perform`); NaN means nothing.
            guard !request.timeout.isNaN else { throw .invalidRequest("the timeout is not a number of seconds (NaN)") }
            // Only +infinity is no limit: -infinity is below zero, passed already.
            let deadline = request.timeout == .infinity ? nil : ContinuousClock.now + .clampedSeconds(request.timeout)
            return try await redirectPolicy.follow(request) { (hop) async throws(TransportError) -> TransportResponse in
                try await self.perform(hop, deadline: deadline)
            }
        }

        /// Stops the loop thread now; calls in flight and later ones throw ``TransportError/cancelled``.
        func shutdown() { loop.shutdown() }

        /// One hop: a transfer on the loop, with the time left before the deadline.
        private func perform(_ request: TransportRequest, deadline: ContinuousClock.Instant?)
            async throws(TransportError) -> TransportResponse
        {
            var total = 0
            if let deadline {
                total = Self.milliseconds(ContinuousClock.now.duration(to: deadline))
                guard total > 0 else { throw .timedOut }
            }
            // At least 1 ms: libcurl reads 0 as its default, 300 s.
            let connect = max(1, Self.milliseconds(.clampedSeconds(connectTimeout)))
            let transfer = LibcurlTransfer(
                request: request, timeoutMilliseconds: total,
                connectTimeoutMilliseconds: total > 0 ? min(connect, total) : connect,
                maximumResponseSize: maximumResponseSize, maximumHeadSize: maximumResponseHeadSize, proxy: proxyOptions,
                unixSocketPath: unixSocket?.path)
            let loop = loop
            try transfer.prepareBody(for: loop)
            let result = await withTaskCancellationHandler {
                () async -> Result<LibcurlTransfer.Reply, TransportError> in
                guard transfer.submit(to: loop) else { return .failure(.cancelled) }
                return await withUnsafeContinuation { continuation in transfer.wait(continuation) }
            } onCancel: {
                transfer.cancel(on: loop)
            }
            let reply = try result.get()
            return TransportResponse(
                statusCode: reply.statusCode, headers: LibcurlHeaderParser.parse(reply.headerBytes), body: reply.body,
                url: request.url)
        }

        /// Why `unixSocket` cannot be used (with `proxy`), or `nil`.
        static func problem(unixSocket: URL, proxy: ProxyServer?) -> String? {
            guard unixSocket.isFileURL else { return "the Unix socket \(unixSocket) is not a file URL" }
            // sockaddr_un's sun_path holds 108 bytes on Linux (104 on Apple platforms), NUL included.
            let length = unixSocket.path.utf8.count
            guard length > 0, length < 108 else {
                return "the Unix socket path is \(length) bytes long; a socket address holds 1 to 107"
            }
            guard proxy == nil else { return "a transport cannot send both through a proxy and to a Unix socket" }
            return nil
        }

        /// A duration in whole milliseconds, rounded up, within what libcurl takes.
        static func milliseconds(_ duration: Duration) -> Int {
            guard duration > .zero else { return 0 }
            let (seconds, attoseconds) = duration.components
            // 30 days, or what fits an `Int` in milliseconds where it has 32 bits (Linux on armv7).
            let capped = min(seconds, 30 * 24 * 3600, Int64(Int.max / 1000) - 1)
            let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            return Int(capped) * 1000 + Int(fraction)
        }
    }
#endif

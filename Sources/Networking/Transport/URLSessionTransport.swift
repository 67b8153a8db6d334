import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``Transport`` over Foundation's `URLSession`: the default on Apple platforms, and available
/// on Linux, where FoundationNetworking has gaps this type works around or reports:
///
/// - a 401 with `WWW-Authenticate: Basic` is answered as a plain 401 (Swift 6.3.1's URLSession would hang);
/// - redirects are followed here, not by URLSession, with the same rules as every transport
///   (``LibcurlTransport`` too): 307 and 308 keep the method and the body (Linux would drop the
///   body; a body is never sent again from `https` to `http`: that redirect fails), 301/302 turn `POST` into `GET` (unless ``TransportRequest/keepsMethodOnRedirect``),
///   303 turns everything but `HEAD` into `GET`, and
///   the request's own `Authorization` and `Cookie` are not sent to another origin, nor other
///   credential fields to another host (with a ``TransportRequest/cookieStorage``, each hop gets
///   the storage's cookies for its URL; see `RedirectPolicy`);
/// - the timeout covers the whole exchange, not only idle time;
/// - public-key pinning and a custom certificate authority need server-trust callbacks, which Linux
///   never delivers, so such requests fail there with ``TransportError/pinningUnsupported(transport:)``;
///   on Apple platforms the server-trust challenge is evaluated with the system's trust (or, with
///   a certificate authority file, its authorities instead) and then against the pins, and a mismatch
///   fails with ``TransportError/pinMismatch(host:)`` before anything is sent;
/// - on Linux (Swift 6.3.1) a chunked answer with trailer fields stops the process inside
///   FoundationNetworking ("Transfer completed, but there's no response"); nothing here can catch it.
///
/// On Linux, ``LibcurlTransport`` is the default (``DefaultTransport/shared``): it is several
/// times faster and can pin. This type stays available there for comparison.
///
/// URLSession's own cookie handling and cache are off: a request's `Cookie` field is sent as
/// given, and only a request with a ``TransportRequest/cookieStorage`` has the `Set-Cookie` fields
/// of the redirects followed here kept there and the next hop's `Cookie` chosen from it. One instance owns one `URLSession`,
/// and one more for each distinct ``TransportSecurity`` its requests carry (URLSession checks a
/// server's trust once per connection, so a connection opened without pins must never carry a
/// pinned request). Those sessions live as long as the transport: an app that changes its pins
/// at run time keeps one per set it used. Share the transport (``shared``) rather than making
/// one per request.
public final class URLSessionTransport: Transport {
    /// Request bodies come from memory or files (others are staged on disk first), and response
    /// bodies go to sinks as they arrive (without pausing: URLSession cannot).
    public var streamsBodies: Bool { true }

    /// A transport shared by every repository that is given no other.
    public static let shared = URLSessionTransport()

    /// The most body bytes accepted before a response fails with ``TransportError/responseTooLarge(limit:)``.
    public let maximumResponseSize: Int
    /// The most redirects followed for one request.
    public let maximumRedirects: Int

    /// A `URLSession` and the delegate that answers for its tasks.
    private struct Channel {
        let session: URLSession
        let delegate: URLSessionTransportDelegate
    }

    /// The channel of requests without TLS requirements.
    private let channel: Channel
    /// The configuration the channels are made from, and one channel per distinct security.
    private let secured: Mutex<(configuration: URLSessionConfiguration, channels: [TransportSecurity: Channel])>
    private let redirectPolicy: RedirectPolicy

    /// Creates a transport with its own `URLSession`.
    ///
    /// - Parameters:
    ///   - maximumResponseSize: the most body bytes accepted; default 100 MiB. Values below 1 become 1.
    ///   - maximumRedirects: the most redirects followed for one request; default 10. One more
    ///     fails with ``TransportError/invalidResponse(_:)``. Negative values become 0.
    ///   - configure: changes to the session configuration (an ephemeral one with cookies and
    ///     caching off) before the session is made.
    public init(
        maximumResponseSize: Int = 100 * 1024 * 1024, maximumRedirects: Int = 10,
        configure: (URLSessionConfiguration) -> Void = { _ in }
    ) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 16
        configure(configuration)
        self.maximumResponseSize = max(1, maximumResponseSize)
        self.maximumRedirects = max(0, maximumRedirects)
        redirectPolicy = RedirectPolicy(maximumRedirects: self.maximumRedirects)
        channel = Self.channel(configuration, maximumResponseSize: self.maximumResponseSize, security: .default)
        secured = Mutex((configuration, [:]))
    }

    deinit {
        channel.session.invalidateAndCancel()
        for channel in secured.withLock({ Array($0.channels.values) }) { channel.session.invalidateAndCancel() }
    }

    private static func channel(_ configuration: URLSessionConfiguration, maximumResponseSize: Int, security: TransportSecurity)
        -> Channel
    {
        let delegate = URLSessionTransportDelegate(maximumResponseSize: maximumResponseSize, security: security)
        return Channel(session: URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil), delegate: delegate)
    }

    /// The channel for requests with `security`: its connections were all checked against it.
    private func channel(for security: TransportSecurity) -> Channel {
        guard security != .default else { return channel }
        return secured.withLock { secured in
            if let existing = secured.channels[security] { return existing }
            let made = Self.channel(secured.configuration, maximumResponseSize: maximumResponseSize, security: security)
            secured.channels[security] = made
            return made
        }
    }

    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        if let problem = request.problemSending { throw .invalidRequest(problem) }
        // A timeout at or below zero has passed already (see `perform`); NaN means nothing.
        guard !request.timeout.isNaN else { throw .invalidRequest("the timeout is not a number of seconds (NaN)") }
        #if !canImport(Security)
            if request.security.requiresPinning {
                throw .pinningUnsupported(
                    transport:
                        "URLSessionTransport on Linux, which cannot check pins (FoundationNetworking never delivers server-trust challenges); use LibcurlTransport"
                )
            }
            if request.security.certificateAuthorityFile != nil {
                throw .pinningUnsupported(
                    transport: "URLSessionTransport on Linux, which cannot trust a certificate authority file; use LibcurlTransport")
            }
            if request.security.clientCertificate != nil {
                throw .pinningUnsupported(
                    transport:
                        "URLSessionTransport on Linux, which cannot present a client certificate (FoundationNetworking never asks for one); use LibcurlTransport"
                )
            }
        #else
            if let client = request.security.clientCertificate, client.format != .pkcs12 {
                throw .pinningUnsupported(
                    transport:
                        "URLSessionTransport, which presents PKCS#12 client certificates only; convert the PEM files (openssl pkcs12 -export) or use LibcurlTransport"
                )
            }
        #endif
        let deadline = ContinuousClock.now + .clampedSeconds(request.timeout)
        return try await redirectPolicy.follow(request) { (hop) async throws(TransportError) -> TransportResponse in
            try await self.perform(hop, deadline: deadline)
        }
    }

    private func perform(_ request: TransportRequest, deadline: ContinuousClock.Instant)
        async throws(TransportError) -> TransportResponse
    {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData)
        urlRequest.httpMethod = request.method.rawValue
        // `Content-Length` is the transport's to write, as on libcurl: a stale one (a body
        // compressed or staged since) would have the server wait for bytes or read too few.
        for field in request.headers where !field.name.caseInsensitiveEquals("Content-Length") {
            // Trimmed: a value of blanks only would be dropped (FoundationNetworking uses libcurl).
            urlRequest.addValue(HeaderValidation.withoutSurroundingBlanks(field.value), forHTTPHeaderField: field.name)
        }
        if request.body?.isGzipped == true, request.headers["Content-Encoding"] == nil {
            urlRequest.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
        }
        urlRequest.httpShouldHandleCookies = false
        // Bytes in memory go as they are; a whole file is uploaded from disk; anything else
        // (forms, file ranges, compressed bodies, streams) is staged in a temporary file first,
        // since FoundationNetworking cannot stream it by itself.
        var uploadFile: URL?
        var staged: URL?
        defer { if let staged { try? FileManager.default.removeItem(at: staged) } }
        if let body = request.body {
            if let data = body.inMemoryData {
                urlRequest.httpBody = data
            } else if let file = body.wholeFile {
                // Checked as the libcurl transport checks it; and through its links, since
                // FoundationNetworking measures a link itself and would announce the wrong length.
                _ = try BodySegment.file(file, offset: 0, length: -1).measuredLength()
                uploadFile = file.resolvingSymlinksInPath()
            } else {
                // Staging counts against the timeout, and a stream that stalls against the idle
                // timeout: it must not wait forever, even with no time limit.
                staged = try await BodySpool.spool(body, deadline: deadline, idleTimeout: request.idleTimeout)
                uploadFile = staged
            }
        }

        // What staging left of the timeout.
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { throw .timedOut }
        let seconds = remaining.seconds
        // URLSession's own timeout is an idle one; the whole exchange is bounded by the deadline timer.
        urlRequest.timeoutInterval = min(seconds, request.idleTimeout ?? seconds)
        #if canImport(FoundationNetworking)
            // FoundationNetworking counts whole seconds (0.9 s became 0 ms, a timeout at once):
            // at least one, rounded up. The deadline timer keeps the exchange to its own time.
            urlRequest.timeoutInterval = max(1, urlRequest.timeoutInterval.rounded(.up))
        #endif
        let handle = TaskHandle()
        let used = channel(for: request.security)
        let session = used.session
        let delegate = used.delegate
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: URLSessionTransportDelegate.Continuation) in
                let task = uploadFile.map { session.uploadTask(with: urlRequest, fromFile: $0) } ?? session.dataTask(with: urlRequest)
                delegate.register(task, request: request, continuation: continuation)
                handle.start(task, deadline: seconds, delegate: delegate)
            }
        } onCancel: {
            handle.cancel(delegate: delegate)
        }
        return try result.get()
    }
}

/// The URLSession task of one exchange, so that cancellation and the deadline can reach it
/// whichever comes first, even before it has started.
private final class TaskHandle: Sendable {
    private let state = Mutex<(task: URLSessionTask?, cancelled: Bool)>((nil, false))

    func start(_ task: URLSessionTask, deadline seconds: Double, delegate: URLSessionTransportDelegate) {
        let cancelledAlready = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelledAlready {
            delegate.finish(task, with: .cancelled)
            task.cancel()
            return
        }
        task.resume()
        let timer = DeadlineTimer(after: seconds) { [weak delegate, weak task] in
            guard let task else { return }
            delegate?.finish(task, with: .timedOut)
            task.cancel()
        }
        delegate.attach(timer, to: task)
    }

    func cancel(delegate: URLSessionTransportDelegate) {
        let task = state.withLock { state -> URLSessionTask? in
            state.cancelled = true
            return state.task
        }
        if let task {
            delegate.finish(task, with: .cancelled)
            task.cancel()
        }
    }
}

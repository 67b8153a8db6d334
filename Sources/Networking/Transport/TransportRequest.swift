import Foundation

/// A fully built HTTP request, as a plain value handed to a ``Transport``.
///
/// Everything the wire needs is here and nothing else, so a request can be logged, compared,
/// replayed or persisted (it is `Codable`). The exceptions: the progress handler, the cookie
/// storage and the response body sink are neither encoded nor compared;
/// ``keepsMethodOnRedirect`` and the security's client certificate are compared, not encoded.
public struct TransportRequest: Sendable, Hashable, Codable {
    /// The request method.
    public var method: HTTPMethod
    /// The absolute URL, query included.
    public var url: URL
    /// The header fields to send. Transports add only what the protocol requires
    /// (`Host`, `Content-Length`, `Accept-Encoding`).
    public var headers: HTTPHeaders
    /// The body — bytes, a file, a form or a stream (see ``RequestBody``) — or `nil` for none.
    public var body: RequestBody?
    /// The longest the whole exchange may take, in seconds, before it fails with a timeout.
    public var timeout: TimeInterval
    /// The longest the exchange may go with no byte arriving or leaving, in seconds, before it
    /// fails with a timeout however much of ``timeout`` is left; `nil` (the default) for no such
    /// limit. Waiting for the answer counts. The repository sets it for an exchange with no time
    /// limit (see ``NetworkingConfiguration/idleTimeout``); an interceptor may set it for any.
    /// `LibcurlTransport` counts whole seconds (rounded up) once connected (its connect timeout
    /// bounds the connection), by libcurl's transfer rate averaged over about five seconds: an
    /// exchange below one byte a second for that long fails (a silence is noticed up to five
    /// seconds late), and one its reader has paused is never idle. `URLSessionTransport` hands
    /// it to URLSession as the request's `timeoutInterval`, which counts making the connection too
    /// (on Linux in whole seconds, rounded up);
    /// a streamed body it stages in a file first fails once the stream gives nothing for this long.
    public var idleTimeout: TimeInterval?
    /// The TLS requirements of this request: pinned keys, trust anchors and a client certificate.
    public var security: TransportSecurity
    /// Told how many bytes went out and came in as the exchange goes on; not encoded or compared.
    public var progress: ProgressHandler?
    /// Where the cookies of redirect responses followed inside the transport are kept, and the
    /// next hop's `Cookie` comes from; set by the repository when its configuration keeps
    /// cookies. Not encoded or compared.
    public var cookieStorage: CookieStorage?
    /// The `Cookie` value ``cookieStorage`` chose for this request, so that a redirect chooses
    /// again only when the header is still that one: another (the caller's, an interceptor's)
    /// goes on to the same origin as it is.
    var cookieHeaderFromStorage: String?
    /// Where the body of a 2xx response goes instead of ``TransportResponse/body`` (a file, a
    /// stream of chunks), when the sink accepts it; see ``ResponseBodySink``. Not encoded or compared.
    public var responseBodySink: (any ResponseBodySink)?
    /// Whether a 301 or 302 answer to a `POST` that names the same resource at another address
    /// (the same path, but for a trailing slash, and the same query, at another scheme, host or
    /// port: an `http` API upgraded to `https`, a moved host) sends the same method and body
    /// there, as 307 and 308 do, instead of turning it into a body-less `GET` (what browsers,
    /// URLSession and libcurl do). A 303, or a 301 or 302 to another resource, still ends in a
    /// `GET`: that is Post/Redirect/Get, and the write was done. `false` by default; the offline
    /// queue and the batch client set it, so that a write moved elsewhere is never turned into a
    /// read and reported delivered. Compared, not encoded.
    public var keepsMethodOnRedirect = false

    /// Creates a request whose body is bytes in memory. The timeout defaults to 75 seconds, the
    /// library-wide default.
    @_disfavoredOverload
    public init(
        method: HTTPMethod, url: URL, headers: HTTPHeaders = [:], body: Data?,
        timeout: TimeInterval = NetworkingConfiguration.defaultTimeout, security: TransportSecurity = .default,
        progress: ProgressHandler? = nil
    ) {
        self.init(
            method: method, url: url, headers: headers, body: body.map(RequestBody.data), timeout: timeout, security: security,
            progress: progress)
    }

    /// Creates a request. The timeout defaults to 75 seconds, the library-wide default.
    public init(
        method: HTTPMethod, url: URL, headers: HTTPHeaders = [:], body: RequestBody? = nil,
        timeout: TimeInterval = NetworkingConfiguration.defaultTimeout, security: TransportSecurity = .default,
        progress: ProgressHandler? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.security = security
        self.progress = progress
    }

    private enum CodingKeys: String, CodingKey {
        case method, url, headers, body, timeout, idleTimeout, security
    }

    /// Reads a request that ``encode(to:)`` wrote: no `timeout` is no limit (`.infinity`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        method = try container.decode(HTTPMethod.self, forKey: .method)
        url = try container.decode(URL.self, forKey: .url)
        headers = try container.decode(HTTPHeaders.self, forKey: .headers)
        body = try container.decodeIfPresent(RequestBody.self, forKey: .body)
        timeout = try container.decodeIfPresent(TimeInterval.self, forKey: .timeout) ?? .infinity
        idleTimeout = try container.decodeIfPresent(TimeInterval.self, forKey: .idleTimeout)
        security = try container.decode(TransportSecurity.self, forKey: .security)
    }

    /// Writes the request. A timeout with no limit (`.infinity`) is written as no `timeout` key,
    /// and an idle timeout with none as no `idleTimeout`: JSON has no infinity, and `JSONEncoder`
    /// refuses one by default, so a request without a time limit could not be kept otherwise.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method, forKey: .method)
        try container.encode(url, forKey: .url)
        try container.encode(headers, forKey: .headers)
        try container.encodeIfPresent(body, forKey: .body)
        // -infinity has passed, as 0 has: read back as no key, it would be no limit.
        if timeout.isFinite || timeout < 0 { try container.encode(timeout.isFinite ? timeout : 0, forKey: .timeout) }
        if let idleTimeout, idleTimeout.isFinite { try container.encode(idleTimeout, forKey: .idleTimeout) }
        try container.encode(security, forKey: .security)
    }

    public static func == (lhs: TransportRequest, rhs: TransportRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.headers == rhs.headers && lhs.body == rhs.body
            && lhs.timeout == rhs.timeout && lhs.idleTimeout == rhs.idleTimeout && lhs.security == rhs.security
            && lhs.keepsMethodOnRedirect == rhs.keepsMethodOnRedirect
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(headers)
        hasher.combine(body)
        hasher.combine(timeout)
        hasher.combine(idleTimeout)
        hasher.combine(security)
        hasher.combine(keepsMethodOnRedirect)
    }

    /// The method and URL, as errors and logs show a request.
    public var summary: RequestSummary { RequestSummary(method: method, url: url) }
}

/// The method and URL of a request: what an error says about the request that failed.
public struct RequestSummary: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The request method.
    public let method: HTTPMethod
    /// The URL the request was sent to.
    public let url: URL

    /// Creates a summary.
    public init(method: HTTPMethod, url: URL) {
        self.method = method
        self.url = url
    }

    /// `METHOD URL`, with credentials in the query redacted.
    public var description: String { "\(method) \(Redaction.standard.url(url))" }
}

extension TransportRequest {
    /// What makes the request impossible to send on any transport, or `nil`: a URL that is not
    /// http or https with a host, a method that is not a token, pinning over http, or a header
    /// field that would break the message or have it refused (a CR or LF in a value could add
    /// fields of its own; another control character but a tab is refused by strict servers).
    ///
    /// Both transports check it before sending. A feature that carries a request some other way
    /// (as an item of a batch request's body, say) checks it too, so that what a call could not
    /// send on its own never reaches the server inside another.
    public var problemSending: String? {
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            return "\(Redaction.standard.url(url)) is not an http or https URL with a host"
        }
        guard method.isValidToken else { return "\"\(method.rawValue)\" is not a valid method" }
        if let idleTimeout, !(idleTimeout > 0) { return "the idle timeout must be a positive number of seconds, not \(idleTimeout)" }
        return security.problem(sending: url) ?? HeaderValidation.problem(in: headers)
    }
}

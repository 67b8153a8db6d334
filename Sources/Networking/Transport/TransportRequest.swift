import Foundation

/// A fully built HTTP request, as a plain value handed to a ``Transport``.
///
/// Everything the wire needs is here and nothing else, so a request can be logged, compared,
/// replayed or persisted (it is `Codable`). The progress handler is the one exception: it is
/// neither encoded nor compared.
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
    /// The TLS requirements of this request: pinned keys and trust anchors.
    public var security: TransportSecurity
    /// Told how many bytes went out and came in as the exchange goes on; not encoded or compared.
    public var progress: ProgressHandler?
    /// Where the cookies of redirect responses followed inside the transport are kept, and the
    /// next hop's `Cookie` comes from; set by the repository when its configuration keeps
    /// cookies. Not encoded or compared.
    public var cookieStorage: CookieStorage?
    /// Where the body of a 2xx response goes instead of ``TransportResponse/body`` (a file, a
    /// stream of chunks), when the sink accepts it; see ``ResponseBodySink``. Not encoded or compared.
    public var responseBodySink: (any ResponseBodySink)?
    /// Whether a 301 or 302 answer to a `POST` sends the same method and body to the new
    /// location, as 307 and 308 do, instead of turning it into a body-less `GET` (what browsers,
    /// URLSession and libcurl do by default). A 303 still ends in a `GET`: it says the write was
    /// done. `false` by default; the offline queue sets it, so that a queued write moved to
    /// another address (an `http` API upgraded to `https`) is never turned into a read and
    /// reported delivered. Compared, not encoded.
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
        case method, url, headers, body, timeout, security
    }

    public static func == (lhs: TransportRequest, rhs: TransportRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.headers == rhs.headers && lhs.body == rhs.body
            && lhs.timeout == rhs.timeout && lhs.security == rhs.security && lhs.keepsMethodOnRedirect == rhs.keepsMethodOnRedirect
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(headers)
        hasher.combine(body)
        hasher.combine(timeout)
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
    /// field that would break the message (a CR or LF in a value could add fields of its own).
    var problemSending: String? {
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            return "\(Redaction.standard.url(url)) is not an http or https URL with a host"
        }
        guard method.isValidToken else { return "\"\(method.rawValue)\" is not a valid method" }
        return security.problem(sending: url) ?? HeaderValidation.problem(in: headers)
    }
}

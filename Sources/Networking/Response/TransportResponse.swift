import Foundation

/// A complete HTTP response as a plain value: status, headers and the whole body.
///
/// Errors carry it so that a failure can always be explained with what the server sent. It is
/// deliberately not `Decodable`: asking a repository for a `TransportResponse` returns it raw
/// (``AbstractRepository/performRequest(_:)-(Endpoint<TransportResponse>)``), it is never
/// decoded from the body by mistake.
public struct TransportResponse: Sendable, Hashable {
    /// The HTTP status code, for example `200`.
    public var statusCode: Int
    /// The response header fields.
    public var headers: HTTPHeaders
    /// The body bytes, already decompressed when the server used gzip or deflate.
    public var body: Data
    /// The URL that answered, after any redirects; `nil` when the transport does not know it.
    public var url: URL?
    /// Where the answer came from: ``ResponseSource/network`` unless an interceptor (a cache)
    /// answered from storage.
    public var source: ResponseSource
    /// The header fields of the request this answer came to, as the request left the last
    /// interceptor for the transport (fields the transport adds itself, such as libcurl's
    /// `Accept-Encoding`, are not among them, nor what a redirect the transport followed
    /// removed); `nil` for an answer no transport gave — one an interceptor made or a cache
    /// kept. An interceptor that makes a new response from one it got copies it over.
    ///
    /// What an interceptor early in the chain cannot see otherwise: the fields that steps after
    /// it added — the session's `Authorization`, cookies, a tenant or language field — which a
    /// response cache needs to honour `Vary`, and a batch needs to know which credential its
    /// items were refused. It is not part of the response's equality or hash.
    public var requestHeaders: HTTPHeaders?

    /// Creates a response.
    public init(
        statusCode: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL? = nil,
        source: ResponseSource = .network
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.url = url
        self.source = source
    }

    /// Whether the answer came from the origin (scheme, host, port) of `url`, as far as the
    /// transport says: a redirect to another origin went there without the session's
    /// `Authorization`, so its 401 says nothing about the session.
    func isFromOrigin(of url: URL) -> Bool {
        self.url.map { RedirectPolicy.sameOrigin($0, url) } ?? true
    }

    /// Whether two responses are the same answer: status, header fields, body, URL and source
    /// (not ``requestHeaders``, which say what was asked).
    public static func == (lhs: TransportResponse, rhs: TransportResponse) -> Bool {
        lhs.statusCode == rhs.statusCode && lhs.headers == rhs.headers && lhs.body == rhs.body && lhs.url == rhs.url
            && lhs.source == rhs.source
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(statusCode)
        hasher.combine(headers)
        hasher.combine(body)
        hasher.combine(url)
        hasher.combine(source)
    }

    /// Whether the status is in `200..<300`.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }

    /// The body parsed as JSON, or `nil` when it is empty or not JSON.
    public var json: JSONValue? {
        body.isEmpty ? nil : try? JSONValue(parsing: body)
    }

    /// The body as UTF-8 text (invalid bytes replaced).
    public var text: String { String(decoding: body, as: UTF8.self) }
}

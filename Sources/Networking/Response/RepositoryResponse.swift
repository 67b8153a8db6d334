import Foundation

/// A decoded value with the response it came from: status, headers, final URL and where the
/// answer came from — for pagination links, `ETag`s, rate-limit headers and cache status,
/// without dropping to raw responses and decoding by hand.
///
/// Ask for it by returning it from a repository method; the same endpoint works either way:
///
/// ```swift
/// func books(page: Int) async -> Result<RepositoryResponse<BooksPage>, RepositoryError> {
///     await performRequest(.get("books", parameters: ["page": page]))
/// }
/// // let response = try await books(page: 1).get()
/// // response.value.data, response.headers["X-RateLimit-Remaining"], response.link(rel: "next")
/// ```
public struct RepositoryResponse<Value: Sendable>: Sendable {
    /// The decoded body (`Void` for calls that ignore it).
    public var value: Value
    /// The HTTP status code of the final response, for example `200` or `201`.
    public var statusCode: Int
    /// The response header fields.
    public var headers: HTTPHeaders
    /// The URL that answered, after any redirects, when the transport knows it.
    public var url: URL?
    /// The method and URL of the request that was sent.
    public var request: RequestSummary
    /// Where the answer came from: the network, or a cache (see ``ResponseSource``).
    public var source: ResponseSource

    /// Creates a response.
    public init(
        value: Value, statusCode: Int, headers: HTTPHeaders = [:], url: URL? = nil, request: RequestSummary,
        source: ResponseSource = .network
    ) {
        self.value = value
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
        self.request = request
        self.source = source
    }

    /// The same response around another value.
    public func map<T: Sendable, E: Error>(_ transform: (Value) throws(E) -> T) throws(E) -> RepositoryResponse<T> {
        RepositoryResponse<T>(
            value: try transform(value), statusCode: statusCode, headers: headers, url: url, request: request,
            source: source)
    }

    /// The target of the `Link` header field (RFC 8288) with this relation, such as `"next"`,
    /// resolved against the response's URL.
    public func link(rel relation: String) -> URL? {
        LinkHeader.target(of: relation, in: headers.values(for: "Link"), relativeTo: url ?? request.url)
    }
}

extension RepositoryResponse {
    init(_ value: Value, of response: TransportResponse, to request: RequestSummary) {
        self.init(
            value: value, statusCode: response.statusCode, headers: response.headers, url: response.url,
            request: request, source: response.source)
    }
}

/// Where an answer came from.
public enum ResponseSource: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The server answered this call.
    case network
    /// A stored answer, still fresh, was used without asking the server.
    case cache
    /// A stored answer was used after the server confirmed it is still current (a `304 Not Modified`).
    case revalidated
    /// A stored answer past its freshness was used because the server could not be reached.
    case stale

    public var description: String {
        switch self {
        case .network: "network"
        case .cache: "cache"
        case .revalidated: "revalidated"
        case .stale: "stale"
        }
    }
}

import Foundation

/// One call of an API, as a value that carries the type of its response.
///
/// Repositories build endpoints and hand them to ``AbstractRepository``'s `perform…` methods; the
/// response type is usually inferred from the method's return type:
///
/// ```swift
/// func fetchBooks(page: Int) async -> Result<BooksPage, RepositoryError> {
///     await performRequest(.get("books", parameters: ["page": page]))
/// }
/// func addBook(_ book: NewBook) async -> Result<Void, RepositoryError> {
///     await performRequest(.post("books", body: book))
/// }
/// ```
///
/// `Response` is a `Decodable` model (an entity or a collection), `Void` for an empty or ignored
/// body, or ``TransportResponse`` for the raw response.
public struct Endpoint<Response>: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The path under the configuration's base URL, such as `"books/12"`.
    ///
    /// It is taken literally: each `/`-separated segment is percent-encoded (a `?` or `%` in it is
    /// sent as `%3F` or `%25`), so give it unencoded and put query items in ``parameters``.
    public var path: String
    /// The parameters, sent in the query or the body (see ``encoding``).
    public var parameters: Parameters?
    /// Query items sent in the URL whatever the method and the encoding, for calls that need both a
    /// query and a body; a dictionary.
    public var query: Parameters?
    /// Header fields for this call only; the session's `Authorization` and the configuration's
    /// default headers win over them.
    public var headers: HTTPHeaders
    /// Where the parameters go; `nil` lets the method decide (see
    /// ``NetworkingConfiguration/queryEncodedMethods``).
    public var encoding: ParameterEncoding?
    /// A dotted key path (such as `"data"` or `"page.items"`) at which the model sits inside the
    /// JSON body, or `nil` when the body is the model.
    public var keyPath: String?
    /// Whether the call needs a logged-in session. Default `true`; ``AbstractRepository/performAuthenticationRequest(_:)``
    /// sends endpoints that do not (login, sign-up).
    public var requiresSession: Bool
    /// Custom errors for this call; tried before the repository's.
    public var customErrors: CustomErrorMapping
    /// A timeout for this call, overriding the configuration's.
    public var timeout: TimeInterval?
    /// Told about upload and download progress as the call runs; `nil` by default.
    public var progress: ProgressHandler?

    /// Creates an endpoint with optional parameters.
    public init(
        _ method: HTTPMethod, _ path: String, parameters: Parameters? = nil, query: Parameters? = nil,
        headers: HTTPHeaders = [:], encoding: ParameterEncoding? = nil, keyPath: String? = nil,
        customErrors: CustomErrorMapping = [], timeout: TimeInterval? = nil
    ) {
        self.method = method
        self.path = path
        self.parameters = parameters
        self.query = query
        self.headers = headers
        self.encoding = encoding
        self.keyPath = keyPath
        self.requiresSession = true
        self.customErrors = customErrors
        self.timeout = timeout
    }

    /// Creates an endpoint whose parameters are an `Encodable` value, such as a model to create.
    public init(
        _ method: HTTPMethod, _ path: String, body: some Encodable & Sendable, query: Parameters? = nil,
        headers: HTTPHeaders = [:], encoding: ParameterEncoding? = nil, keyPath: String? = nil,
        customErrors: CustomErrorMapping = [], timeout: TimeInterval? = nil
    ) {
        self.init(
            method, path, parameters: Parameters(body), query: query, headers: headers, encoding: encoding,
            keyPath: keyPath, customErrors: customErrors, timeout: timeout)
    }

    /// A `GET` endpoint.
    public static func get(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders = [:], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.get, path, parameters: parameters, headers: headers, keyPath: keyPath)
    }

    /// A `POST` endpoint with optional parameters.
    public static func post(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders = [:], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.post, path, parameters: parameters, headers: headers, keyPath: keyPath)
    }

    /// A `POST` endpoint whose body is an `Encodable` value.
    public static func post(
        _ path: String, body: some Encodable & Sendable, headers: HTTPHeaders = [:], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.post, path, body: body, headers: headers, keyPath: keyPath)
    }

    /// A `PUT` endpoint with optional parameters.
    public static func put(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders = [:], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.put, path, parameters: parameters, headers: headers, keyPath: keyPath)
    }

    /// A `PUT` endpoint whose body is an `Encodable` value.
    public static func put(
        _ path: String, body: some Encodable & Sendable, headers: HTTPHeaders = [:], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.put, path, body: body, headers: headers, keyPath: keyPath)
    }

    /// A `PATCH` endpoint with optional parameters.
    public static func patch(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders = [:], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.patch, path, parameters: parameters, headers: headers, keyPath: keyPath)
    }

    /// A `PATCH` endpoint whose body is an `Encodable` value.
    public static func patch(
        _ path: String, body: some Encodable & Sendable, headers: HTTPHeaders = [:], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.patch, path, body: body, headers: headers, keyPath: keyPath)
    }

    /// A `DELETE` endpoint.
    public static func delete(
        _ path: String, parameters: Parameters? = nil, headers: HTTPHeaders = [:], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.delete, path, parameters: parameters, headers: headers, keyPath: keyPath)
    }

    /// A copy that needs no session (for login and sign-up).
    public func withoutSession() -> Endpoint {
        var copy = self
        copy.requiresSession = false
        return copy
    }

    /// A copy whose progress is reported to `handler`.
    public func reportingProgress(_ handler: @escaping ProgressHandler) -> Endpoint {
        var copy = self
        copy.progress = handler
        return copy
    }

    /// A copy with these custom errors tried first.
    public func mappingErrors(_ errors: CustomErrorMapping) -> Endpoint {
        var copy = self
        copy.customErrors = errors
        return copy
    }
}

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
/// body, ``TransportResponse`` for the raw response, ``RepositoryResponse`` for a model with its
/// status and headers, or any type the endpoint's own ``decoding(_:)-((DecodingInput)->Response)`` step produces.
///
/// The factories (`.get`, `.post`, …) take dictionary literals, ``Parameters`` and ``HTTPHeaders``
/// values, and dictionary variables (`[String: String]`, `[String: Int]`, `[String: any Sendable]`…).
public struct Endpoint<Response>: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The path under the configuration's base URL, such as `"books/12"`, or an absolute
    /// `http(s)://` URL for another host.
    ///
    /// A relative path is taken literally: each `/`-separated segment is percent-encoded (a `?`
    /// or `%` in it is sent as `%3F` or `%25`), so give it unencoded and put query items in
    /// ``parameters`` or ``query``. Empty segments and a trailing `/` are dropped; a `.` or `..`
    /// segment is sent as it is and resolved by servers, so a value that could be one belongs
    /// in a route's placeholder (which refuses it) or in the query.
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
    /// How arrays and booleans are written in the query or a form body; `nil` uses
    /// ``NetworkingConfiguration/queryEncodingStyle``.
    public var queryEncodingStyle: QueryEncodingStyle?
    /// A dotted key path (such as `"data"` or `"page.items"`) at which the model sits inside the
    /// JSON body, or `nil` when the body is the model.
    public var keyPath: String?
    /// Whether the call needs a logged-in session. Default `true`; ``AbstractRepository/performAuthenticationRequest(_:)-(Endpoint<T>)``
    /// sends endpoints that do not (login, sign-up).
    public var requiresSession: Bool
    /// Custom errors for this call; tried before the repository's.
    public var customErrors: CustomErrorMapping
    /// A timeout for this call's whole exchange, overriding the configuration's. `nil` (the
    /// default) takes the configuration's ``NetworkingConfiguration/timeout``, except for a
    /// file's transfer (a download to a file, a body read from a file or a stream, a form with a
    /// file from disk) whose answer is not a stream, which has no time limit and fails only after
    /// ``idleTimeout`` (or the configuration's ``NetworkingConfiguration/idleTimeout``) of
    /// silence; with neither, it keeps the configuration's timeout.
    public var timeout: TimeInterval?
    /// How long this call may go with no byte arriving or leaving, in seconds, whatever its
    /// `timeout`; `.infinity` for no such limit (a long poll with `timeout: .infinity`). `nil`
    /// (the default) leaves it to the configuration's ``NetworkingConfiguration/idleTimeout``,
    /// which applies to calls with no time limit only.
    public var idleTimeout: TimeInterval?
    /// Told about upload and download progress as the call runs; `nil` by default.
    public var progress: ProgressHandler?
    /// A name for the call (routes set their name), seen by interceptors as ``RequestContext/name``.
    public var name: String?
    /// Settings for the interceptors that act on them (a cache, an offline queue); see ``RequestOptions``.
    public var options: RequestOptions

    /// A body sent as it is — a file, bytes, a stream — instead of encoding ``parameters`` (which
    /// then go in the query). Its `Content-Type` is a form's own (``RequestBody/multipart(_:)``),
    /// else the endpoint's header, else guessed from a file's extension, else `application/octet-stream`. See ``upload(_:_:body:contentType:query:headers:)``.
    /// An endpoint with both this and a ``form`` fails with ``RepositoryError/invalidRequest(reason:request:)``.
    public var requestBody: RequestBody?
    /// A `multipart/form-data` body; ``parameters`` are added to it as text fields. An endpoint
    /// with both this and a ``requestBody`` fails with ``RepositoryError/invalidRequest(reason:request:)``.
    public var form: MultipartFormData?
    /// Whether the body is compressed with gzip as it is sent (`Content-Encoding: gzip`); the
    /// server must inflate it.
    public var gzipsBody = false
    /// Digests of the body to send in headers (`Content-MD5`, `Content-Digest`).
    public var contentDigests: ContentDigests = []
    /// Where a download (an `Endpoint<DownloadedFile>`) is written; `nil` writes a new file in
    /// the temporary folder. See ``downloading(to:resumable:expectedSHA256:maximumSize:)``.
    public var downloadOptions: DownloadOptions?

    /// A dotted key path the body is wrapped in before it is sent: `"user"` sends
    /// `{"user": {…}}` (WANetworkRouting's request key path); `nil` sends the body as it is.
    public var requestRootKey: String?

    /// The endpoint's own decoding step, when it has one.
    var customDecoding: (@Sendable (DecodingInput) throws -> Response)?
    /// The route this endpoint calls, until ``RouteTable`` resolves it into a plain endpoint.
    var route: RouteReference?
    /// Whether ``path`` is already percent-encoded (a rendered route template).
    var pathIsEncoded = false
    /// The route's step after decoding.
    var routeMapping: RouteMapping?
    /// Whether the call is reported as one that blocks the user (see ``Route/preventUserInteraction``).
    var preventsUserInteraction = false
    /// Whether the route saves its answer to a file (``Route/saveAsResource``).
    var savesToFile = false
    /// Where the response body goes as it arrives (a download's file).
    var responseBodySink: (any ResponseBodySink)?
    /// Header fields the feature needs as the endpoint has them, or not at all (an event stream's
    /// `Accept`, a download's `Range` and `Accept-Encoding`): unlike the endpoint's other headers,
    /// the configuration's `defaultHeaders` (an app's `Accept: application/json`) never replace
    /// nor add them.
    var protocolHeaders: Set<String> = []

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
        self.options = RequestOptions()
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

    // MARK: - Factories

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

    /// An upload of a body sent as it is: a file (read as it is sent, never loaded whole), bytes,
    /// or a stream of chunks.
    ///
    /// ```swift
    /// func uploadPhoto(_ file: URL) async -> Result<Void, RepositoryError> {
    ///     await performRequest(Endpoint.upload(.put, "photos/1", body: .file(file)).withContentDigests([.md5, .sha256]))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - method: the method; default `POST`.
    ///   - path: the path under the base URL, or an absolute URL.
    ///   - body: what is sent.
    ///   - contentType: the body's media type (not a form's, which is its own); default guessed
    ///     from a file's extension, else `application/octet-stream`.
    ///   - query: query items (an upload's parameters go in the query).
    ///   - headers: header fields of this call.
    public static func upload(
        _ method: HTTPMethod = .post, _ path: String, body: RequestBody, contentType: String? = nil, query: Parameters? = nil,
        headers: HTTPHeaders = [:]
    ) -> Endpoint {
        Endpoint(method, path, query: query, headers: headers).uploading(body, contentType: contentType)
    }

    /// An upload of a `multipart/form-data` form, with `parameters` added as text fields.
    ///
    /// The parameters must be a dictionary: an array or a single value has no field names, and
    /// the call fails with ``RepositoryError/invalidRequest(reason:request:)`` rather than send
    /// them as JSON in place of the form.
    public static func upload(
        _ method: HTTPMethod = .post, _ path: String, form: MultipartFormData, parameters: Parameters? = nil,
        headers: HTTPHeaders = [:]
    ) -> Endpoint {
        Endpoint(method, path, parameters: parameters, headers: headers).uploading(form)
    }

    // MARK: - Copies

    /// A copy that sends `body` as it is (for a route, say), instead of any form; its parameters
    /// go in the query.
    public func uploading(_ body: RequestBody, contentType: String? = nil) -> Endpoint {
        var copy = self
        copy.requestBody = body
        copy.form = nil
        if let contentType { copy.headers["Content-Type"] = contentType }
        return copy
    }

    /// A copy that sends a `multipart/form-data` form, its parameters added as text fields,
    /// instead of any body given before.
    public func uploading(_ form: MultipartFormData) -> Endpoint {
        var copy = self
        copy.form = form
        copy.requestBody = nil
        return copy
    }

    /// A copy whose body is compressed with gzip as it is sent (`Content-Encoding: gzip`).
    public func gzipped() -> Endpoint {
        var copy = self
        copy.gzipsBody = true
        return copy
    }

    /// A copy that sends digests of its body (`Content-MD5`, `Content-Digest`).
    public func withContentDigests(_ digests: ContentDigests) -> Endpoint {
        var copy = self
        copy.contentDigests = digests
        return copy
    }

    /// A copy named `name`, as a route's calls are: interceptors see it as
    /// ``RequestContext/name``, so a response cache keeps its answers under the name, and a write
    /// can make them stale by naming it (its `invalidatesRouteNames`). The name is part of the
    /// cache's key: name every call of the same read alike, or they keep entries apart. A route's
    /// call keeps the route's name.
    public func named(_ name: String) -> Endpoint {
        var copy = self
        copy.name = name
        return copy
    }

    /// A copy with a timeout of its own for the whole exchange, in seconds (positive), replacing
    /// the configuration's; `.infinity` for none (a stream that never ends; a long poll also
    /// needs `timingOut(whenIdleFor: .infinity)`, or the configuration's idle timeout ends it).
    public func timingOut(after seconds: TimeInterval) -> Endpoint {
        var copy = self
        copy.timeout = seconds
        return copy
    }

    /// A copy that fails with ``RepositoryError/timeout(_:)`` once nothing has arrived or left for
    /// `seconds` (positive), whatever its ``timeout``; `.infinity` for no such limit.
    public func timingOut(whenIdleFor seconds: TimeInterval) -> Endpoint {
        var copy = self
        copy.idleTimeout = seconds
        return copy
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

    /// A copy with an option set for the interceptors that act on it.
    public func with<Key: RequestOptionKey>(_ key: Key.Type, _ value: Key.Value) -> Endpoint {
        var copy = self
        copy.options[key] = value
        return copy
    }

    /// A copy that decodes its response with `decode` instead of decoding the body as `Response`
    /// — the seeds' decoder closures, for bodies whose shape differs from the model, or models
    /// that are not `Decodable`.
    ///
    /// `decode` runs only for a 2xx response. A `DecodingError` it throws (from
    /// ``DecodingInput/decode(_:at:)`` or its own code) becomes ``RepositoryError/decodeError(_:)``
    /// (``RepositoryError/jsonError(_:)`` when the body is not JSON) and reaches the decode-error hook
    /// with the request, the response and the coding path; any other error becomes a
    /// ``RepositoryError/decodeError(_:)`` whose reason describes it; a ``RepositoryError`` it throws
    /// is returned as it is.
    ///
    /// ```swift
    /// func titles() async -> Result<[String], RepositoryError> {
    ///     await performRequest(Endpoint.get("books").decoding { input in
    ///         try input.decode([Book].self, at: "data").map(\.title)
    ///     })
    /// }
    /// ```
    public func decoding(_ decode: @escaping @Sendable (DecodingInput) throws -> Response) -> Endpoint {
        var copy = self
        copy.customDecoding = decode
        return copy
    }

    /// A copy whose decoding step makes the value of its ``RepositoryResponse``: the status,
    /// headers and URL come from the response, as without a step.
    ///
    /// ```swift
    /// func titles() async -> Result<RepositoryResponse<[String]>, RepositoryError> {
    ///     await performRequest(Endpoint.get("books").decoding { input in
    ///         try input.decode([Book].self, at: "data").map(\.title)
    ///     })
    /// }
    /// ```
    public func decoding<Value: Sendable>(_ decode: @escaping @Sendable (DecodingInput) throws -> Value) -> Endpoint
    where Response == RepositoryResponse<Value> {
        decoding { input in RepositoryResponse(try decode(input), of: input.response, to: input.request) }
    }
}

extension Endpoint {
    /// The same call, for another response type, without a decoding step.
    func retyped<Other>(as type: Other.Type = Other.self) -> Endpoint<Other> {
        var other = Endpoint<Other>(
            method, path, parameters: parameters, query: query, headers: headers, encoding: encoding, keyPath: keyPath,
            customErrors: customErrors, timeout: timeout)
        other.queryEncodingStyle = queryEncodingStyle
        other.requiresSession = requiresSession
        other.progress = progress
        other.name = name
        other.options = options
        other.requestRootKey = requestRootKey
        other.requestBody = requestBody
        other.form = form
        other.gzipsBody = gzipsBody
        other.contentDigests = contentDigests
        other.downloadOptions = downloadOptions
        other.savesToFile = savesToFile
        other.responseBodySink = responseBodySink
        other.protocolHeaders = protocolHeaders
        other.route = route
        other.pathIsEncoded = pathIsEncoded
        other.routeMapping = routeMapping
        other.preventsUserInteraction = preventsUserInteraction
        other.idleTimeout = idleTimeout
        return other
    }

    /// The endpoint of the value a ``RepositoryResponse`` carries, with the decoding step's value
    /// as its own step (the rest of the response comes from the transport).
    func valueEndpoint<Value>() -> Endpoint<Value> where Response == RepositoryResponse<Value> {
        var other = retyped(as: Value.self)
        if let custom = customDecoding { other.customDecoding = { try custom($0).value } }
        return other
    }
}

// MARK: - Dictionary variables

extension Endpoint {
    /// A `GET` endpoint whose parameters are a dictionary variable.
    @_disfavoredOverload
    public static func get<Value: Sendable>(
        _ path: String, parameters: [String: Value]?, headers: some HTTPHeadersConvertible = HTTPHeaders(),
        keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.get, path, parameters: parameters.map { Parameters(dictionary: $0) }, headers: headers.httpHeaders, keyPath: keyPath)
    }

    /// A `GET` endpoint whose headers are a dictionary variable.
    @_disfavoredOverload
    public static func get(
        _ path: String, parameters: Parameters? = nil, headers: [String: String], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.get, path, parameters: parameters, headers: HTTPHeaders(headers), keyPath: keyPath)
    }

    /// A `POST` endpoint whose parameters are a dictionary variable.
    @_disfavoredOverload
    public static func post<Value: Sendable>(
        _ path: String, parameters: [String: Value]?, headers: some HTTPHeadersConvertible = HTTPHeaders(),
        keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.post, path, parameters: parameters.map { Parameters(dictionary: $0) }, headers: headers.httpHeaders, keyPath: keyPath)
    }

    /// A `POST` endpoint whose headers are a dictionary variable.
    @_disfavoredOverload
    public static func post(
        _ path: String, parameters: Parameters? = nil, headers: [String: String], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.post, path, parameters: parameters, headers: HTTPHeaders(headers), keyPath: keyPath)
    }

    /// A `POST` endpoint with an `Encodable` body whose headers are a dictionary variable.
    @_disfavoredOverload
    public static func post(
        _ path: String, body: some Encodable & Sendable, headers: [String: String], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.post, path, body: body, headers: HTTPHeaders(headers), keyPath: keyPath)
    }

    /// A `PUT` endpoint whose parameters are a dictionary variable.
    @_disfavoredOverload
    public static func put<Value: Sendable>(
        _ path: String, parameters: [String: Value]?, headers: some HTTPHeadersConvertible = HTTPHeaders(),
        keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.put, path, parameters: parameters.map { Parameters(dictionary: $0) }, headers: headers.httpHeaders, keyPath: keyPath)
    }

    /// A `PUT` endpoint whose headers are a dictionary variable.
    @_disfavoredOverload
    public static func put(
        _ path: String, parameters: Parameters? = nil, headers: [String: String], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.put, path, parameters: parameters, headers: HTTPHeaders(headers), keyPath: keyPath)
    }

    /// A `PUT` endpoint with an `Encodable` body whose headers are a dictionary variable.
    @_disfavoredOverload
    public static func put(
        _ path: String, body: some Encodable & Sendable, headers: [String: String], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.put, path, body: body, headers: HTTPHeaders(headers), keyPath: keyPath)
    }

    /// A `PATCH` endpoint whose parameters are a dictionary variable.
    @_disfavoredOverload
    public static func patch<Value: Sendable>(
        _ path: String, parameters: [String: Value]?, headers: some HTTPHeadersConvertible = HTTPHeaders(),
        keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.patch, path, parameters: parameters.map { Parameters(dictionary: $0) }, headers: headers.httpHeaders, keyPath: keyPath)
    }

    /// A `PATCH` endpoint whose headers are a dictionary variable.
    @_disfavoredOverload
    public static func patch(
        _ path: String, parameters: Parameters? = nil, headers: [String: String], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.patch, path, parameters: parameters, headers: HTTPHeaders(headers), keyPath: keyPath)
    }

    /// A `PATCH` endpoint with an `Encodable` body whose headers are a dictionary variable.
    @_disfavoredOverload
    public static func patch(
        _ path: String, body: some Encodable & Sendable, headers: [String: String], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.patch, path, body: body, headers: HTTPHeaders(headers), keyPath: keyPath)
    }

    /// A `DELETE` endpoint whose parameters are a dictionary variable.
    @_disfavoredOverload
    public static func delete<Value: Sendable>(
        _ path: String, parameters: [String: Value]?, headers: some HTTPHeadersConvertible = HTTPHeaders(),
        keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.delete, path, parameters: parameters.map { Parameters(dictionary: $0) }, headers: headers.httpHeaders, keyPath: keyPath)
    }

    /// A `DELETE` endpoint whose headers are a dictionary variable.
    @_disfavoredOverload
    public static func delete(
        _ path: String, parameters: Parameters? = nil, headers: [String: String], keyPath: String? = nil
    ) -> Endpoint {
        Endpoint(.delete, path, parameters: parameters, headers: HTTPHeaders(headers), keyPath: keyPath)
    }
}

extension Endpoint where Response == DownloadedFile {
    /// A copy that downloads the response body to a file, streamed to a temporary file beside the
    /// destination and moved into place when complete. Only an `Endpoint<DownloadedFile>` has it: a
    /// body decoded into another type is not a file.
    ///
    /// - Parameters:
    ///   - destination: the file to write (replaced when it exists), a file URL in a folder that
    ///     exists; `nil` writes a new file in the temporary folder.
    ///   - resumable: keep the partial file when the download fails or is cancelled, and resume
    ///     from it next time with `Range` and `If-Range`; nothing is left behind otherwise.
    ///   - expectedSHA256: the hex SHA-256 the file must have.
    ///   - maximumSize: the largest file accepted, in bytes; `nil` for no limit (see
    ///     ``DownloadOptions/maximumSize``).
    public func downloading(
        to destination: URL? = nil, resumable: Bool = false, expectedSHA256: String? = nil, maximumSize: Int64? = nil
    ) -> Endpoint {
        var copy = self
        copy.downloadOptions = DownloadOptions(
            destination: destination, resumable: resumable, expectedSHA256: expectedSHA256, maximumSize: maximumSize)
        return copy
    }
}

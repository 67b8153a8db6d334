import Foundation

/// The base class of an API's repositories: subclass it once per domain (`UsersRepository`,
/// `BooksRepository`) and give each subclass typed methods that return
/// `Result<Model, RepositoryError>`.
///
/// ```swift
/// final class BooksRepository: AbstractRepository, @unchecked Sendable {
///     func fetchBooks(page: Int) async -> Result<BooksPage, RepositoryError> {
///         await performRequest(.get("books", parameters: ["page": page]))
///     }
///     func addBook(_ book: NewBook) async -> Result<Void, RepositoryError> {
///         await performRequest(.post("books", body: book))
///     }
/// }
/// ```
///
/// A call goes: build the request from the endpoint and the configuration → the interceptor chain
/// (the session's `Authorization` is added there) → the transport → status validation → decoding.
///
/// Header precedence, lowest first: `Accept`/`Content-Type` defaults < the endpoint's headers <
/// the session's `Authorization` < the configuration's ``NetworkingConfiguration/defaultHeaders``.
///
/// Status handling: 2xx succeeds. A 401 to a request that needs a session is
/// ``RepositoryError/unauthenticatedSession(_:)`` and expires the session it was signed with.
/// Any other status is the first matching custom error (the endpoint's mapping, then the
/// repository's) or ``RepositoryError/requestError(_:)``.
///
/// Thread-safety: every stored property is an immutable `Sendable` value, so instances may be
/// shared across tasks. Subclasses should keep to that (hence `@unchecked Sendable`, which
/// subclasses restate).
open class AbstractRepository: @unchecked Sendable {
    /// Where the API is and how to talk to it.
    public let configuration: NetworkingConfiguration
    /// The session that signs requests, or `nil` when requests carry no session.
    public let sessionManager: (any SessionAuthorizing)?
    /// The transport every request goes through.
    public let transport: any Transport
    /// Custom errors for every call of this repository.
    public let customErrors: CustomErrorMapping

    let pipeline: RequestPipeline
    let builder: RequestBuilder
    let decoder: ResponseDecoder

    /// Creates a repository.
    ///
    /// - Parameters:
    ///   - configuration: where the API is and how to talk to it.
    ///   - sessionManager: signs requests that need a session; without one, such requests are sent unsigned.
    ///   - transport: the wire; default ``DefaultTransport/shared`` (libcurl on Linux, URLSession elsewhere).
    ///   - interceptors: steps around the transport, outermost first; the session's step is outside them all.
    ///   - customErrors: custom errors for every call of this repository.
    public init(
        configuration: NetworkingConfiguration,
        sessionManager: (any SessionAuthorizing)? = nil,
        transport: (any Transport)? = nil,
        interceptors: [any Interceptor] = [],
        customErrors: CustomErrorMapping = []
    ) {
        let transport = transport ?? DefaultTransport.shared
        self.configuration = configuration
        self.sessionManager = sessionManager
        self.transport = transport
        self.customErrors = customErrors
        let sessionStep: [any Interceptor] = sessionManager.map {
            [SessionInterceptor(session: $0, defaultHeadersAuthorize: configuration.defaultHeaders.contains("Authorization"))]
        } ?? []
        pipeline = RequestPipeline(transport: transport, interceptors: sessionStep + interceptors)
        builder = RequestBuilder(configuration: configuration)
        decoder = ResponseDecoder(configuration: configuration)
    }

    // MARK: - Requests

    /// Sends the endpoint and decodes the body (or the value at its key path) as `T`.
    public func performRequest<T: Decodable & Sendable>(_ endpoint: Endpoint<T>) async -> Result<T, RepositoryError> {
        await result { () async throws(RepositoryError) -> T in
            let (request, response) = try await self.exchange(endpoint)
            return try self.decoder.decode(T.self, from: response, request: request.summary, keyPath: endpoint.keyPath)
        }
    }

    /// Sends the endpoint and ignores the body (empty or not).
    public func performRequest(_ endpoint: Endpoint<Void>) async -> Result<Void, RepositoryError> {
        await result { () async throws(RepositoryError) in _ = try await self.exchange(endpoint) }
    }

    /// Sends the endpoint and returns the response as it came: status, headers and body bytes.
    public func performRawRequest(_ endpoint: Endpoint<TransportResponse>) async -> Result<TransportResponse, RepositoryError> {
        await result { () async throws(RepositoryError) -> TransportResponse in try await self.exchange(endpoint).1 }
    }

    /// Sends an endpoint that needs no session, such as login or sign-up, and decodes the body as `T`.
    public func performAuthenticationRequest<T: Decodable & Sendable>(_ endpoint: Endpoint<T>) async -> Result<T, RepositoryError> {
        await performRequest(endpoint.withoutSession())
    }

    /// Sends an endpoint that needs no session and ignores the body.
    public func performAuthenticationRequest(_ endpoint: Endpoint<Void>) async -> Result<Void, RepositoryError> {
        await performRequest(endpoint.withoutSession())
    }

    // MARK: - Steps

    /// Builds, sends and validates one request; returns it with its 2xx response.
    func exchange<Response>(_ endpoint: Endpoint<Response>) async throws(RepositoryError) -> (TransportRequest, TransportResponse) {
        if Task.isCancelled { throw .cancelled(nil) }
        let request = try builder.build(endpoint)
        let response = try await pipeline.send(request, context: RequestContext(requiresSession: endpoint.requiresSession))
        try validate(response, to: request, endpoint: endpoint)
        return (request, response)
    }

    /// Maps a non-2xx response to its error.
    func validate<Response>(_ response: TransportResponse, to request: TransportRequest, endpoint: Endpoint<Response>)
        throws(RepositoryError)
    {
        guard !response.isSuccess else { return }
        let context = ErrorContext(request: request.summary, response: response)
        if response.statusCode == 401, endpoint.requiresSession { throw .unauthenticatedSession(context) }
        for mapping in [endpoint.customErrors, customErrors] where !mapping.isEmpty {
            let match = mapping.match(response, decoder: configuration.jsonDecoder) { rule, error in
                decoder.reportBodyFailure(error, typeName: rule.bodyTypeName ?? "error body", context: context)
            }
            if let match { throw .customError(name: match.name, error: match, context: context) }
        }
        if response.statusCode == 401 { throw .unauthenticatedSession(context) }
        throw .requestError(context)
    }

    func result<T>(_ body: () async throws(RepositoryError) -> T) async -> Result<T, RepositoryError> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
}

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
/// the session's `Authorization` < the configuration's ``NetworkingConfiguration/defaultHeaders``
/// — except a form's `Content-Type` (multipart or URL-encoded), which the defaults never replace.
///
/// Status handling: 2xx succeeds. A 401 to a request that needs a session is
/// ``RepositoryError/unauthenticatedSession(_:)`` and expires the session it was signed with
/// (unless a redirect led to another origin, or the call went to a host the session does not
/// sign for, so the credential was never sent: that 401 is
/// ``RepositoryError/authenticationFailed(_:)`` and leaves the session alone).
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
    ///   - configuration: where the API is and how to talk to it. When it is invalid (a setting
    ///     was changed to an invalid value), every request fails with its ``NetworkingConfiguration/validationError``.
    ///   - sessionManager: signs requests that need a session; without one, such requests are sent unsigned.
    ///   - transport: the wire; default ``DefaultTransport/shared`` (libcurl on Linux, URLSession elsewhere).
    ///   - interceptors: steps around the transport, each at its ``Interceptor/position``, after the
    ///     configuration's at the same position (see ``Interceptor`` for the whole chain).
    ///   - customErrors: custom errors for every call of this repository.
    public init(
        configuration: NetworkingConfiguration,
        sessionManager: (any SessionAuthorizing)? = nil,
        transport: (any Transport)? = nil,
        interceptors: [any Interceptor] = [],
        customErrors: CustomErrorMapping = []
    ) {
        let transport = transport ?? DefaultTransport.shared
        // The coders are classes shared by the configuration's copies: this repository keeps its own.
        var configuration = configuration
        configuration.jsonDecoder = configuration.jsonDecoder.copy()
        configuration.jsonEncoder = configuration.jsonEncoder.copy()
        self.configuration = configuration
        self.sessionManager = sessionManager
        self.transport = transport
        self.customErrors = customErrors
        pipeline = RequestPipeline(
            transport: transport,
            interceptors: Self.chain(configuration: configuration, session: sessionManager, interceptors: interceptors),
            secretFields: configuration.secretFields, defaultHeaders: configuration.defaultHeaders)
        builder = RequestBuilder(configuration: configuration)
        decoder = ResponseDecoder(configuration: configuration)
    }

    /// The whole chain, outermost first, as ``Interceptor`` documents it.
    private static func chain(
        configuration: NetworkingConfiguration, session: (any SessionAuthorizing)?, interceptors: [any Interceptor]
    ) -> [any Interceptor] {
        let given = configuration.interceptors + interceptors
        func placed(at position: InterceptorPosition) -> [any Interceptor] { given.filter { $0.position == position } }
        var chain = placed(at: .outsideRetries)
        // Always in the chain, for calls with a policy of their own; the pipeline passes over it
        // for a call sent once.
        chain.append(RetryInterceptor(policy: configuration.retryPolicy, clock: configuration.clock))
        chain += placed(at: .beforeSigning)
        if let session {
            chain.append(
                SessionInterceptor(
                    session: session, defaultHeadersAuthorize: configuration.defaultHeaders.contains("Authorization"),
                    hosts: configuration.credentialHosts,
                    httpsOnly: configuration.useSecureConnection))
        }
        chain += placed(at: .afterSigning)
        if let storage = configuration.cookieStorage { chain.append(CookieInterceptor(storage: storage)) }
        if configuration.logging.level > .off {
            chain.append(
                LoggingInterceptor(
                    configuration: configuration.logging, redaction: Redaction(secretFields: configuration.secretFields),
                    clock: configuration.clock))
        }
        return chain + placed(at: .nextToWire)
    }

    // MARK: - Requests

    /// Sends the endpoint and decodes the body (or the value at its key path) as `T`, or runs
    /// the endpoint's own ``Endpoint/decoding(_:)-((DecodingInput)->Response)`` step when it has one.
    public func performRequest<T: Decodable & Sendable>(_ endpoint: Endpoint<T>) async -> Result<T, RepositoryError> {
        await run(endpoint) { (endpoint) async throws(RepositoryError) -> T in
            try self.checkMapping(of: endpoint, decoding: T.self)
            let (request, response) = try await self.exchange(endpoint)
            return try self.decoded(endpoint, from: response, request: request.summary)
        }
    }

    /// Sends the endpoint and returns the model with its status, headers and URL.
    public func performRequest<T: Decodable & Sendable>(_ endpoint: Endpoint<RepositoryResponse<T>>) async
        -> Result<RepositoryResponse<T>, RepositoryError>
    {
        await run(endpoint) { (endpoint) async throws(RepositoryError) -> RepositoryResponse<T> in
            try self.checkMapping(of: endpoint, decoding: T.self)
            let (request, response) = try await self.exchange(endpoint)
            let value = try self.decoded(endpoint.valueEndpoint(), from: response, request: request.summary)
            return RepositoryResponse(value, of: response, to: request.summary)
        }
    }

    /// Sends the endpoint and returns what its own ``Endpoint/decoding(_:)-((DecodingInput)->Response)`` step makes of the
    /// response: for models that are not `Decodable`.
    ///
    /// An endpoint without a decoding step fails with ``RepositoryError/invalidRequest(reason:request:)``
    /// before anything is sent.
    public func performRequest<T: Sendable>(_ endpoint: Endpoint<T>) async -> Result<T, RepositoryError> {
        await run(endpoint) { (endpoint) async throws(RepositoryError) -> T in
            guard let custom = endpoint.customDecoding else {
                throw .invalidRequest(
                    reason: "\(T.self) is not Decodable, so the endpoint needs its own decoding step: add .decoding { … }",
                    request: try? self.builder.build(endpoint).summary)
            }
            try self.checkMapping(of: endpoint, decoding: T.self)
            let (request, response) = try await self.exchange(endpoint)
            return try self.mapped(
                try self.decoder.decode(with: custom, from: response, request: request.summary), endpoint: endpoint,
                response: response, request: request.summary)
        }
    }

    /// Sends the endpoint and ignores the body (empty or not), but for the endpoint's own
    /// ``Endpoint/decoding(_:)-((DecodingInput)->Response)`` step when it has one: a check of the body, whose failure is
    /// reported like a decoding failure.
    public func performRequest(_ endpoint: Endpoint<Void>) async -> Result<Void, RepositoryError> {
        await run(endpoint) { (endpoint) async throws(RepositoryError) in
            let (request, response) = try await self.exchange(endpoint)
            try self.checked(endpoint, response: response, request: request.summary)
        }
    }

    /// Sends the endpoint, ignores the body, and returns the status, headers and URL.
    public func performRequest(_ endpoint: Endpoint<RepositoryResponse<Void>>) async
        -> Result<RepositoryResponse<Void>, RepositoryError>
    {
        await run(endpoint) { (endpoint) async throws(RepositoryError) -> RepositoryResponse<Void> in
            let (request, response) = try await self.exchange(endpoint)
            try self.checked(endpoint.valueEndpoint(), response: response, request: request.summary)
            return RepositoryResponse((), of: response, to: request.summary)
        }
    }

    /// Sends the endpoint and returns the response as it came: status, headers and body bytes.
    /// The same as ``performRawRequest(_:)``; a raw response is never decoded from the body.
    public func performRequest(_ endpoint: Endpoint<TransportResponse>) async -> Result<TransportResponse, RepositoryError> {
        await performRawRequest(endpoint)
    }

    /// Sends the endpoint and returns the response as it came: status, headers and body bytes.
    /// A status outside 2xx is a failure as for any call (a `304` to your own `If-None-Match`,
    /// a `404`): the response is in its error's `context?.response`. An endpoint's own
    /// ``Endpoint/decoding(_:)-((DecodingInput)->Response)`` step, when it has one, makes the response returned.
    public func performRawRequest(_ endpoint: Endpoint<TransportResponse>) async -> Result<TransportResponse, RepositoryError> {
        await run(endpoint) { (endpoint) async throws(RepositoryError) -> TransportResponse in
            let (request, response) = try await self.exchange(endpoint)
            guard let custom = endpoint.customDecoding else { return response }
            return try self.decoder.decode(with: custom, from: response, request: request.summary)
        }
    }

    /// Sends an endpoint that needs no session, such as login or sign-up, and decodes the body as `T`.
    public func performAuthenticationRequest<T: Decodable & Sendable>(_ endpoint: Endpoint<T>) async -> Result<T, RepositoryError> {
        await performRequest(endpoint.withoutSession())
    }

    /// Sends an endpoint that needs no session and ignores the body.
    public func performAuthenticationRequest(_ endpoint: Endpoint<Void>) async -> Result<Void, RepositoryError> {
        await performRequest(endpoint.withoutSession())
    }

    /// The cookies the configuration's ``NetworkingConfiguration/cookieStorage`` would send with a
    /// request to `path` (under the base URL, or absolute): WebApiClient's `cookiesForAPI`.
    /// Empty when the configuration keeps no cookies or the path forms no URL.
    public func cookies(forPath path: String) -> [Cookie] {
        guard let storage = configuration.cookieStorage, let url = try? builder.url(for: path) else { return [] }
        return storage.cookies(for: url)
    }

    // MARK: - Steps

    /// Builds, sends and validates one request; returns it with its 2xx response. `call` is the
    /// context of a call that makes more than one exchange (``callContext(for:)``).
    func exchange<Response>(_ endpoint: Endpoint<Response>, in call: RequestContext? = nil)
        async throws(RepositoryError) -> (TransportRequest, TransportResponse)
    {
        if Task.isCancelled {
            // Still named: the request is built (never sent) so the error says which call it was.
            throw .cancelled((try? builder.build(endpoint)).map { ErrorContext(request: $0.summary, attempts: 0) })
        }
        let built = try builder.build(endpoint)
        if let problem = pipeline.unhandledOption(in: endpoint.options, name: endpoint.name) {
            throw .invalidRequest(reason: problem, request: built.summary)
        }
        let (request, staged) = try await BodyDigester.prepare(built, digests: endpoint.contentDigests)
        defer { if let staged { try? FileManager.default.removeItem(at: staged) } }
        var context = call ?? callContext(for: endpoint)
        // Each request of a call of several (polls, a download's parts) starts at attempt 1; what
        // the call sent before stays counted.
        context.record.beginRequest()
        // The library's to set: a value an endpoint or a caller gave is not a staged file.
        if let staged {
            context.options[StagedBodyFileKey.self] = staged
        } else if context.options.contains(StagedBodyFileKey.self) {
            context.options.remove(StagedBodyFileKey.self)
        }
        do {
            var response = try await pipeline.send(request, context: context)
            response.attempts = context.attempt
            try validate(response, to: request, endpoint: endpoint)
            return (request, response)
        } catch {
            throw error.attempted(context.attempt, sent: context.record.sent)
        }
    }

    /// A new call's context for the endpoint. A call made of several exchanges (a download that
    /// starts over) passes one context to each, so every exchange keeps to the session it was
    /// first signed in.
    func callContext<Response>(for endpoint: Endpoint<Response>) -> RequestContext {
        RequestContext(
            requiresSession: endpoint.requiresSession, name: endpoint.name, options: endpoint.options,
            session: sessionManager, record: endpoint.options[CallRecordOption.self] ?? CallRecord())
    }

    /// Decodes a 2xx response for the endpoint: its own decoding step, or the body as `T`; then
    /// the route's mapping step, when it has one.
    func decoded<T: Decodable>(_ endpoint: Endpoint<T>, from response: TransportResponse, request: RequestSummary)
        throws(RepositoryError) -> T
    {
        let value = try decoder.decode(
            T.self, from: response, request: request, keyPath: endpoint.keyPath, custom: endpoint.customDecoding)
        return try mapped(value, endpoint: endpoint, response: response, request: request)
    }

    /// Refuses, before anything is sent, a call whose route has a mapping step for another type
    /// than the call decodes: a write would be done by the server and then reported as failed.
    func checkMapping<Response, T>(of endpoint: Endpoint<Response>, decoding type: T.Type) throws(RepositoryError) {
        guard let mapping = endpoint.routeMapping, mapping.valueType != T.self else { return }
        throw .invalidRequest(
            reason: "route \"\(endpoint.name ?? "?")\" has a mapping step for \(mapping.typeName), but the call decodes \(T.self)",
            request: try? builder.build(endpoint).summary)
    }

    /// Runs the endpoint's decoding step, when it has one, as a check of the body.
    func checked(_ endpoint: Endpoint<Void>, response: TransportResponse, request: RequestSummary) throws(RepositoryError) {
        guard let custom = endpoint.customDecoding else { return }
        try decoder.decode(with: custom, from: response, request: request)
    }

    /// The value after the route's mapping step (WebApiClient's mapping blocks), whose failures
    /// are reported like decoding failures.
    func mapped<T, Response>(_ value: T, endpoint: Endpoint<Response>, response: TransportResponse, request: RequestSummary)
        throws(RepositoryError) -> T
    {
        guard let mapping = endpoint.routeMapping else { return value }
        // Every caller checked before sending; a mapping that cannot run is never skipped.
        try checkMapping(of: endpoint, decoding: T.self)
        let route = endpoint.name ?? "?"
        return try decoder.decode(
            with: { _ throws -> T in
                do {
                    return try mapping.apply(value) as? T ?? value
                } catch let error as DecodingError {
                    throw error
                } catch {
                    throw MappingFailure(route: route, underlying: error)
                }
            }, from: response, request: request, reasonPrefix: "the mapping step of route \"\(route)\" failed: ")
    }

    /// Resolves the endpoint's route, counts the call as activity, and runs it.
    func run<Response, T>(
        _ endpoint: Endpoint<Response>, _ body: (Endpoint<Response>) async throws(RepositoryError) -> T
    ) async -> Result<T, RepositoryError> {
        let resolved: Endpoint<Response>
        do {
            resolved = try configuration.routes.resolve(endpoint, in: configuration)
        } catch {
            return .failure(error)
        }
        if resolved.savesToFile, Response.self != DownloadedFile.self {
            return .failure(
                .invalidRequest(
                    reason: "route \"\(resolved.name ?? "")\" saves its answer to a file: call it as an Endpoint<DownloadedFile>",
                    request: try? builder.build(resolved).summary))
        }
        let activity = configuration.activity
        let call = ActivityEvent.Call(
            id: CallIdentifier.next(), name: resolved.name, preventsUserInteraction: resolved.preventsUserInteraction)
        activity.begin(call)
        defer { activity.end(call) }
        var slowTimer: Task<Void, Never>?
        if call.preventsUserInteraction {
            let clock = configuration.clock
            slowTimer = Task {
                guard (try? await clock.sleep(.clampedSeconds(activity.slowCallDelay))) != nil else { return }
                activity.slow(call)
            }
        }
        defer { slowTimer?.cancel() }
        do {
            return .success(try await body(resolved))
        } catch {
            return .failure(error)
        }
    }

    /// Maps a non-2xx response to its error.
    func validate<Response>(_ response: TransportResponse, to request: TransportRequest, endpoint: Endpoint<Response>)
        throws(RepositoryError)
    {
        guard !response.isSuccess else { return }
        let context = ErrorContext(request: request.summary, response: response)
        if response.statusCode == 401, endpoint.requiresSession, response.isFromOrigin(of: request.url), reachesSession(request.url) {
            throw .unauthenticatedSession(context)
        }
        // The body's API code is read once, for the call's mapping and the repository's, where
        // both key paths are the same.
        var codes: [String: String?] = [:]
        for mapping in [endpoint.customErrors, customErrors] where !mapping.isEmpty {
            var bodyCode: String?
            if mapping.needsAPICode(for: response.statusCode) {
                if let known = codes[mapping.apiCodeKeyPath] {
                    bodyCode = known
                } else {
                    bodyCode = mapping.apiCode(in: response)
                    codes[mapping.apiCodeKeyPath] = .some(bodyCode)
                }
            }
            let match = mapping.match(response, bodyCode: bodyCode, decoder: decoder.bodyDecoder) { rule, error in
                // A HEAD's answer never has a body: a rule that decodes one cannot match it.
                guard request.method != .head || !response.body.isEmpty else { return }
                decoder.reportBodyFailure(error, typeName: rule.bodyTypeName ?? "error body", context: context)
            }
            if let match { throw .customError(name: match.name, error: match, context: context) }
        }
        if response.statusCode == 401 { throw .authenticationFailed(context) }
        throw .requestError(context)
    }
}

extension AbstractRepository {
    /// Whether the session's credential goes to `url`'s host (the API's, or one of
    /// ``NetworkingConfiguration/sessionHosts``), as the session step decides; without a session
    /// manager, every host counts. A 401 from a host the credential never went to says nothing
    /// about the session.
    func reachesSession(_ url: URL) -> Bool {
        sessionManager == nil || configuration.credentialHosts.contains(NetworkingConfiguration.comparableHost(url.host ?? ""))
    }
}

/// A route's mapping step threw.
struct MappingFailure: Error, CustomStringConvertible {
    let route: String
    let underlying: any Error

    var description: String { "the mapping step of route \"\(route)\" failed: \(underlying)" }
}

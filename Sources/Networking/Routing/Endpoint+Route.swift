import Foundation

/// What an endpoint made from a route refers to, until the configuration's ``RouteTable`` resolves it.
enum RouteReference: Sendable {
    /// A named route and its path variables.
    case named(String, variables: Parameters?)
    /// The object route of an object's type for a method; the object fills the placeholders.
    case object(any Sendable, method: HTTPMethod, variables: Parameters)
}

extension Endpoint {
    /// A call of the named route of the configuration's ``NetworkingConfiguration/routes``.
    ///
    /// ```swift
    /// func book(id: Int) async -> Result<Book, RepositoryError> {
    ///     await performRequest(.route("book", pathVariables: ["id": id]))
    /// }
    /// ```
    ///
    /// The route gives the method, the path, its headers (these `headers` win over them), how
    /// parameters are sent, the body's root key, the response key path, whether a session is
    /// needed and the timeout. An unknown name, or a path variable that is missing or cannot be
    /// one segment (empty, `.` or `..`), fails the call with
    /// ``RepositoryError/invalidRequest(reason:request:)`` naming it; nothing is sent.
    ///
    /// - Parameters:
    ///   - name: the route's name.
    ///   - pathVariables: the placeholders' values: a dictionary, or `Parameters(value)` of an
    ///     `Encodable` value whose JSON form holds them (a dotted placeholder such as `post.id` is
    ///     a key of its own when there is one, else walks into nested values).
    ///   - parameters: the parameters, sent as the route's serialization says.
    ///   - query: query items sent whatever the serialization.
    ///   - headers: header fields for this call; they win over the route's.
    public static func route(
        _ name: String, pathVariables: Parameters? = nil, parameters: Parameters? = nil, query: Parameters? = nil,
        headers: HTTPHeaders = [:]
    ) -> Endpoint {
        var endpoint = Endpoint(.get, "", parameters: parameters, query: query, headers: headers)
        endpoint.route = .named(name, variables: pathVariables)
        endpoint.name = name
        return endpoint
    }

    /// A call of the named route whose body is an `Encodable` value (wrapped in the route's
    /// request root key, when it has one); see ``route(_:pathVariables:parameters:query:headers:)-(_,_,_,_,HTTPHeaders)``.
    public static func route(
        _ name: String, pathVariables: Parameters? = nil, body: some Encodable & Sendable, query: Parameters? = nil,
        headers: HTTPHeaders = [:]
    ) -> Endpoint {
        route(name, pathVariables: pathVariables, parameters: Parameters(body), query: query, headers: headers)
    }

    /// A call of a named route whose path variables are a dictionary variable; see
    /// ``route(_:pathVariables:parameters:query:headers:)-(_,_,_,_,HTTPHeaders)``.
    @_disfavoredOverload
    public static func route<Value: Sendable>(
        _ name: String, pathVariables: [String: Value]?, parameters: Parameters? = nil, query: Parameters? = nil,
        headers: some HTTPHeadersConvertible = HTTPHeaders()
    ) -> Endpoint {
        route(
            name, pathVariables: pathVariables.map { Parameters(dictionary: $0) }, parameters: parameters, query: query,
            headers: headers.httpHeaders)
    }

    /// A call of a named route whose parameters are a dictionary variable; see
    /// ``route(_:pathVariables:parameters:query:headers:)-(_,_,_,_,HTTPHeaders)``.
    @_disfavoredOverload
    public static func route<Value: Sendable>(
        _ name: String, pathVariables: Parameters? = nil, parameters: [String: Value]?, query: Parameters? = nil,
        headers: some HTTPHeadersConvertible = HTTPHeaders()
    ) -> Endpoint {
        route(
            name, pathVariables: pathVariables, parameters: parameters.map { Parameters(dictionary: $0) }, query: query,
            headers: headers.httpHeaders)
    }

    /// A call of a named route whose headers are a dictionary variable; see
    /// ``route(_:pathVariables:parameters:query:headers:)-(_,_,_,_,HTTPHeaders)``.
    @_disfavoredOverload
    public static func route(
        _ name: String, pathVariables: Parameters? = nil, parameters: Parameters? = nil, query: Parameters? = nil,
        headers: [String: String]
    ) -> Endpoint {
        route(name, pathVariables: pathVariables, parameters: parameters, query: query, headers: HTTPHeaders(headers))
    }

    /// A call of the object route registered for `object`'s type and `method`
    /// (``RouteTable/register(_:methods:path:name:requestRootKey:responseKeyPath:requiresSession:)``):
    /// the object's JSON form fills the path's placeholders, and is the body of `POST`, `PUT`
    /// and `PATCH` calls.
    public static func object(_ object: some Encodable & Sendable, method: HTTPMethod) -> Endpoint {
        let variables = Parameters(object)
        let carriesBody = method == .post || method == .put || method == .patch
        var endpoint = Endpoint(method, "", parameters: carriesBody ? variables : nil)
        endpoint.route = .object(object, method: method, variables: variables)
        return endpoint
    }
}

extension RouteTable {
    /// The endpoint with its route applied: a plain endpoint with a rendered, encoded path.
    /// Endpoints made without a route come back as they are.
    ///
    /// - Throws: ``RepositoryError/invalidRequest(reason:request:)`` for an unknown route, an
    ///   object without a route, or a path variable that is missing, empty, not a value, or `.` or
    ///   `..` in a path segment.
    func resolve<Response>(_ endpoint: Endpoint<Response>, in configuration: NetworkingConfiguration) throws(RepositoryError)
        -> Endpoint<Response>
    {
        guard let reference = endpoint.route else { return endpoint }
        let route: Route
        let variables: Parameters?
        switch reference {
        case .named(let name, let given):
            guard let named = routes[name] else {
                let names = self.names
                let known =
                    names.isEmpty
                    ? "the configuration has no routes"
                    : "known routes: \(names.prefix(20).joined(separator: ", "))\(names.count > 20 ? " and \(names.count - 20) more" : "")"
                throw .invalidRequest(reason: "no route is named \"\(name)\" (\(known))", request: nil)
            }
            (route, variables) = (named, given)
        case .object(let object, let method, let given):
            (route, variables) = (try objectRoute(for: object, method: method), given)
        }
        let values: JSONValue
        do {
            // Only ever text in the path: a Decimal or a large integer keeps every digit.
            values = try variables?.json(encoder: configuration.jsonEncoder, keepingDigits: true) ?? .object([:])
        } catch {
            throw .invalidRequest(reason: "route \"\(route.name)\": the path variables cannot be encoded: \(error.reason)", request: nil)
        }
        var resolved = endpoint
        do {
            resolved.path = try route.path.render(values)
            // Only a template that starts with a scheme, or with `:baseURL`, goes to another host:
            // text made to look like one (an OpenAPI path "/https://other.example/x", an escaped
            // `https\://`) stays under the base URL.
            if !route.path.namesItsServer, RequestBuilder.isAbsolute(resolved.path) {
                resolved.path = "/" + resolved.path
            }
        } catch {
            let shown = Redaction(secretFields: configuration.secretFields).unparsedURLText(route.path.text)
            throw .invalidRequest(reason: "route \"\(route.name)\" (\(shown)): \(error.reason)", request: nil)
        }
        resolved.route = nil
        resolved.pathIsEncoded = true
        resolved.method = route.method
        resolved.name = route.name
        // The call's fields replace the route's of the same name, each kept as given: a repeated
        // field stays repeated, as on a call without a route.
        resolved.headers = route.headers
        for name in endpoint.headers.names { resolved.headers[name] = nil }
        for field in endpoint.headers { resolved.headers.add(name: field.name, value: field.value) }
        // A raw route called without a body (a GET, say) sends none, so it names no content type.
        if let contentType = route.contentType, route.serialization != .raw || resolved.requestBody != nil {
            resolved.headers.setIfAbsent("Content-Type", contentType)
        }
        resolved.encoding = endpoint.encoding ?? route.serialization.flatMap { Self.encoding(of: $0, method: route.method) }
        resolved.keyPath = endpoint.keyPath ?? route.responseKeyPath
        resolved.requestRootKey = endpoint.requestRootKey ?? route.requestRootKey
        resolved.requiresSession = route.requiresSession && endpoint.requiresSession
        resolved.timeout = endpoint.timeout ?? route.timeout
        resolved.idleTimeout = endpoint.idleTimeout ?? route.idleTimeout
        resolved.routeMapping = route.mapping
        resolved.preventsUserInteraction = route.preventUserInteraction
        resolved.gzipsBody = endpoint.gzipsBody || route.gzip
        resolved.savesToFile = route.saveAsResource
        if route.cacheTTL != nil || !route.invalidatesCachedRouteNames.isEmpty || route.cacheIgnoreQueryParameters {
            let settings = RouteCacheSettings(
                timeToLive: route.cacheTTL, invalidatesRouteNames: route.invalidatesCachedRouteNames,
                ignoresQueryParameters: route.cacheIgnoreQueryParameters)
            // A time to live of 0 alone says "not cached" (WebApiClient caches above 0 only): a
            // cache wherever it is in the chain is told, and a call without one goes.
            let notCached = route.cacheTTL == 0 && route.invalidatesCachedRouteNames.isEmpty && !route.cacheIgnoreQueryParameters
            resolved.options.set(RouteCacheSettingsKey.self, settings, required: !notCached)
        }
        if route.offline { resolved.options[OfflineQueueingKey.self] = true }
        if resolved.retryPolicy == nil, var policy = route.retryPolicy {
            if policy.randomFromConfiguration { policy.random = configuration.retryPolicy.random }
            resolved.retryPolicy = policy
        }
        if route.serialization == .raw, resolved.requestBody == nil, !Self.sendsParametersInQuery(route.method) {
            throw .invalidRequest(
                reason: "route \"\(route.name)\" sends a raw body: give it with .uploading(RequestBody.file(…)) or .uploading(.data(…))",
                request: nil)
        }
        return resolved
    }

    /// Where a serialization puts parameters, for a method.
    private static func encoding(of serialization: RouteSerialization, method: HTTPMethod) -> ParameterEncoding? {
        // GET and HEAD carry no body: their parameters go in the query, whatever the serialization.
        if method == .get || method == .head { return .query }
        switch serialization {
        case .json: return .json
        case .query: return .query
        case .form: return .form
        case .url: return sendsParametersInQuery(method) ? .query : .form
        case .multipart: return .multipart
        case .raw: return sendsParametersInQuery(method) ? .query : nil
        }
    }

    /// Whether a URL-encoded call, or a raw route called without a body, sends its parameters in
    /// the query: GET, HEAD and DELETE (AFNetworking's rule).
    private static func sendsParametersInQuery(_ method: HTTPMethod) -> Bool {
        method == .get || method == .head || method == .delete
    }
}

import Foundation

/// A named call of an API, described once — in code or in a JSON route file — and made by name
/// with its path variables: WebApiClient's routes and WANetworkRouting's object routes.
///
/// ```swift
/// var routes = RouteTable.empty
/// try routes.add(Route(name: "book", method: .get, path: "books/:id", responseKeyPath: "data"))
/// configuration.routes = routes
/// // in a repository: await performRequest(.route("book", pathVariables: ["id": 12]))
/// ```
///
/// See ``RouteTable`` for the JSON file format and the OpenAPI loader.
public struct Route: Sendable {
    /// The name calls use.
    public var name: String
    /// The request method.
    public var method: HTTPMethod
    /// The path under the configuration's base URL (or an absolute URL), with placeholders.
    public var path: PathTemplate
    /// Header fields of every call of the route; a call's own headers win over them.
    public var headers: HTTPHeaders
    /// How parameters and bodies are sent; `nil` lets the method decide, as for any endpoint.
    public var serialization: RouteSerialization?
    /// The body's `Content-Type` when it is not the serialization's own.
    public var contentType: String?
    /// A dotted key path the request body is wrapped in: `"user"` sends `{"user": {…}}`.
    public var requestRootKey: String?
    /// A dotted key path at which the model sits in the response body (`"data"`, `"data.items"`).
    public var responseKeyPath: String?
    /// Whether calls need a logged-in session. Default `true`.
    public var requiresSession: Bool
    /// A timeout for the route's calls, overriding the configuration's; `.infinity` for no limit
    /// (a stream that never ends; a file's transfer has none by default).
    public var timeout: TimeInterval?
    /// How long the route's calls may go without a byte either way before they fail with
    /// `.timeout`, whatever their timeout (see ``Endpoint/idleTimeout``); `.infinity` turns it
    /// off (a long poll); `nil` leaves it to the configuration's
    /// ``NetworkingConfiguration/idleTimeout``.
    public var idleTimeout: TimeInterval?
    /// Whether the app should keep the user from interacting while a call runs (WebApiClient's
    /// overlay): calls are reported on ``NetworkActivity/events()`` as blocking, with a `slow`
    /// event when one runs longer than ``NetworkActivity/slowCallDelay``.
    public var preventUserInteraction: Bool
    /// Compress request bodies with gzip (`Content-Encoding: gzip`).
    public var gzip: Bool
    /// Save the response body to a file instead of keeping it in memory.
    public var saveAsResource: Bool
    /// How long a successful answer may be served from the response cache, in seconds.
    public var cacheTTL: TimeInterval?
    /// Routes whose cached answers a successful call of this route makes stale.
    public var invalidatesCachedRouteNames: [String]
    /// Whether the cache ignores the query when it keys answers.
    public var cacheIgnoreQueryParameters: Bool
    /// Whether a call that fails for the network is kept in the offline queue and sent later.
    public var offline: Bool
    /// The route's own retry policy (its `retry` key), replacing the configuration's whole for its
    /// calls; `nil` for the configuration's. A call's own ``Endpoint/retrying(_:)`` wins. One
    /// from a route file's `retry` object takes its jitter (`random`) from the configuration's
    /// ``NetworkingConfiguration/retryPolicy`` when a call is made, also after a change to its
    /// other properties in code; a policy created in code, or one whose `random` is set, keeps
    /// its own.
    public var retryPolicy: RetryPolicy?

    /// A step after decoding (WebApiClient's mapping blocks), set with ``RouteTable/setMapping(forRoute:_:)``.
    var mapping: RouteMapping?

    /// Creates a route; every argument after `path` has the documented default.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` for an empty name, an invalid
    ///   path template, a timeout or idle timeout that is not positive, a negative cache TTL, a retry policy that
    ///   cannot be used, or a header that cannot be sent.
    public init(
        name: String, method: HTTPMethod = .get, path: String, headers: HTTPHeaders = [:],
        serialization: RouteSerialization? = nil, contentType: String? = nil, requestRootKey: String? = nil,
        responseKeyPath: String? = nil, requiresSession: Bool = true, timeout: TimeInterval? = nil,
        idleTimeout: TimeInterval? = nil, preventUserInteraction: Bool = false, gzip: Bool = false, saveAsResource: Bool = false,
        cacheTTL: TimeInterval? = nil, invalidatesCachedRouteNames: [String] = [],
        cacheIgnoreQueryParameters: Bool = false, offline: Bool = false, retryPolicy: RetryPolicy? = nil
    ) throws(RepositoryError) {
        guard !name.isEmpty else { throw .invalidConfiguration(reason: "a route needs a name") }
        self.name = name
        self.method = method
        do {
            self.path = try PathTemplate(path)
        } catch {
            throw .invalidConfiguration(reason: "route \"\(name)\": \(error.configurationReason)")
        }
        self.headers = headers
        self.serialization = serialization
        self.contentType = contentType
        self.requestRootKey = requestRootKey
        self.responseKeyPath = responseKeyPath
        self.requiresSession = requiresSession
        self.timeout = timeout
        self.idleTimeout = idleTimeout
        self.preventUserInteraction = preventUserInteraction
        self.gzip = gzip
        self.saveAsResource = saveAsResource
        self.cacheTTL = cacheTTL
        self.invalidatesCachedRouteNames = invalidatesCachedRouteNames
        self.cacheIgnoreQueryParameters = cacheIgnoreQueryParameters
        self.offline = offline
        self.retryPolicy = retryPolicy
        if let problem = problem { throw .invalidConfiguration(reason: "route \"\(name)\": \(problem)") }
    }

    /// What keeps the route from being used, or `nil`: values out of range. (Options whose feature
    /// lives in another product — the cache, the offline queue — are checked when a call is made:
    /// without that product's interceptor the call fails rather than silently ignoring them.)
    var problem: String? {
        if name.isEmpty { return "a route needs a name" }
        if !method.isValidToken {
            return "the method \"\(method.rawValue)\" is not valid: a token without spaces, line breaks or separators"
        }
        if let timeout, !(timeout > 0) { return "timeout must be a positive number of seconds, not \(timeout)" }
        if let idleTimeout, !(idleTimeout > 0) {
            return "idleTimeout must be a positive number of seconds, not \(idleTimeout)"
        }
        if let cacheTTL, !(cacheTTL >= 0) { return "cacheTTL must be zero or a positive number of seconds, not \(cacheTTL)" }
        if let problem = retryPolicy?.problem { return "retryPolicy: \(problem)" }
        if let problem = HeaderValidation.problem(in: headers) { return "headers: \(problem)" }
        if let contentType, let problem = HeaderValidation.problem(in: ["Content-Type": contentType]) {
            return "contentType: \(problem)"
        }
        return nil
    }
}

/// How a route sends its parameters and body. `GET` and `HEAD` carry no body: their parameters
/// go in the query whatever the serialization.
public enum RouteSerialization: String, Sendable, Hashable, CaseIterable {
    /// A JSON body (parameters in the query for methods that carry no body).
    case json
    /// The parameters in the URL's query.
    case query
    /// AFNetworking's URL serialization: the query for `GET`, `HEAD` and `DELETE`, an
    /// `application/x-www-form-urlencoded` body otherwise.
    case url
    /// An `application/x-www-form-urlencoded` body.
    case form
    /// A `multipart/form-data` body: parameters as fields, plus files.
    case multipart
    /// The body as given, with the route's ``Route/contentType``. Called without one, a `GET`,
    /// `HEAD` or `DELETE` sends its parameters in the query (WebApiClient's `none`); another
    /// method fails, as it would send no body.
    case raw
}

/// A route's step after decoding, kept with the type it applies to.
struct RouteMapping: Sendable {
    let valueType: Any.Type
    let typeName: String
    let apply: @Sendable (Any) throws -> Any
}

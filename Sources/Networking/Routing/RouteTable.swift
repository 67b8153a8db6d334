import Foundation

/// The routes of an API: named routes (``Route``), and object routes that find a path from an
/// object's type and a method (WANetworkRouting's router). A configuration holds one
/// (``NetworkingConfiguration/routes``); every repository made with it calls its routes.
///
/// Build it in code, from a JSON route file (``init(contentsOf:keyPath:)``), or from an OpenAPI
/// document (``init(openAPI:source:includingBasePath:)``):
///
/// ```json
/// {
///   "book":       { "method": "GET",  "path": "books/:id", "responseKeyPath": "data" },
///   "createBook": { "method": "POST", "path": "books", "requestRootKey": "book", "serialization": "json" },
///   "login":      { "method": "POST", "path": "auth/login", "requiresSession": false, "preventUserInteraction": true }
/// }
/// ```
///
/// Each route's keys (WebApiClient's names are accepted too, in parentheses):
/// `method` (default `GET`), `path` (required), `headers` (`requestHeaders`), `serialization`
/// (`"json"`, `"query"`, `"url"`, `"form"`, `"multipart"`, `"raw"`, or WebApiClient's numbers 0–3 =
/// json, url, multipart, raw) or `serializationName` (WebApiClient's `"json"`, `"url"`, `"form"` =
/// multipart, `"none"` = raw; WebApiClient's JSON, `0` or `"json"`, sends a `DELETE`'s parameters
/// in the query, as AFNetworking did), `contentType`, `requestRootKey` (`dataMapperRequestRootKeyPath`),
/// `responseKeyPath` (`dataMapperResponseRootKeyPath`), `requiresSession`, `timeout` and
/// `idleTimeout` (seconds, or `false` for no limit),
/// `preventUserInteraction`, `gzip`, `saveAsResource`, `cacheTTL`, `invalidatesCachedRouteNames`,
/// `cacheIgnoreQueryParameters`, `offline`, `retry` (`false`, or an object of ``RetryPolicy``'s
/// settings), and `name` (equal to the route's key when given).
/// Unknown keys, wrong types and malformed JSON (with its line and column) are refused when the
/// file is loaded. Every key above loads; the options of features in other products (the cache's
/// and the offline queue's keys) travel with the call as options that must be handled, and a call
/// through a chain where no interceptor handles them (see ``Interceptor/handledOptions``) fails
/// with ``RepositoryError/invalidRequest(reason:request:)`` naming the product to add.
public struct RouteTable: Sendable {
    /// The named routes.
    public private(set) var routes: [String: Route] = [:]
    /// The object routes, in the order registered.
    private(set) var objectRoutes: [ObjectRoute] = []

    /// An empty table, or one with these routes.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` when two routes share a name.
    public init(_ routes: [Route] = []) throws(RepositoryError) {
        for route in routes { try add(route) }
    }

    /// A table without routes.
    public static let empty = RouteTable(routes: [:], objectRoutes: [])

    private init(routes: [String: Route], objectRoutes: [ObjectRoute]) {
        self.routes = routes
        self.objectRoutes = objectRoutes
    }

    /// The route with this name.
    public subscript(name: String) -> Route? { routes[name] }

    /// The names of every named route, sorted.
    public var names: [String] { routes.keys.sorted() }

    /// Adds a named route.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` when a route has this name
    ///   already, or was changed since it was made into one that cannot be used (a timeout or idle
    ///   timeout that is not positive, an unusable retry policy: what ``Route/init(name:method:path:headers:serialization:contentType:requestRootKey:responseKeyPath:requiresSession:timeout:idleTimeout:preventUserInteraction:gzip:saveAsResource:cacheTTL:invalidatesCachedRouteNames:cacheIgnoreQueryParameters:offline:retryPolicy:)`` refuses).
    public mutating func add(_ route: Route) throws(RepositoryError) {
        guard routes[route.name] == nil else {
            throw .invalidConfiguration(reason: "two routes are named \"\(route.name)\"")
        }
        if let problem = route.problem { throw .invalidConfiguration(reason: "route \"\(route.name)\": \(problem)") }
        routes[route.name] = route
    }

    /// Adds every route of `other`.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` when a name is in both tables.
    public mutating func merge(_ other: RouteTable) throws(RepositoryError) {
        var merged = self
        for name in other.names { if let route = other[name] { try merged.add(route) } }
        for objectRoute in other.objectRoutes {
            if merged.objectRoutes.contains(where: { $0.typeID == objectRoute.typeID && $0.route.method == objectRoute.route.method }) {
                throw .invalidConfiguration(reason: "both tables have a route for \(objectRoute.typeName) and \(objectRoute.route.method)")
            }
            merged.objectRoutes.append(objectRoute)
        }
        self = merged
    }

    /// Gives the route a step after decoding (WebApiClient's mapping blocks): for example wiring
    /// children to their parent, or filling in what the API leaves out. It runs when a call of the
    /// route decodes `T`; a call of the route that decodes another type (`T?` included) fails
    /// with ``RepositoryError/invalidRequest(reason:request:)``, before anything is sent when the
    /// call is sent by itself (in a batch, as its answer is read). A mapping that cannot run is
    /// never skipped. What the mapping throws is reported as
    /// ``RepositoryError/decodeError(_:)``, to the decode-error hook too.
    ///
    /// An object route takes one by its name (`"Book GET"`, see
    /// ``register(_:methods:path:name:requestRootKey:responseKeyPath:requiresSession:)``) when
    /// no named route has that name: its calls (``AbstractRepository/getObject(_:)``, …) run it.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` when no route has this name, or
    ///   only several object routes do.
    public mutating func setMapping<T: Sendable>(
        forRoute name: String, _ transform: @escaping @Sendable (T) throws -> T
    ) throws(RepositoryError) {
        let mapping = RouteMapping(
            valueType: T.self, typeName: String(describing: T.self),
            apply: { value in
                guard let typed = value as? T else { return value }
                return try transform(typed)
            })
        if routes[name] != nil {
            routes[name]?.mapping = mapping
            return
        }
        let named = objectRoutes.indices.filter { objectRoutes[$0].route.name == name }
        guard let index = named.first else { throw .invalidConfiguration(reason: "no route is named \"\(name)\"") }
        guard named.count == 1 else {
            let types = named.map { objectRoutes[$0].typeName }.joined(separator: ", ")
            throw .invalidConfiguration(
                reason: "\(named.count) object routes are named \"\(name)\" (for \(types)): give them names of their own")
        }
        objectRoutes[index].route.mapping = mapping
    }

    // MARK: - Object routes

    /// Registers the path of `type`'s objects for `methods`: then ``AbstractRepository/getObject(_:)``,
    /// ``AbstractRepository/postObject(_:)``, ``AbstractRepository/putObject(_:)``,
    /// ``AbstractRepository/patchObject(_:)`` and ``AbstractRepository/deleteObject(_:)`` find it from
    /// the object, whose `Encodable` form fills the placeholders (`books/:id`).
    ///
    /// Objects of subclasses and of types conforming to a registered protocol are found too; the
    /// closest registered class wins (the object's own type, then its superclass, …), and several
    /// protocols matching with no class route is ambiguous. The routes are named
    /// `"<Type> <METHOD>"`, or `name` when it is given for one method (`"<name> <METHOD>"` for
    /// several).
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` for an invalid path, or a
    ///   method registered twice for the same type.
    public mutating func register<T>(
        _ type: T.Type, methods: Set<HTTPMethod>, path: String, name: String? = nil, requestRootKey: String? = nil,
        responseKeyPath: String? = nil, requiresSession: Bool = true
    ) throws(RepositoryError) {
        let typeName = String(describing: type)
        var added: [ObjectRoute] = []
        for method in methods.sorted(by: { $0.rawValue < $1.rawValue }) {
            if objectRoutes.contains(where: { $0.typeID == ObjectIdentifier(type) && $0.route.method == method }) {
                throw .invalidConfiguration(reason: "\(typeName) has two routes for \(method)")
            }
            let route = try Route(
                name: name.map { methods.count > 1 ? "\($0) \(method)" : $0 } ?? "\(typeName) \(method)", method: method,
                path: path, requestRootKey: requestRootKey, responseKeyPath: responseKeyPath, requiresSession: requiresSession)
            added.append(
                ObjectRoute(
                    typeName: typeName, typeID: ObjectIdentifier(type), matches: { $0 is T }, acceptsType: { $0 is T.Type },
                    offersType: { $0(T.self) }, route: route))
        }
        // All or nothing: a refused registration changes nothing.
        objectRoutes += added
    }

    /// The object route for `object` and `method`.
    ///
    /// - Throws: ``RepositoryError/invalidRequest(reason:request:)`` naming the type and method
    ///   when no route or several routes match.
    func objectRoute(for given: Any, method: HTTPMethod) throws(RepositoryError) -> Route {
        // An optional's route is its value's (`Book?` is a `Book`); `nil` has none.
        var object = given
        while let optional = object as? any OptionalObject {
            guard let wrapped = optional.wrappedObject else {
                throw .invalidRequest(reason: "the object to \(method) is nil (an \(type(of: given)))", request: nil)
            }
            object = wrapped
        }
        let objectType = type(of: object)
        let candidates = objectRoutes.filter { $0.route.method == method && $0.matches(object) }
        // The closest class wins: of the routes for the object's own type and its superclasses
        // (a protocol's metatype never accepts a concrete type), the one every other accepts.
        // Decided by the type system, not by reflection, which a custom mirror can change.
        let classes = candidates.filter { $0.acceptsType(objectType) }
        if let closest = classes.first(where: { candidate in classes.allSatisfy { candidate.offersType($0.acceptsType) } }) {
            return closest.route
        }
        switch candidates.count {
        case 1: return candidates[0].route
        case 0:
            throw .invalidRequest(
                reason:
                    "no object route for \(objectType) and \(method): register one with routes.register(\(objectType).self, methods: [.\(method.rawValue.lowercased())], path: …)",
                request: nil)
        default:
            throw .invalidRequest(
                reason:
                    "\(candidates.count) object routes match \(objectType) and \(method) (\(candidates.map(\.typeName).joined(separator: ", "))): register \(objectType) itself to choose",
                request: nil)
        }
    }
}

/// An object route: a type (or protocol) and one method, and the route it maps to.
struct ObjectRoute: Sendable {
    let typeName: String
    let typeID: ObjectIdentifier
    let matches: @Sendable (Any) -> Bool
    /// Whether a type is the route's type or a subclass of it.
    let acceptsType: @Sendable (Any.Type) -> Bool
    /// Hands the route's type to a test such as another route's `acceptsType`.
    let offersType: @Sendable (@Sendable (Any.Type) -> Bool) -> Bool
    var route: Route
}

/// An `Optional` seen as `Any`, to reach the object it holds.
private protocol OptionalObject {
    var wrappedObject: Any? { get }
}

extension Optional: OptionalObject {
    fileprivate var wrappedObject: Any? { self.map { $0 as Any } }
}

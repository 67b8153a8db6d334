import Foundation
import Networking

/// How the response cache treats one endpoint: whether it may answer from storage, for how long
/// an answer stays fresh, which cached routes a successful call makes obsolete, and whether a
/// stale answer may stand in when the network is unreachable.
///
/// Set it on an endpoint with ``Networking/Endpoint/cachePolicy(_:)`` or the shorthands
/// ``Networking/Endpoint/cached(for:)``, ``Networking/Endpoint/cacheOnly()`` and
/// ``Networking/Endpoint/servingStaleOnConnectivityFailure(_:)``. A route's `cacheTTL`,
/// `invalidatesCachedRouteNames` and `cacheIgnoreQueryParameters` arrive as
/// `RouteCacheSettings`; where both are given, the endpoint's policy wins for the time to live
/// and the stale rule, query parameters are ignored when either says so, and both lists of
/// routes are invalidated.
///
/// ```swift
/// let books = Endpoint<[Book]>.get("books").cached(for: 300)       // fresh for 5 minutes
/// let offline = Endpoint<[Book]>.get("books").cacheOnly()          // never the network
/// ```
public struct CachePolicy: Sendable, Hashable {
    /// Whether the cache reads, writes, or stays out of the way.
    public enum Mode: Sendable, Hashable {
        /// Answer with a fresh stored answer, revalidate a stale one, store what may be stored.
        case standard
        /// Answer from storage only, never touching the network (RFC 9111's `only-if-cached`):
        /// a fresh stored answer (or a stale one, when stale answers are allowed and the response
        /// does not forbid it) or a `504` miss — see ``Networking/RepositoryError/isCacheMiss``.
        case cacheOnly
        /// Skip stored answers and ask the server, then store its answer (a pull to refresh).
        case reload
        /// Neither read nor write the cache for this call.
        case bypass
    }

    /// Whether the cache reads, writes, or stays out of the way. Default ``Mode/standard``.
    public var mode: Mode
    /// How long, in seconds, a successful answer is used without asking the server, whatever its
    /// headers say (only `Cache-Control: no-store`, and answers never stored — errors, partial
    /// answers, a `202 Accepted`, `Vary: *` — still keep it out); `nil` (the default)
    /// follows the response's HTTP caching headers. `0` (or less) takes the call out of the cache,
    /// as in WebApiClient: nothing is read or stored, and a cache-only call always misses. An
    /// answer to a signed request is stored when a time to live is set.
    public var timeToLive: TimeInterval?
    /// Whether the query is left out of the key, so every query shares one entry. Default `false`.
    public var ignoresQueryParameters: Bool
    /// Routes whose stored answers — for the same discriminator — are removed after a
    /// successful (2xx) answer to this call. Default none. A name matches a route's, or an
    /// endpoint's `name` (`Endpoint.named(_:)`): an unnamed endpoint's answers are kept under no
    /// name, so no write can name them.
    public var invalidatesRouteNames: [String]
    /// Whether a stored answer past its freshness may be used, marked `ResponseSource.stale`,
    /// when the server cannot be reached (`RepositoryError.isConnectivityFailure`);
    /// never for a response marked `must-revalidate` or `no-cache`. `nil` (the default) uses
    /// ``ResponseCache/Configuration/servesStaleOnConnectivityFailure``.
    public var servesStaleOnConnectivityFailure: Bool?

    /// Creates a policy; every argument has the documented default.
    public init(
        mode: Mode = .standard, timeToLive: TimeInterval? = nil, ignoresQueryParameters: Bool = false,
        invalidatesRouteNames: [String] = [], servesStaleOnConnectivityFailure: Bool? = nil
    ) {
        self.mode = mode
        self.timeToLive = timeToLive
        self.ignoresQueryParameters = ignoresQueryParameters
        self.invalidatesRouteNames = invalidatesRouteNames
        self.servesStaleOnConnectivityFailure = servesStaleOnConnectivityFailure
    }
}

/// The option key of an endpoint's ``CachePolicy``. It must be handled: a call carrying it
/// through a repository without a ``ResponseCache`` fails with `.invalidRequest` before anything
/// is sent, rather than silently going uncached.
public enum CachePolicyKey: RequestOptionKey {
    /// No policy: the route's settings, else HTTP caching.
    public static let defaultValue: CachePolicy? = nil

    /// What to add when no interceptor handles the key.
    public static var requiredHandler: String? {
        "add a ResponseCache (the NetworkingCache product) to configuration.interceptors, or remove the endpoint's cache policy"
    }
}

import Foundation

/// What a route asks of the response cache (its `cacheTTL`, `invalidatesCachedRouteNames` and
/// `cacheIgnoreQueryParameters` keys), carried to the interceptors in ``RequestContext/options``
/// under ``RouteCacheSettingsKey``. A cache product acts on it; without one, a call carrying it
/// fails rather than silently going uncached.
public struct RouteCacheSettings: Sendable, Hashable {
    /// How long a successful answer may be served without asking the server, in seconds.
    public var timeToLive: TimeInterval?
    /// Routes whose cached answers a successful call of this route removes.
    public var invalidatesRouteNames: [String]
    /// Whether the query is left out of the cache key.
    public var ignoresQueryParameters: Bool

    /// Creates settings.
    public init(timeToLive: TimeInterval? = nil, invalidatesRouteNames: [String] = [], ignoresQueryParameters: Bool = false) {
        self.timeToLive = timeToLive
        self.invalidatesRouteNames = invalidatesRouteNames
        self.ignoresQueryParameters = ignoresQueryParameters
    }
}

/// The option key of ``RouteCacheSettings``; it must be handled (see ``RequestOptionKey/requiredHandler``).
public enum RouteCacheSettingsKey: RequestOptionKey {
    public static let defaultValue: RouteCacheSettings? = nil
    public static var requiredHandler: String? {
        "add a ResponseCache (the NetworkingCache product) to configuration.interceptors, or remove the route's cache keys"
    }
}

/// Whether a call may be kept in an offline queue when the network fails (a route's `offline`
/// key); it must be handled by an offline queue's interceptor.
public enum OfflineQueueingKey: RequestOptionKey {
    public static let defaultValue = false
    public static var requiredHandler: String? {
        "add an OfflineQueue (the NetworkingOffline product) to configuration.interceptors, or remove the route's offline key"
    }
}

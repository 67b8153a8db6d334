import Foundation
import Networking

/// The policy one call runs with: the endpoint's ``CachePolicy`` over the route's
/// `RouteCacheSettings`, over the cache's configuration.
struct EffectivePolicy: Sendable, Hashable {
    var mode: CachePolicy.Mode
    /// A positive time to live, or `nil` to follow HTTP caching.
    var timeToLive: TimeInterval?
    var ignoresQueryParameters: Bool
    var invalidatesRouteNames: [String]
    var servesStaleOnConnectivityFailure: Bool
    /// Whether a time to live of zero turned caching off for a cache-only call, which then finds nothing.
    var findsNothing = false

    init(
        mode: CachePolicy.Mode = .standard, timeToLive: TimeInterval? = nil, ignoresQueryParameters: Bool = false,
        invalidatesRouteNames: [String] = [], servesStaleOnConnectivityFailure: Bool = false
    ) {
        self.mode = mode
        self.timeToLive = timeToLive
        self.ignoresQueryParameters = ignoresQueryParameters
        self.invalidatesRouteNames = invalidatesRouteNames
        self.servesStaleOnConnectivityFailure = servesStaleOnConnectivityFailure
    }

    /// The policy of a call with these options, given the cache's default for stale answers.
    init(options: RequestOptions, servesStaleByDefault: Bool) {
        let route = options[RouteCacheSettingsKey.self]
        let endpoint = options[CachePolicyKey.self]
        self.init(
            mode: endpoint?.mode ?? .standard,
            ignoresQueryParameters: (endpoint?.ignoresQueryParameters ?? false) || (route?.ignoresQueryParameters ?? false),
            invalidatesRouteNames: (route?.invalidatesRouteNames ?? []) + (endpoint?.invalidatesRouteNames ?? []),
            servesStaleOnConnectivityFailure: endpoint?.servesStaleOnConnectivityFailure ?? servesStaleByDefault)
        // A time to live of zero (or less, or not a number) turns caching off, as in WebApiClient;
        // a cache-only call then finds nothing.
        if let ttl = endpoint?.timeToLive ?? route?.timeToLive {
            if ttl > 0 {
                timeToLive = ttl
            } else if mode == .cacheOnly {
                findsNothing = true
            } else {
                mode = .bypass
            }
        }
    }
}

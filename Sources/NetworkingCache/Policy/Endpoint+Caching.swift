import Foundation
import Networking

extension Endpoint {
    /// A copy whose response cache policy is `policy` (see ``CachePolicy``), replacing any set before.
    public func cachePolicy(_ policy: CachePolicy) -> Endpoint {
        with(CachePolicyKey.self, policy)
    }

    /// A copy whose successful answer is used for `seconds` without asking the server (its
    /// headers notwithstanding, except `no-store`); `0` turns caching off for the call. Other
    /// settings of the endpoint's policy are kept.
    public func cached(for seconds: TimeInterval) -> Endpoint {
        updatingCachePolicy { $0.timeToLive = seconds }
    }

    /// A copy answered from the cache only, never the network: a stored answer, or a `504` miss
    /// (``Networking/RepositoryError/isCacheMiss``). Other settings of the endpoint's policy are kept.
    public func cacheOnly() -> Endpoint {
        updatingCachePolicy { $0.mode = .cacheOnly }
    }

    /// A copy whose successful (2xx) answer removes the stored answers of the calls named `names`
    /// — routes, or endpoints given a name with `Endpoint.named(_:)` — for the same
    /// discriminator. Other settings of the endpoint's policy are kept. A write the offline
    /// queue keeps and sends later keeps only its route's names, not these.
    public func invalidatingCachedRoutes(_ names: [String]) -> Endpoint {
        updatingCachePolicy { $0.invalidatesRouteNames = names }
    }

    /// A copy that may be answered with a stale stored answer, marked `ResponseSource.stale`,
    /// when the server cannot be reached (never for `must-revalidate` or `no-cache` responses).
    public func servingStaleOnConnectivityFailure(_ allowed: Bool = true) -> Endpoint {
        updatingCachePolicy { $0.servesStaleOnConnectivityFailure = allowed }
    }

    private func updatingCachePolicy(_ change: (inout CachePolicy) -> Void) -> Endpoint {
        var policy = options[CachePolicyKey.self] ?? CachePolicy()
        change(&policy)
        return with(CachePolicyKey.self, policy)
    }
}

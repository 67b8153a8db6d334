import Foundation
import Networking
import Testing

@testable import NetworkingCache

@Suite struct EffectivePolicyTests {
    @Test func routeSettingsAlone() {
        var options = RequestOptions()
        options[RouteCacheSettingsKey.self] = RouteCacheSettings(timeToLive: 60, invalidatesRouteNames: ["a"], ignoresQueryParameters: true)
        let policy = EffectivePolicy(options: options, servesStaleByDefault: false)
        #expect(policy == EffectivePolicy(mode: .standard, timeToLive: 60, ignoresQueryParameters: true, invalidatesRouteNames: ["a"]))
    }

    @Test func theEndpointWinsAndListsAreJoined() {
        var options = RequestOptions()
        options[RouteCacheSettingsKey.self] = RouteCacheSettings(timeToLive: 60, invalidatesRouteNames: ["a"])
        options[CachePolicyKey.self] = CachePolicy(
            mode: .reload, timeToLive: 5, invalidatesRouteNames: ["b"], servesStaleOnConnectivityFailure: false)
        let policy = EffectivePolicy(options: options, servesStaleByDefault: true)
        #expect(policy.mode == .reload)
        #expect(policy.timeToLive == 5)
        #expect(policy.invalidatesRouteNames == ["a", "b"])
        #expect(!policy.servesStaleOnConnectivityFailure)
        #expect(EffectivePolicy(options: RequestOptions(), servesStaleByDefault: true).servesStaleOnConnectivityFailure)
    }

    @Test func aZeroTimeToLiveTurnsCachingOff() {
        var options = RequestOptions()
        options[RouteCacheSettingsKey.self] = RouteCacheSettings(timeToLive: 0)
        #expect(EffectivePolicy(options: options, servesStaleByDefault: false).mode == .bypass)
        options[CachePolicyKey.self] = CachePolicy(mode: .cacheOnly)
        #expect(EffectivePolicy(options: options, servesStaleByDefault: false).mode == .cacheOnly)
        options[CachePolicyKey.self] = CachePolicy(timeToLive: .nan)
        #expect(EffectivePolicy(options: options, servesStaleByDefault: false).mode == .bypass)
    }

    @Test func endpointShorthandsKeepEachOther() {
        let endpoint = Endpoint<Void>.get("books").cached(for: 30).cacheOnly().servingStaleOnConnectivityFailure()
        #expect(
            endpoint.options[CachePolicyKey.self]
                == CachePolicy(mode: .cacheOnly, timeToLive: 30, servesStaleOnConnectivityFailure: true))
        #expect(Endpoint<Void>.get("x").cachePolicy(CachePolicy(mode: .bypass)).options[CachePolicyKey.self]?.mode == .bypass)
    }
}

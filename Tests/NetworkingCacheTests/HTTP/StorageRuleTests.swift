import Foundation
import Networking
import Testing

@testable import NetworkingCache

@Suite struct StorageRuleTests {
    private func refusal(
        method: HTTPMethod = .get, request: HTTPHeaders = [:], authorized: Bool = false, ttl: TimeInterval? = nil,
        stale: Bool = false, status: Int = 200, _ headers: HTTPHeaders
    ) -> StorageRule.Refusal? {
        let rule = StorageRule(
            method: method, requestDirectives: CacheControl(request, isRequest: true), isAuthorized: authorized,
            policy: EffectivePolicy(timeToLive: ttl, servesStaleOnConnectivityFailure: stale))
        return rule.refusal(status: status, headers: headers, directives: CacheControl(headers))
    }

    @Test func onlySuccessfulAnswersToGet() {
        #expect(refusal(["Cache-Control": "max-age=60"]) == nil)
        #expect(refusal(status: 204, ["Cache-Control": "max-age=60"]) == nil)
        #expect(refusal(method: .post, ["Cache-Control": "max-age=60"]) == .method)
        #expect(refusal(method: .head, ["Cache-Control": "max-age=60"]) == .method)
        for status in [202, 206, 301, 304, 404, 500] {
            #expect(refusal(status: status, ["Cache-Control": "max-age=60"]) == .status)
        }
        #expect(refusal(ttl: 60, status: 404, [:]) == .status)
        #expect(refusal(ttl: 60, status: 202, [:]) == .status)
    }

    @Test func noStoreOnEitherSideAndVaryStar() {
        #expect(refusal(["Cache-Control": "max-age=60, no-store"]) == .noStore)
        #expect(refusal(request: ["Cache-Control": "no-store"], ["Cache-Control": "max-age=60"]) == .noStore)
        #expect(refusal(ttl: 60, ["Cache-Control": "no-store"]) == .noStore)
        #expect(refusal(["Cache-Control": "max-age=60", "Vary": "Accept, *"]) == .variesOnEverything)
    }

    @Test func authorizedAnswersNeedExplicitPermissionOrATimeToLive() {
        #expect(refusal(authorized: true, ["Cache-Control": "max-age=60"]) == .authorizedWithoutPermission)
        #expect(refusal(authorized: true, ["ETag": "\"a\""]) == .authorizedWithoutPermission)
        for permission in ["public", "private", "s-maxage=60", "must-revalidate"] {
            #expect(refusal(authorized: true, ["Cache-Control": "max-age=60, \(permission)"]) == nil, "\(permission)")
        }
        #expect(refusal(authorized: true, ttl: 30, [:]) == nil)
    }

    @Test func withoutATimeToLiveOnlyReusableAnswers() {
        #expect(refusal([:]) == .nothingToReuse)
        #expect(refusal(["Content-Type": "application/json"]) == .nothingToReuse)
        #expect(refusal(["ETag": "\"a\""]) == nil)
        #expect(refusal(["Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"]) == nil)
        #expect(refusal(["Expires": "0"]) == nil)
        #expect(refusal(["Cache-Control": "no-cache"]) == .nothingToReuse)
        #expect(refusal(["Cache-Control": "no-cache", "ETag": "\"a\""]) == nil)
        #expect(refusal(ttl: 10, [:]) == nil)
        #expect(refusal(stale: true, [:]) == nil)
    }

    @Test func aStatusThatIsNotHeuristicallyCacheableNeedsExplicitPermission() {
        for status in [201, 205, 207] {
            // A validator, or the wish to serve stale answers, is not enough (RFC 9111 §3)…
            #expect(refusal(status: status, ["ETag": "\"a\""]) == .notExplicitlyCacheable, "\(status)")
            #expect(refusal(status: status, ["Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"]) == .notExplicitlyCacheable)
            #expect(refusal(stale: true, status: status, [:]) == .notExplicitlyCacheable, "\(status)")
            // …a lifetime, public, private or a time to live is.
            #expect(refusal(status: status, ["Cache-Control": "max-age=60"]) == nil, "\(status)")
            #expect(refusal(status: status, ["Expires": "0"]) == nil, "\(status)")
            #expect(refusal(status: status, ["Cache-Control": "public", "ETag": "\"a\""]) == nil, "\(status)")
            #expect(refusal(stale: true, status: status, ["Cache-Control": "private"]) == nil, "\(status)")
            #expect(refusal(ttl: 60, status: status, [:]) == nil, "\(status)")
        }
        // The heuristically cacheable statuses (RFC 9110 §15.1) are stored as before.
        for status in [200, 203, 204] {
            #expect(refusal(status: status, ["ETag": "\"a\""]) == nil, "\(status)")
            #expect(refusal(stale: true, status: status, [:]) == nil, "\(status)")
            #expect(refusal(status: status, [:]) == .nothingToReuse, "\(status)")
        }
    }
}

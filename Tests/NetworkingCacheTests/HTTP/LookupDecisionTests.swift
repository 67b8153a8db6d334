import Foundation
import Networking
import Testing

@testable import NetworkingCache

@Suite struct LookupDecisionTests {
    let stored = Date(timeIntervalSince1970: 1_700_000_000)

    private func entry(_ headers: HTTPHeaders) -> CacheEntry {
        CacheEntry(
            key: "k", method: "GET", url: "http://h/x", routeName: "", discriminator: nil, statusCode: 200, headers: headers,
            body: Data("{}".utf8), requestDate: stored, responseDate: stored, vary: [])
    }

    private func decide(
        _ headers: HTTPHeaders?, after seconds: TimeInterval, policy: EffectivePolicy = EffectivePolicy(), request: HTTPHeaders = [:]
    ) -> LookupDecision {
        LookupDecision.decide(
            entry: headers.map(entry), policy: policy, requestDirectives: CacheControl(request, isRequest: true),
            now: stored.addingTimeInterval(seconds))
    }

    @Test func nothingStored() {
        #expect(decide(nil, after: 0) == .fetch(conditional: [:]))
        #expect(decide(nil, after: 0, policy: EffectivePolicy(mode: .cacheOnly)) == .miss)
        #expect(decide(nil, after: 0, request: ["Cache-Control": "only-if-cached"]) == .miss)
    }

    @Test func freshIsServedStaleIsRevalidatedWithItsValidators() {
        let headers: HTTPHeaders = ["Cache-Control": "max-age=60", "ETag": "\"v1\"", "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"]
        #expect(decide(headers, after: 30) == .serve(.cache))
        #expect(
            decide(headers, after: 61)
                == .fetch(conditional: ["If-None-Match": "\"v1\"", "If-Modified-Since": "Mon, 01 Jan 2024 00:00:00 GMT"]))
        #expect(decide(["Cache-Control": "max-age=60"], after: 61) == .fetch(conditional: [:]))
    }

    @Test("A stored validator holding a CR, LF or NUL (an older version's entry) is left out: the transport would refuse it")
    func unsendableValidatorsAreLeftOut() {
        let headers: HTTPHeaders = ["Cache-Control": "max-age=60", "ETag": "\"v1\"\r", "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"]
        #expect(decide(headers, after: 61) == .fetch(conditional: ["If-Modified-Since": "Mon, 01 Jan 2024 00:00:00 GMT"]))
    }

    @Test func aClockSetBackBeforeTheAnswerArrivedMakesItStale() {
        let headers: HTTPHeaders = ["Cache-Control": "max-age=3600", "ETag": "\"v1\""]
        #expect(decide(headers, after: -86_400) == .fetch(conditional: ["If-None-Match": "\"v1\""]))
        #expect(
            decide(headers, after: -86_400, policy: EffectivePolicy(timeToLive: 3600)) == .fetch(conditional: ["If-None-Match": "\"v1\""]))
    }

    @Test func noCacheAlwaysRevalidates() {
        #expect(
            decide(["Cache-Control": "max-age=600, no-cache", "ETag": "\"a\""], after: 1) == .fetch(conditional: ["If-None-Match": "\"a\""])
        )
        #expect(decide(["Cache-Control": "max-age=600"], after: 1, request: ["Cache-Control": "no-cache"]) == .fetch(conditional: [:]))
        #expect(decide(["Cache-Control": "max-age=600"], after: 1, request: ["Pragma": "no-cache"]) == .fetch(conditional: [:]))
    }

    @Test func requestMaxAgeAndMinFreshNarrowFreshness() {
        #expect(decide(["Cache-Control": "max-age=600"], after: 20, request: ["Cache-Control": "max-age=10"]) == .fetch(conditional: [:]))
        #expect(decide(["Cache-Control": "max-age=600"], after: 5, request: ["Cache-Control": "max-age=10"]) == .serve(.cache))
        #expect(decide(["Cache-Control": "max-age=60"], after: 50, request: ["Cache-Control": "min-fresh=20"]) == .fetch(conditional: [:]))
    }

    @Test func requestMaxStaleAllowsStaleUnlessTheResponseForbidsIt() {
        #expect(decide(["Cache-Control": "max-age=60"], after: 80, request: ["Cache-Control": "max-stale=30"]) == .serve(.stale))
        #expect(decide(["Cache-Control": "max-age=60"], after: 100, request: ["Cache-Control": "max-stale=30"]) == .fetch(conditional: [:]))
        #expect(
            decide(["Cache-Control": "max-age=60, must-revalidate"], after: 80, request: ["Cache-Control": "max-stale"])
                == .fetch(conditional: [:]))
    }

    @Test("max-stale accepts a stale entry, never one the request's max-age or min-fresh refused")
    func requestMaxStaleKeepsTheRequestsOwnLimits() {
        // A fresh entry older than the request's max-age, or with less than its min-fresh left, is fetched.
        let tooOld = decide(["Cache-Control": "max-age=600"], after: 30, request: ["Cache-Control": "max-age=10, max-stale=60"])
        #expect(tooOld == .fetch(conditional: [:]))
        let tooShort = decide(["Cache-Control": "max-age=60"], after: 30, request: ["Cache-Control": "min-fresh=120, max-stale=0"])
        #expect(tooShort == .fetch(conditional: [:]))
        // Stale, within both limits: served stale; stale, older than the request's max-age: fetched.
        let within = decide(["Cache-Control": "max-age=60"], after: 80, request: ["Cache-Control": "max-age=100, max-stale=30"])
        #expect(within == .serve(.stale))
        let beyond = decide(["Cache-Control": "max-age=60"], after: 80, request: ["Cache-Control": "max-age=70, max-stale=30"])
        #expect(beyond == .fetch(conditional: [:]))
    }

    @Test func timeToLiveOverridesTheHeaders() {
        let ttl = EffectivePolicy(timeToLive: 30)
        #expect(decide(["Cache-Control": "no-cache"], after: 29, policy: ttl) == .serve(.cache))
        #expect(decide([:], after: 29, policy: ttl) == .serve(.cache))
        #expect(decide(["Cache-Control": "max-age=3600"], after: 30, policy: ttl) == .fetch(conditional: [:]))
        #expect(decide(["ETag": "\"a\""], after: 31, policy: ttl) == .fetch(conditional: ["If-None-Match": "\"a\""]))
    }

    @Test func cacheOnlyServesStaleOnlyWhenAllowed() {
        let headers: HTTPHeaders = ["Cache-Control": "max-age=60"]
        #expect(decide(headers, after: 10, policy: EffectivePolicy(mode: .cacheOnly)) == .serve(.cache))
        #expect(decide(headers, after: 61, policy: EffectivePolicy(mode: .cacheOnly)) == .miss)
        let stale = EffectivePolicy(mode: .cacheOnly, servesStaleOnConnectivityFailure: true)
        #expect(decide(headers, after: 61, policy: stale) == .serve(.stale))
        #expect(decide(["Cache-Control": "max-age=60, must-revalidate"], after: 61, policy: stale) == .miss)
        #expect(decide(["Cache-Control": "no-cache"], after: 0, policy: stale) == .miss)
    }

    @Test func reloadAlwaysAsksUnconditionally() {
        #expect(
            decide(["Cache-Control": "max-age=60", "ETag": "\"a\""], after: 1, policy: EffectivePolicy(mode: .reload))
                == .fetch(conditional: [:]))
    }

    @Test func staleFallbackRules() {
        let allowed = EffectivePolicy(servesStaleOnConnectivityFailure: true)
        #expect(LookupDecision.mayServeStale(entry(["Cache-Control": "max-age=1"]), policy: allowed))
        #expect(!LookupDecision.mayServeStale(entry(["Cache-Control": "max-age=1"]), policy: EffectivePolicy()))
        #expect(!LookupDecision.mayServeStale(entry(["Cache-Control": "max-age=1, must-revalidate"]), policy: allowed))
        #expect(!LookupDecision.mayServeStale(entry(["Cache-Control": "no-cache"]), policy: allowed))
    }
}

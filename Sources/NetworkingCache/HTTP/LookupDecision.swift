import Foundation
import Networking

/// What the cache does with a request, given the answer it has stored for it (RFC 9111 §4):
/// answer with it, ask the server (conditionally when the answer has validators), or — for a
/// cache-only call — report a miss. A pure function of its inputs, tested without I/O.
enum LookupDecision: Sendable, Hashable {
    /// Answer with the stored entry, marked ``Networking/ResponseSource/cache`` (fresh) or
    /// ``Networking/ResponseSource/stale``.
    case serve(ResponseSource)
    /// Ask the server; `conditional` holds `If-None-Match` / `If-Modified-Since` built from the
    /// stored answer's validators (empty when there is no stored answer or it has none).
    case fetch(conditional: HTTPHeaders)
    /// A cache-only call with nothing usable stored.
    case miss

    /// The decision for a request with `requestDirectives`, under `policy`, with `entry` stored, at `now`.
    ///
    /// - A time to live makes the entry fresh for that long after it was received, whatever its
    ///   headers; otherwise freshness follows §4.2, and a response marked `no-cache` is never fresh.
    /// - The request's `no-cache`, `max-age` and `min-fresh` can only make an entry less fresh;
    ///   its `max-stale` allows a stale entry unless the response forbids stale use.
    /// - ``CachePolicy/Mode/reload`` always asks the server, unconditionally.
    static func decide(
        entry: CacheEntry?, policy: EffectivePolicy, requestDirectives: CacheControl, now: Date
    ) -> LookupDecision {
        let cacheOnly = policy.mode == .cacheOnly || requestDirectives.onlyIfCached
        guard let entry else { return cacheOnly ? .miss : .fetch(conditional: [:]) }
        if policy.mode == .reload, !cacheOnly { return .fetch(conditional: [:]) }

        let freshness = Freshness(of: entry, now: now)
        var fresh: Bool
        var remaining: TimeInterval
        if let ttl = policy.timeToLive {
            let resident = now.timeIntervalSince(entry.responseDate)
            remaining = ttl - resident
            fresh = resident >= 0 && remaining > 0
        } else {
            remaining = (freshness.lifetime ?? 0) - freshness.age
            // A clock set back before the answer arrived cannot say how long it has been kept.
            fresh = freshness.isFresh && !entry.directives.noCache && now >= entry.responseDate
        }
        // The request's own limits hold whatever `max-stale` says (RFC 9111 §5.2.1).
        var tooOldForRequest = false
        if let maxAge = requestDirectives.maxAge, freshness.age > maxAge { tooOldForRequest = true }
        if let minFresh = requestDirectives.minFresh, remaining < minFresh { tooOldForRequest = true }
        if fresh, !requestDirectives.noCache, !tooOldForRequest { return .serve(.cache) }

        // `max-stale` accepts an entry that is stale, not one the request's limits refused.
        let staleAllowedByRequest =
            requestDirectives.maxStale.map { -remaining <= $0 } ?? false && remaining <= 0 && !tooOldForRequest
            && !requestDirectives.noCache && !entry.directives.mustRevalidate && !entry.directives.noCache
        if staleAllowedByRequest, policy.mode != .reload { return .serve(.stale) }
        if cacheOnly { return mayServeStale(entry, policy: policy) ? .serve(.stale) : .miss }
        return .fetch(conditional: conditionalHeaders(for: entry))
    }

    /// Whether `entry` may stand in, stale, when the server cannot be reached: the policy allows
    /// it and the response is not marked `must-revalidate` or `no-cache`.
    static func mayServeStale(_ entry: CacheEntry, policy: EffectivePolicy) -> Bool {
        policy.servesStaleOnConnectivityFailure && !entry.directives.mustRevalidate && !entry.directives.noCache
    }

    /// `If-None-Match` from the entry's `ETag` and `If-Modified-Since` from its `Last-Modified`
    /// (RFC 9110 §13.1), sent as the server gave them — unless a control character in one (stored by
    /// an older version, or by a transport of your own) would have the transport refuse every
    /// later request of the URL: that one is left out.
    static func conditionalHeaders(for entry: CacheEntry) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if let etag = entry.headers["ETag"], HTTPHeaders.isSendableFieldValue(etag) { headers["If-None-Match"] = etag }
        if let lastModified = entry.headers["Last-Modified"], HTTPHeaders.isSendableFieldValue(lastModified) {
            headers["If-Modified-Since"] = lastModified
        }
        return headers
    }
}

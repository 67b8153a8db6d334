import Foundation
import Networking

/// Whether an answer may be stored (RFC 9111 §3, with this library's rule for authorized
/// requests):
///
/// - only answers to `GET`, and only `2xx` statuses other than `206 Partial Content` and
///   `202 Accepted` (a job's progress, not the resource: stored, it would answer every poll of
///   `performPollingRequest` until its lifetime ended, and the polls would run out);
/// - never when the request or the response says `Cache-Control: no-store`, nor when the
///   response varies on `*`, nor when it varies on `Cookie` and the request has no `Cookie` of
///   its own: cookies from the configuration's cookie storage are added after the cache, so it
///   could not tell one user's answer from another's — nor, in general, when it varies on a
///   field that a step after the cache added or changed (an interceptor at
///   `InterceptorPosition.afterSigning` setting a tenant or a language), whose value the cache
///   never sees;
/// - never when a step after the cache (an interceptor of the app's that signs requests itself)
///   added an `Authorization` or `Proxy-Authorization` and nothing keeps users apart: no session
///   signed the call, and no discriminator names whose answer it is;
/// - an answer to a request that is signed by the session, or carries its own `Authorization`,
///   is stored only when the response explicitly allows it — `public`, `private`, `s-maxage` or
///   `must-revalidate` — or the call has a time to live (RFC 9111 §3.5 names the first, third
///   and fourth for shared caches; `private` is added because this cache is private, and the
///   discriminator keeps each user's answers apart);
/// - with a time to live, any other answer is stored. Without one, RFC 9111 §3 asks for the
///   response's explicit permission — a lifetime (`max-age`, `Expires`), `public` or `private` —
///   unless the status is heuristically cacheable (RFC 9110 §15.1; among the statuses stored here:
///   200, 203 and 204), so a `201` or `207` with only a validator is not stored;
/// - and then only answers that can be reused: with an explicit lifetime, a validator (`ETag`,
///   `Last-Modified`), or when the call may fall back on stale answers.
struct StorageRule: Sendable, Hashable {
    /// Why an answer is not stored.
    enum Refusal: Sendable, Hashable {
        case method
        case status
        case noStore
        case variesOnEverything
        case variesOnCookiesItCannotSee
        /// It varies on a field that steps after the cache added or changed.
        case variesOnFieldsAddedAfterIt
        case authorizedWithoutPermission
        /// A credential a step after the cache added, with nothing to keep its owner's answers apart.
        case credentialItCannotSee
        /// A status that is not heuristically cacheable, without a lifetime, `public` or `private`.
        case notExplicitlyCacheable
        case nothingToReuse
    }

    /// The statuses stored here (2xx but 202 and 206) that RFC 9110 §15.1 calls heuristically cacheable:
    /// a cache may store them without the response's explicit permission.
    static let heuristicallyCacheableStatuses: Set<Int> = [200, 203, 204]

    /// The request method.
    var method: HTTPMethod
    /// The request's `Cache-Control` directives.
    var requestDirectives: CacheControl
    /// Whether the request carries credentials: signed by the session, or its own `Authorization`.
    var isAuthorized: Bool
    /// The policy of the call.
    var policy: EffectivePolicy
    /// Whether the request, as the cache sees it, carries a `Cookie` field.
    var hasCookie = false
    /// The fields the response varies on that steps after the cache added or changed
    /// (``VaryRule/addedAfterTheCache(_:seen:sent:keyKeepsUsersApart:)``).
    var addedAfterTheCache: [String] = []
    /// Whether a step after the cache added a credential, and no session or discriminator says
    /// whose it is.
    var ownerUnknown = false

    /// `nil` when the answer may be stored, else why not.
    func refusal(status: Int, headers: HTTPHeaders, directives: CacheControl) -> Refusal? {
        guard method == .get else { return .method }
        guard (200..<300).contains(status), status != 206, status != 202 else { return .status }
        if requestDirectives.noStore || directives.noStore { return .noStore }
        if ownerUnknown { return .credentialItCannotSee }
        switch VaryRule.fields(of: headers) {
        case .any: return .variesOnEverything
        case .names(let names) where !hasCookie && names.contains("cookie"): return .variesOnCookiesItCannotSee
        case .names where !addedAfterTheCache.isEmpty: return .variesOnFieldsAddedAfterIt
        default: break
        }
        if isAuthorized, policy.timeToLive == nil,
            !(directives.isPublic || directives.isPrivate || directives.sharedMaxAge != nil || directives.mustRevalidate)
        {
            return .authorizedWithoutPermission
        }
        if policy.timeToLive != nil { return nil }
        let explicitlyCacheable = directives.maxAge != nil || headers.contains("Expires") || directives.isPublic || directives.isPrivate
        guard explicitlyCacheable || Self.heuristicallyCacheableStatuses.contains(status) else { return .notExplicitlyCacheable }
        if policy.servesStaleOnConnectivityFailure { return nil }
        let reusable =
            directives.maxAge != nil || headers.contains("Expires") || headers.contains("ETag") || headers.contains("Last-Modified")
        return reusable ? nil : .nothingToReuse
    }
}

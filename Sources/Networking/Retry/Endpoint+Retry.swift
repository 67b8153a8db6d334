import Foundation

/// The option that gives one call a retry policy of its own, instead of
/// ``NetworkingConfiguration/retryPolicy``; set it with ``Endpoint/retrying(_:)``.
///
/// The retry step reads it from ``RequestContext/options``, so it also applies to requests sent
/// through ``AbstractRepository/send(_:context:)``.
public enum RetryPolicyKey: RequestOptionKey {
    /// No policy of the call's own: the configuration's applies.
    public static let defaultValue: RetryPolicy? = nil
}

extension Endpoint {
    /// The call's own retry policy, or `nil` for the configuration's.
    public var retryPolicy: RetryPolicy? {
        get { options[RetryPolicyKey.self] }
        set {
            if let newValue { options[RetryPolicyKey.self] = newValue } else { options.remove(RetryPolicyKey.self) }
        }
    }

    /// A copy sent under `policy` instead of the configuration's retry policy (which it replaces
    /// whole): `.never` for a call that must fail fast (a search as the user types), a patient
    /// policy for one worth waiting for, or one that adds `.post` for a write the server
    /// deduplicates.
    ///
    /// ```swift
    /// let search = Endpoint<[Book]>.get("books", parameters: ["q": "dune"]).retrying(.never)
    /// let report = Endpoint<Report>.get("reports/daily").retrying(RetryPolicy(maximumAttempts: 5))
    /// ```
    ///
    /// A policy that cannot be used (fewer than one attempt, a negative or non-finite `baseDelay`
    /// or `maximumDelay`, a negative `maximumRetryAfter`, a
    /// retryable status outside 400–599) fails the call with
    /// ``RepositoryError/invalidRequest(reason:request:)`` before anything is sent.
    public func retrying(_ policy: RetryPolicy) -> Endpoint {
        var copy = self
        copy.retryPolicy = policy
        return copy
    }
}

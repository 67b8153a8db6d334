/// The user a call must be signed for: when set, the session step signs the call only if the
/// session still names this user (``SessionAuthorizing/sessionIdentity``), and fails it with
/// ``RepositoryError/unauthenticatedSession(_:)`` otherwise, before anything is sent.
///
/// For features that send requests on a user's behalf later — an offline queue sending what
/// one user queued — so that a logout and another login between their own check and the
/// signing never send one user's request with another's token. `nil` (the default) signs for
/// whoever is logged in.
public enum SessionIdentityKey: RequestOptionKey {
    public static let defaultValue: String? = nil
}

extension RepositoryError {
    /// The statuses with which a refresh endpoint rejects a refresh: 400 (OAuth 2's
    /// `invalid_grant`: an unknown, expired or revoked refresh token), 401 and 403.
    static let refreshRejectionStatuses: Set<Int> = [400, 401, 403]

    /// Whether a refresh that failed with this error was rejected: the server answered with one
    /// of ``refreshRejectionStatuses`` (as a plain status error or a custom error), or the
    /// refresher said so with ``RepositoryError/unauthenticatedSession(_:)`` or
    /// ``RepositoryError/authenticationFailed(_:)``, with or without a response.
    ///
    /// Only a rejection says the refresh token is no good, so only a rejection ends the session.
    /// Any other failure (unreachable, a timeout, a 5xx or 429, a TLS failure, an answer that does
    /// not decode — a captive portal — or a cancellation) may pass: the session is kept, to
    /// refresh again on a later request.
    var isRefreshRejection: Bool {
        switch self {
        case .unauthenticatedSession, .authenticationFailed:
            return true
        case .requestError, .customError:
            guard let statusCode else { return false }
            return Self.refreshRejectionStatuses.contains(statusCode)
        default:
            return false
        }
    }
}

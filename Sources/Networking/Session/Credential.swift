import Foundation

/// What proves a session to the API: an access token and, when the API issues them, a refresh
/// token and the access token's expiry.
public struct Credential: Sendable, Hashable, Codable {
    /// The token sent in `Authorization`.
    public var accessToken: String
    /// The token that obtains a new access token, when the API issues one.
    public var refreshToken: String?
    /// When the access token stops being accepted, when the API says.
    public var expiresAt: Date?

    /// Creates a credential.
    public init(accessToken: String, refreshToken: String? = nil, expiresAt: Date? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
    }

    /// Whether the access token is known to have expired at `date`, counting `leeway` seconds early.
    public func isExpired(at date: Date = Date(), leeway: TimeInterval = 0) -> Bool {
        guard let expiresAt else { return false }
        return date.addingTimeInterval(leeway) >= expiresAt
    }
}

/// How a credential is written in the `Authorization` header.
public struct AuthorizationScheme: Sendable {
    let headerValue: @Sendable (Credential) -> String

    /// A scheme that formats the header value with a function.
    public init(_ headerValue: @escaping @Sendable (Credential) -> String) {
        self.headerValue = headerValue
    }

    /// `Bearer <access token>` (RFC 6750), the default.
    public static let bearer = AuthorizationScheme { "Bearer \($0.accessToken)" }

    /// The access token alone, as the original wolmo-networking sent it.
    public static let raw = AuthorizationScheme { $0.accessToken }
}

import Foundation
import Networking

/// A queued request as the journal keeps it: unsigned (never a credential), with the
/// `Idempotency-Key` the server deduplicates by, and for whom it was queued.
struct OfflineItem: Codable, Sendable, Hashable {
    let id: UUID
    let enqueuedAt: Date
    /// The ``SessionAuthorizing/sessionIdentity`` of the user who queued it, `nil` when it needs no session.
    let user: String?
    let request: TransportRequest
    let requiresSession: Bool
    let name: String?
    /// The cached routes its route invalidates (`invalidatesCachedRouteNames`), handed to a
    /// response cache with its answer; `nil` when none, and in records written before they were kept.
    var invalidatesRouteNames: [String]?

    /// The header fields never kept on disk: the session signs the request again when it is sent.
    static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// `request` without credentials: without ``credentialHeaders``, and without the fields
    /// named like a credential (`X-Api-Key`, or one of the configuration's `secretFields`) that
    /// are the repository's default headers, which a flush adds again.
    static func storable(_ request: TransportRequest, configuration: NetworkingConfiguration?) -> TransportRequest {
        var stored = request
        for name in credentialHeaders { stored.headers[name] = nil }
        guard let configuration else { return stored }
        let defaults = configuration.defaultHeaders
        for name in defaults.names where configuration.isSecretFieldName(name) {
            if stored.headers.values(for: name) == defaults.values(for: name) { stored.headers[name] = nil }
        }
        return stored
    }
}

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
    /// The default credential fields (`X-Api-Key`) it carried to a host the connected
    /// repository sends no credentials to (``Networking/NetworkingConfiguration/sendsCredentials(to:)``),
    /// with that repository's own value: the call or an interceptor set them there. Kept by name
    /// only; a flush adds the connected repository's values again. `nil` when none, and in
    /// records written before.
    var restoredDefaults: [String]?

    /// The header fields never kept on disk: the session signs the request again when it is sent.
    static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// `request` without credentials: without ``credentialHeaders``, and without the fields
    /// named like a credential (`isSecret`: `X-Api-Key`, or one of the configuration's
    /// `secretFields`) that are the default headers of the repository that made it (`defaults`),
    /// which a flush adds again. The names of the fields taken out that the connected
    /// repository (`flushing`) would not add to this URL, but holds with the same value, are
    /// returned, for the flush to add them back; another repository's value is never sent where
    /// that repository's own rule keeps it from.
    static func storable(
        _ request: TransportRequest, defaults: HTTPHeaders, isSecret: (String) -> Bool, flushing: NetworkingConfiguration?
    ) -> (request: TransportRequest, restoredDefaults: [String]?) {
        let defaultsGo = flushing.map { $0.sendsCredentials(to: request.url) } ?? true
        var stored = request
        var restored: [String] = []
        for name in credentialHeaders { stored.headers[name] = nil }
        for name in defaults.names where isSecret(name) {
            if stored.headers.values(for: name) == defaults.values(for: name) {
                stored.headers[name] = nil
                if !defaultsGo, flushing?.defaultHeaders.values(for: name) == defaults.values(for: name) { restored.append(name) }
            }
        }
        return (stored, restored.isEmpty ? nil : restored)
    }
}

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
    /// The default credential fields (`X-Api-Key`) it carried to a host that gets no defaults
    /// with credentials (``Networking/NetworkingConfiguration/sendsCredentials(to:)``): the call
    /// or an interceptor set them there with the default's value. Kept by name only; a flush adds
    /// the connected repository's values again. `nil` when none, and in records written before.
    var restoredDefaults: [String]?

    /// The header fields never kept on disk: the session signs the request again when it is sent.
    static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// `request` without credentials: without ``credentialHeaders``, and without the fields
    /// named like a credential (`isSecret`: `X-Api-Key`, or one of the configuration's
    /// `secretFields`) that are the default headers of the repository that made it (`defaults`),
    /// which a flush adds again. `defaultsGo` says whether the request's URL gets those defaults
    /// (``Networking/NetworkingConfiguration/sendsCredentials(to:)``); when it does not, the
    /// names of the fields taken out are returned, for the flush to add them back.
    static func storable(
        _ request: TransportRequest, defaults: HTTPHeaders, isSecret: (String) -> Bool, defaultsGo: Bool
    ) -> (request: TransportRequest, restoredDefaults: [String]?) {
        var stored = request
        var restored: [String] = []
        for name in credentialHeaders { stored.headers[name] = nil }
        for name in defaults.names where isSecret(name) {
            if stored.headers.values(for: name) == defaults.values(for: name) {
                stored.headers[name] = nil
                if !defaultsGo { restored.append(name) }
            }
        }
        return (stored, restored.isEmpty ? nil : restored)
    }
}

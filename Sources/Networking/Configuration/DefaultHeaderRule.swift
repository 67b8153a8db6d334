import Foundation

/// A configuration's default header fields and where the ones named like a credential may go:
/// what ``NetworkingConfiguration/defaultHeaders(for:)`` answers, kept by a repository's chain so
/// that a call's ``RequestContext`` can answer it too, without the whole configuration.
struct DefaultHeaderRule: Sendable {
    /// Every default field (``NetworkingConfiguration/defaultHeaders``).
    let headers: HTTPHeaders
    /// The hosts credential-named fields go to, as ``NetworkingConfiguration/comparableHost(_:)``
    /// writes them.
    let credentialHosts: Set<String>
    let useSecureConnection: Bool
    /// Which names are credentials: the built-in ones and ``NetworkingConfiguration/secretFields``.
    let secretNames: Redaction

    /// No default fields: a context made outside a repository.
    static let none = DefaultHeaderRule(headers: [:], credentialHosts: [], useSecureConnection: false, secretNames: .standard)

    init(headers: HTTPHeaders, credentialHosts: Set<String>, useSecureConnection: Bool, secretNames: Redaction) {
        self.headers = headers
        self.credentialHosts = credentialHosts
        self.useSecureConnection = useSecureConnection
        self.secretNames = secretNames
    }

    init(_ configuration: NetworkingConfiguration) {
        self.init(
            headers: configuration.defaultHeaders, credentialHosts: configuration.credentialHosts,
            useSecureConnection: configuration.useSecureConnection,
            secretNames: Redaction(secretFields: configuration.secretFields))
    }

    /// The default fields a request to `url` carries: see
    /// ``NetworkingConfiguration/defaultHeaders(for:)``.
    func headers(for url: URL) -> HTTPHeaders {
        var defaults = headers
        let downgraded = useSecureConnection && url.scheme?.lowercased() != "https"
        guard !defaults.isEmpty,
            downgraded || !credentialHosts.contains(NetworkingConfiguration.comparableHost(url.host ?? ""))
        else { return defaults }
        for name in defaults.names where secretNames.isSecret(name) { defaults[name] = nil }
        return defaults
    }
}

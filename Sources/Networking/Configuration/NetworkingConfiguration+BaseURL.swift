import Foundation

extension NetworkingConfiguration {
    /// Creates and validates a configuration from a base URL written whole, as a server's address
    /// usually comes (from an environment variable, a settings screen):
    /// `https://api.example.com/v1` is the same as `useSecureConnection: true`,
    /// `domainURL: "api.example.com"` and `subdomainURL: "/v1"`.
    ///
    /// ```swift
    /// var configuration = try NetworkingConfiguration(baseURL: "http://127.0.0.1:8000/api/v1")
    /// configuration.timeout = 10
    /// ```
    ///
    /// Every other setting has its default; change it on the value afterwards.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` for text that is not an
    ///   `http` or `https` URL with a host, or that has a user, a query, a fragment or an encoded
    ///   `/` or an escape that is not UTF-8 in its path; and for
    ///   parts the initializer that takes them one by one refuses (a port outside 1...65535).
    public init(baseURL text: String) throws(RepositoryError) {
        let scheme: String
        let components: URLComponents
        do {
            (scheme, components) = try BaseURLText.components(of: text)
        } catch {
            let text = Redaction.standard.urlText(text)
            switch error {
            case .notWebURL:
                throw .invalidConfiguration(
                    reason: "baseURL \"\(text)\" is not an http or https URL such as \"https://api.example.com/v1\"")
            case .noHost:
                throw .invalidConfiguration(reason: "baseURL \"\(text)\" has no host")
            case .userQueryOrFragment:
                throw .invalidConfiguration(
                    reason: "baseURL \"\(text)\" has a user, a query or a fragment: give scheme, host, port and path only")
            case .portOutOfRange:
                throw .invalidConfiguration(reason: "baseURL \"\(text)\" has a port outside 1...65535")
            }
        }
        // The path is taken decoded and encoded again segment by segment: an encoded slash
        // would come back as two segments, another API path.
        guard !components.percentEncodedPath.lowercased().contains("%2f") else {
            throw .invalidConfiguration(
                reason: "baseURL \"\(Redaction.standard.urlText(text))\" has an encoded \"/\" (%2F) in its path, which cannot be kept")
        }
        // Decoded by hand: Foundation's `path` is empty for an escape that is not UTF-8 (`/Caf%E9`),
        // which would send every call to the host's root.
        guard let path = components.percentEncodedPath.removingPercentEncoding else {
            throw .invalidConfiguration(
                reason: "baseURL \"\(Redaction.standard.urlText(text))\" has a percent escape in its path that is not UTF-8 text")
        }
        try self.init(
            useSecureConnection: scheme == "https", domainURL: BaseURLText.host(of: components), port: components.port,
            subdomainURL: path.isEmpty || path == "/" ? nil : path)
    }

    /// Creates and validates a configuration from a base `URL`; see ``init(baseURL:)-(String)``.
    public init(baseURL url: URL) throws(RepositoryError) {
        try self.init(baseURL: url.absoluteString)
    }
}

extension NetworkingConfiguration {
    /// The hosts the session's credential goes to, as ``comparableHost(_:)`` writes them: the
    /// API's and ``sessionHosts``.
    var credentialHosts: Set<String> {
        Set(([baseURL.host ?? ""] + sessionHosts).map(Self.comparableHost))
    }

    /// The default headers a request to `url` carries: ``defaultHeaders``, without the fields
    /// named like a credential (`Authorization`, `Cookie`, `X-Api-Key`, ``secretFields``) when
    /// `url` is on another host than the API's (``domainURL``'s, or one of ``sessionHosts``), or
    /// is plain `http` while ``useSecureConnection`` is on: a presigned storage URL or a CDN must
    /// not receive the API's key, nor anyone on the way read it, as with the session's
    /// `Authorization`. What the request builder adds; a feature that sends a kept request again
    /// (an offline queue) adds the same. A call's own header fields are its own: never removed.
    public func defaultHeaders(for url: URL) -> HTTPHeaders {
        var defaults = defaultHeaders
        guard !defaults.isEmpty, !sendsCredentials(to: url) else { return defaults }
        let redaction = Redaction(secretFields: secretFields)
        for name in defaults.names where redaction.isSecret(name) { defaults[name] = nil }
        return defaults
    }

    /// Whether requests to `url` carry this configuration's credentials — the session's
    /// `Authorization` and the default headers named like a credential: on the API's hosts
    /// (``domainURL``'s and ``sessionHosts``), over `https` when ``useSecureConnection`` is on.
    /// A feature that carries requests inside another (a batch endpoint on a gateway) asks this
    /// of the outer request's URL, so that no credential travels inside its body either.
    public func sendsCredentials(to url: URL) -> Bool {
        let downgraded = useSecureConnection && url.scheme?.lowercased() != "https"
        return !downgraded && credentialHosts.contains(Self.comparableHost(url.host ?? ""))
    }

    /// Whether this configuration treats a field of this name as a credential: a built-in name
    /// (``HTTPHeaders/isSecretFieldName(_:)``) or one of ``secretFields``. A feature built on the
    /// library that keeps requests (an offline queue keeping credentials off disk) asks this, so
    /// that it draws the line where the repository does.
    public func isSecretFieldName(_ name: String) -> Bool { Redaction(secretFields: secretFields).isSecret(name) }

    /// A host as two spellings of it compare equal: lower-cased, an IPv6 address without its
    /// brackets, a name without its trailing dot (`FILES.example.org.` is `files.example.org`).
    static func comparableHost(_ host: String) -> String {
        var text = Substring(host.lowercased())
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if text.hasSuffix(".") { text = text.dropLast() }
        return String(text)
    }
}

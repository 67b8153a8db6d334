import Foundation
import Networking

/// The identity of a stored answer: the request method, its URL (scheme, host and port
/// normalised, query items sorted by name), the route's name and the discriminator — the
/// session's user by default — so that two users never share an entry.
///
/// The key's text is an unambiguous serialisation: every part is written with its length
/// (`5:books`), so no choice of names or values can make two different requests produce the
/// same text. WebApiClient concatenated sorted `name=value` items without separators, so
/// `{a: "1b=2"}` and `{a: "1", b: "2"}` collided; here they cannot. The text is stored in every
/// entry and compared when it is read, so even a collision of the digests used in file names
/// would only cost a miss.
///
/// Entries are stored under a name made of four digests, `route_discriminator_resource_key`,
/// so that every entry of a route (for one user or for all), or every entry of a resource, is
/// found from a folder listing alone, without reading any file.
struct CacheKey: Sendable, Hashable {
    /// The full, unambiguous key. It holds the query's values (a token, say), so it is never
    /// written to disk: ``stored`` is.
    let text: String
    /// What an entry keeps of its key, to tell it from another one stored under the same name: a
    /// digest of ``text``.
    let stored: String
    /// The route's name (`""` when the call has none).
    let routeName: String
    /// Whose entry this is; `nil` for one shared by everybody.
    let discriminator: String?
    /// The name the entry is stored under (see ``StoreName``).
    let storeName: StoreName

    /// Creates the key of a request.
    ///
    /// - Parameters:
    ///   - ignoresQuery: leave the query out (a route's `cacheIgnoreQueryParameters`).
    ///   - credential: the request's own credentials (``credential(of:)``), when it carries
    ///     some: their digest goes into the key (never the values), so requests made with
    ///     different credentials never share an entry even under one discriminator.
    ///   - secretFields: the values of its other fields named like a credential
    ///     (``secretFields(of:)``): their digest goes into the key too.
    init(
        method: HTTPMethod, url: URL, routeName: String?, discriminator: String?, ignoresQuery: Bool, credential: String? = nil,
        secretFields: String? = nil
    ) {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let resource = Self.resource(of: url, components: components)
        var text = "k2"
        Self.append(method.rawValue, to: &text)
        text += resource
        if ignoresQuery {
            text += "*"
        } else {
            let items = Self.queryItems(of: components?.percentEncodedQuery)
            text += "q\(items.count):"
            for item in items {
                Self.append(item.name, to: &text)
                if let value = item.value {
                    text += "="
                    Self.append(value, to: &text)
                } else {
                    text += "-"
                }
            }
        }
        Self.append(routeName ?? "", to: &text)
        Self.append(discriminator, to: &text)
        Self.append(credential.map { SHA256Digest.hex("credential:" + $0) }, to: &text)
        if let secretFields { text += "f" + SHA256Digest.hex("fields:" + secretFields) }
        self.text = text
        stored = SHA256Digest.hex("key:" + text)
        self.routeName = routeName ?? ""
        self.discriminator = discriminator
        storeName = StoreName(
            route: StoreName.tag(forRoute: routeName ?? ""), discriminator: StoreName.tag(forDiscriminator: discriminator),
            resource: StoreName.tag(forResource: resource), key: SHA256Digest.hex(text, characters: 32), variant: nil)
    }

    /// The credentials a request carries of its own, as one text, or `nil` when it carries none:
    /// its `Authorization`, `Proxy-Authorization` and `Cookie` fields (the cookie storage's are
    /// added after the cache, and the session's credential is told by the discriminator), its
    /// other fields named like a credential that are not API keys (``isTokenField(_:)``: an
    /// `X-Auth-Token`, an `X-Session-Id`), the user and password of its URL (which a transport
    /// sends as Basic authentication), and its client certificate (mutual TLS), told apart by its
    /// format and files (or bytes). `isSecret` tells a credential's name (the repository's:
    /// `RequestContext.isSecretFieldName(_:)`).
    static func credential(
        of request: TransportRequest, isSecret: (String) -> Bool = HTTPHeaders.isSecretFieldName
    ) -> String? {
        var text = ""
        if let client = request.security.clientCertificate {
            append("client-certificate", to: &text)
            append(client.format.rawValue, to: &text)
            for source in [client.certificate, client.privateKey] {
                switch source {
                case .file(let url): append("file:" + url.path, to: &text)
                // Bytes in memory are told apart by their digest (the key text is digested too).
                case .data(let data): append("data:" + Data(SHA256Digest.hash(data)).base64EncodedString(), to: &text)
                case nil: append(nil, to: &text)
                }
            }
        }
        for name in ["Authorization", "Proxy-Authorization", "Cookie"] {
            for value in request.headers.values(for: name) {
                append(name, to: &text)
                append(value, to: &text)
            }
        }
        appendFields(of: request, where: { isTokenField($0, isSecret: isSecret) }, to: &text)
        if let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false),
            components.percentEncodedUser != nil || components.percentEncodedPassword != nil
        {
            append("userinfo", to: &text)
            append(components.percentEncodedUser, to: &text)
            append(components.percentEncodedPassword, to: &text)
        }
        return text.isEmpty ? nil : text
    }

    /// The request's API keys — fields named like a credential (`HTTPHeaders.isSecretFieldName(_:)`)
    /// whose name ends in `key`: an `X-Api-Key`, an `Ocp-Apim-Subscription-Key` of the
    /// configuration's default headers — as one text, or `nil` when it has none. Repositories
    /// sharing a cache with different keys, nobody logged in, must not share answers; yet such a
    /// key does not make a request authorized (an app with one static key keeps its caching).
    /// Fields that change with every request (a signature, a CSRF token) are left out: they
    /// would give every request an entry of its own.
    static func secretFields(of request: TransportRequest, isSecret: (String) -> Bool = HTTPHeaders.isSecretFieldName) -> String? {
        var text = ""
        appendFields(of: request, where: { isAPIKey($0) && isSecret($0) && !changesWithEveryRequest($0) }, to: &text)
        return text.isEmpty ? nil : text
    }

    /// Appends the request's fields whose lower-cased names `includes` takes, sorted by name, each
    /// value as a pair of its name and itself (a count-free list of values could read as another
    /// field's name and value).
    private static func appendFields(of request: TransportRequest, where includes: (String) -> Bool, to text: inout String) {
        for name in Set(request.headers.map { $0.name.lowercased() }).filter(includes).sorted() {
            for value in request.headers.values(for: name) {
                append(name, to: &text)
                append(value, to: &text)
            }
        }
    }

    /// Whether a field (lower-cased) is named like a credential that says who calls (`X-Auth-Token`,
    /// `X-Access-Token`, `X-Session-Id`): not `Authorization`, `Proxy-Authorization` or `Cookie`
    /// (``credential(of:)`` names them), not an API key (``secretFields(of:)``), and not one that
    /// changes with every request.
    static func isTokenField(_ name: String, isSecret: (String) -> Bool = HTTPHeaders.isSecretFieldName) -> Bool {
        !["authorization", "proxy-authorization", "cookie"].contains(name) && !isAPIKey(name)
            && isSecret(name) && !changesWithEveryRequest(name)
    }

    /// Whether a field (lower-cased) named like a credential is an API key: its name ends in
    /// `key` and does not name a session or token (an `X-Session-Key` says who calls).
    static func isAPIKey(_ name: String) -> Bool {
        name.hasSuffix("key") && !name.contains("session") && !name.contains("token")
    }

    /// Whether a field (lower-cased) named like a credential changes with every request, so that
    /// keying on it would give every request an entry of its own: a signature, a CSRF token, a nonce.
    static func changesWithEveryRequest(_ name: String) -> Bool {
        name == "sig" || ["signature", "csrf", "xsrf", "nonce"].contains { name.contains($0) }
    }

    /// `url` as an entry keeps it: without its user, query, fragment and path parameters
    /// (`/app;jsessionid=…`), which may hold secrets.
    static func storedURL(of url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        let path = components.percentEncodedPath
        if path.contains(";") {
            components.percentEncodedPath = path.split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.prefix { $0 != ";" } }.joined(separator: "/")
        }
        return components.string ?? ""
    }

    /// The scheme, host, port and path of `url`, normalised and length-prefixed: what a write to
    /// the URL invalidates (RFC 9111 §4.4), whatever the query.
    static func resource(of url: URL) -> String {
        resource(of: url, components: URLComponents(url: url, resolvingAgainstBaseURL: false))
    }

    /// Whether two URLs have the same origin: scheme, host and port (the scheme's default when
    /// none is written), compared as the key compares them.
    static func sameOrigin(_ one: URL, _ other: URL) -> Bool {
        origin(of: one, components: URLComponents(url: one, resolvingAgainstBaseURL: false))
            == origin(of: other, components: URLComponents(url: other, resolvingAgainstBaseURL: false))
    }

    /// The scheme and host, lowercased, and the port (the scheme's default when none is written).
    private static func origin(of url: URL, components: URLComponents?) -> (scheme: String, host: String, port: Int?) {
        let scheme = (components?.scheme ?? url.scheme ?? "").lowercased()
        let host = (components?.percentEncodedHost ?? url.host ?? "").lowercased()
        return (scheme, host, components?.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil))
    }

    private static func resource(of url: URL, components: URLComponents?) -> String {
        let (scheme, host, port) = origin(of: url, components: components)
        var path = components?.percentEncodedPath ?? url.path
        if path.isEmpty { path = "/" }
        var text = ""
        append(scheme, to: &text)
        append(host, to: &text)
        append(port.map(String.init), to: &text)
        append(path, to: &text)
        return text
    }

    /// The query's items as sent (still percent-encoded), sorted by name; items with the same
    /// name keep their order, since `a=1&a=2` and `a=2&a=1` may mean different things.
    /// Whether the answer from `answered` is for the resource `requested` asked for: the same
    /// scheme, host, port and path, and every query item of the request still there (an
    /// interceptor after the cache may add some, as an API key in the query; a redirect from
    /// `?v=latest` to `?v=42` leads to another resource — one that only adds items cannot be
    /// told from such an interceptor).
    static func sameResource(_ requested: URL, answeredBy answered: URL) -> Bool {
        guard resource(of: requested) == resource(of: answered) else { return false }
        // Each query item as one text, a value-less item told from an empty value.
        func items(of url: URL) -> [String] {
            queryItems(of: URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery)
                .map { "\($0.name)=\($0.value ?? "")\($0.value == nil ? "-" : "+")" }
        }
        var remaining = items(of: answered)
        for item in items(of: requested) {
            guard let index = remaining.firstIndex(of: item) else { return false }
            remaining.remove(at: index)
        }
        return true
    }

    static func queryItems(of query: String?) -> [(name: String, value: String?)] {
        guard let query, !query.isEmpty else { return [] }
        let items = query.split(separator: "&", omittingEmptySubsequences: false).map { piece -> (name: String, value: String?) in
            guard let equals = piece.firstIndex(of: "=") else { return (String(piece), nil) }
            return (String(piece[..<equals]), String(piece[piece.index(after: equals)...]))
        }
        return items.enumerated().sorted { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }.map(\.element)
    }

    /// Appends `value` with its length, or `-` for `nil`, so that `nil` and `""` differ.
    private static func append(_ value: String?, to text: inout String) {
        guard let value else {
            text += "-"
            return
        }
        text += "\(value.utf8.count):\(value)"
    }
}

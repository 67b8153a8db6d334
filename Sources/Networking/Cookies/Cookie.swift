import Foundation

/// One HTTP cookie as a ``CookieStorage`` keeps it (RFC 6265).
public struct Cookie: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The cookie's name.
    public var name: String
    /// The cookie's value, as the server sent it.
    public var value: String
    /// The host it belongs to, lower-cased, without a leading dot.
    public var domain: String
    /// Whether it is sent to ``domain`` only (no `Domain` attribute) rather than to its subdomains too.
    public var isHostOnly: Bool
    /// The path prefix of the URLs it is sent to.
    public var path: String
    /// When it expires, or `nil` for a cookie that lasts as long as its storage.
    public var expiresAt: Date?
    /// Whether it is sent over `https` only.
    public var isSecure: Bool
    /// Whether the server marked it `HttpOnly` (kept from scripts; sent like any other here).
    public var isHTTPOnly: Bool

    /// Creates a cookie.
    public init(
        name: String, value: String, domain: String, isHostOnly: Bool = true, path: String = "/",
        expiresAt: Date? = nil, isSecure: Bool = false, isHTTPOnly: Bool = false
    ) {
        self.name = name
        self.value = value
        self.domain = domain.lowercased()
        self.isHostOnly = isHostOnly
        self.path = path
        self.expiresAt = expiresAt
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
    }

    /// `name=value`, as a `Cookie` header carries it. Values are not logged elsewhere: they are credentials.
    public var description: String { "\(name)=\(Redaction.placeholder) (\(domain)\(path))" }

    /// What `dump` and debuggers show: every field but the value, which is redacted.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "name": name, "value": Redaction.placeholder, "domain": domain, "isHostOnly": isHostOnly, "path": path,
                "expiresAt": expiresAt as Any, "isSecure": isSecure, "isHTTPOnly": isHTTPOnly,
            ])
    }

    /// Whether the cookie goes with a request to `url` at `now` (RFC 6265 §5.4).
    public func matches(_ url: URL, at now: Date = Date()) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        if let expiresAt, expiresAt <= now { return false }
        if isSecure, url.scheme?.lowercased() != "https" { return false }
        return (isHostOnly ? host == domain : Self.domainMatches(host, domain)) && Self.pathMatches(Self.requestPath(of: url), path)
    }

    /// The URL's path as sent, trailing `/` included (`URL.path` drops it), `/` when empty.
    static func requestPath(of url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path
        return path.isEmpty ? "/" : path
    }

    /// RFC 6265 §5.1.3: the host is the domain, or a name under it (never an IP address).
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        if host == domain { return true }
        return host.hasSuffix("." + domain) && !isIPAddress(host)
    }

    /// RFC 6265 §5.1.4: the cookie path is the request path, or a prefix of it ending at a `/`.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return requestPath.count == cookiePath.count || cookiePath.hasSuffix("/")
            || requestPath.dropFirst(cookiePath.count).first == "/"
    }

    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || (!host.isEmpty && host.allSatisfy { $0.isNumber || $0 == "." })
    }
}

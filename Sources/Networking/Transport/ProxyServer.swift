import Foundation

/// A forward proxy that ``LibcurlTransport`` opens its connections through: the HTTP proxy of a
/// corporate network or a build farm, an egress proxy in front of a cluster, or a SOCKS5 tunnel.
///
/// Give it to the transport, and the transport to the repositories that should use it
/// (`transport:` in their initializer):
///
/// ```swift
/// let proxy = ProxyServer(.http, host: "proxy.internal", port: 3128, username: "ci", password: secret)
/// let transport = LibcurlTransport(proxy: proxy)
/// ```
///
/// What the proxy sees depends on the target's scheme:
/// - an `https` target is reached through a tunnel (`CONNECT` for ``Kind/http`` and
///   ``Kind/https`` proxies): TLS runs end to end with the server, and pins, certificate
///   authorities and client certificates apply to the server as without a proxy. The proxy sees
///   the host name and port, never the request.
/// - an `http` target's request goes to an HTTP proxy whole (headers, tokens and body), as it
///   would cross any network in the clear; through SOCKS5 it is tunnelled too.
///
/// A proxy that will not open the way to the server fails the call with
/// ``NetworkFailure/proxyRefused(status:)``, never an answer that could pass for the server's:
/// an HTTP proxy's status for a tunnel (407 without the credentials it wants, 403 for a server
/// its rules forbid, 502 for one it cannot reach), and 407 or 403 from a SOCKS5 proxy for refused
/// credentials or a forbidden connection. So the offline queue keeps its requests, a token
/// refresh is not taken as refused, and the response cache keeps what it holds. An `http`
/// target's request, which an HTTP proxy answers itself, is the exception: its refusal is a
/// response, as from any HTTP hop (the offline queue keeps a request answered 407, which only a
/// proxy sends). A SOCKS5 proxy that reports that the server refused it fails with
/// ``NetworkFailure/connectionRefused``, and a proxy that cannot be reached fails as a server
/// would (``NetworkFailure/connectionRefused``, ``NetworkFailure/hostNotFound``).
///
/// Credentials go to an HTTP proxy as Basic authentication (a proxy that asks for Digest, NTLM
/// or Negotiate answers 407 each time), in the clear to an ``Kind/http`` proxy: use an
/// ``Kind/https`` proxy where the network between is not trusted.
///
/// Without a proxy of its own, ``LibcurlTransport`` reads the environment variables curl reads
/// (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`) unless told not to. A
/// ``URLSessionTransport`` takes its proxy from its `URLSessionConfiguration`
/// (`connectionProxyDictionary` on Apple platforms).
///
/// The password is never logged or printed: ``description`` and `dump` show whether there is
/// one, not what it is.
public struct ProxyServer: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// How the transport speaks to the proxy itself.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// An HTTP proxy reached over plain HTTP (Squid, tinyproxy, most corporate proxies).
        case http
        /// An HTTP proxy reached over TLS: the connection to the proxy is encrypted too, and the
        /// proxy's certificate is checked (against ``ProxyServer/certificateAuthorityFile`` when
        /// set, else the system's authorities).
        case https
        /// A SOCKS5 proxy (RFC 1928; `ssh -D`, Tor, Dante), with a username and password
        /// (RFC 1929) when given. Host names are resolved by the proxy, as `socks5h://` in curl,
        /// so names that only the proxy's network knows work and no lookup leaks from this side.
        case socks5
    }

    /// How the transport speaks to the proxy.
    public var kind: Kind
    /// The proxy's host name or IP address (an IPv6 address without brackets).
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The user the proxy knows this client as (HTTP Basic, or SOCKS5 username and password, at
    /// most 255 bytes each); `nil` for none.
    public var username: String?
    /// The password that goes with ``username``.
    public var password: String?
    /// Hosts reached directly, as curl's `no_proxy` reads them, compared with the host as the
    /// request's URL writes it (never with the addresses a name resolves to): a name matches
    /// itself and the names under it (`"example.com"` matches `"api.example.com"`), an IPv4
    /// address or range (`"10.0.0.0/8"`) the addresses written within it, an IPv6 address
    /// itself, and `"*"` every host. `"localhost"` does not cover `"127.0.0.1"`: list both. The
    /// environment's `no_proxy` is not read when a proxy is given.
    public var excludedHosts: [String]
    /// The PEM file of the authorities an ``Kind/https`` proxy's certificate is checked
    /// against, in place of the system's; unused by the other kinds. The server's own
    /// certificate is checked as without a proxy.
    public var certificateAuthorityFile: URL?

    /// A proxy at `host` and `port`, spoken to as `kind`.
    public init(
        _ kind: Kind, host: String, port: Int, username: String? = nil, password: String? = nil,
        excludedHosts: [String] = [], certificateAuthorityFile: URL? = nil
    ) {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.excludedHosts = excludedHosts
        self.certificateAuthorityFile = certificateAuthorityFile
    }

    /// A proxy written as a URL: `http://user:password@proxy.internal:3128`, `https://…`,
    /// `socks5://…` or `socks5h://…` (both resolve names at the proxy). The user and password are
    /// percent-decoded. Unlike curl's reading of `https_proxy`, the scheme is required and a
    /// missing port is the scheme's own (`http` 80, `https` 443, SOCKS5 1080; curl takes 1080
    /// for all).
    ///
    /// Returns `nil` for another scheme or none (`proxy.internal:3128`), a URL without a host, one
    /// with a path, query or fragment, a port too large for any number, or a user or password
    /// that does not decode to UTF-8 text.
    public init?(url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), components.host?.isEmpty == false,
            ["", "/"].contains(components.percentEncodedPath), components.percentEncodedQuery == nil,
            components.percentEncodedFragment == nil, !BaseURLText.hasUnreadablePort(components),
            (components.percentEncodedUser == nil) == (components.user == nil),
            (components.percentEncodedPassword == nil) == (components.password == nil)
        else { return nil }
        let host = BaseURLText.host(of: components)
        let kind: Kind
        let defaultPort: Int
        switch scheme {
        case "http": (kind, defaultPort) = (.http, 80)
        case "https": (kind, defaultPort) = (.https, 443)
        case "socks5", "socks5h": (kind, defaultPort) = (.socks5, 1080)
        default: return nil
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.init(kind, host: bare, port: components.port ?? defaultPort, username: components.user, password: components.password)
    }

    /// The kind, address and user, and whether there is a password — never the password.
    public var description: String {
        let name =
            switch kind {
            case .http: "HTTP"
            case .https: "HTTPS"
            case .socks5: "SOCKS5"
            }
        let user = username.map { " as \($0)" } ?? ""
        let secret = password == nil ? "" : ", with a password"
        let direct = excludedHosts.isEmpty ? "" : ", not for \(excludedHosts.joined(separator: ", "))"
        return "\(name) proxy \(shownAuthority)\(user)\(secret)\(direct)"
    }

    /// What `dump` and debuggers show: the password is left out.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "kind": kind, "host": shownHost, "port": port, "username": username as Any,
                "password": password == nil ? "none" : "<redacted>", "excludedHosts": excludedHosts,
                "certificateAuthorityFile": certificateAuthorityFile as Any,
            ])
    }

    /// `host:port`, with an IPv6 address in brackets.
    var authority: String { bracketed(host) + ":\(port)" }

    /// The host as descriptions and errors show it: a host given as a whole proxy URL with its
    /// credentials (`http://user:secret@proxy`, a mistake easily made with `HTTPS_PROXY`) shows
    /// nothing before its last `@`.
    var shownHost: String {
        guard let at = host.lastIndex(of: "@") else { return Redaction.standard.redactText(host) }
        return Redaction.placeholder + host[at...]
    }

    /// ``authority`` as descriptions and errors show it (see ``shownHost``).
    private var shownAuthority: String { bracketed(shownHost) + ":\(port)" }

    /// The host's text in brackets when the host is an IPv6 address (holds a colon).
    private func bracketed(_ text: String) -> String { host.contains(":") ? "[\(text)]" : text }

    /// Why this proxy cannot be used, or `nil` when it can: a transport with it refuses every
    /// request with this text rather than connect somewhere else.
    var problem: String? {
        // The configuration's rule: `10.0.0.1:3128` is an address with its port, not an IPv6 address.
        let isIPv6 = NetworkingConfiguration.ipv6Literal(host) != nil
        if host.isEmpty || (host.contains(":") && !isIPv6)
            || host.contains(where: { $0.isWhitespace || "/@?#[]".contains($0) || $0.asciiValue.map { $0 < 32 || $0 == 127 } == true })
        {
            return "the proxy's host \"\(shownHost)\" is not a host name or IP address (its port goes in `port`)"
        }
        guard (1...65535).contains(port) else { return "the proxy's port \(port) is not between 1 and 65535" }
        if username?.contains("\0") == true || password?.contains("\0") == true {
            return "the proxy's username or password contains a NUL character"
        }
        if password != nil, username == nil { return "the proxy has a password but no username" }
        if kind == .socks5, (username?.utf8.count ?? 0) > 255 || (password?.utf8.count ?? 0) > 255 {
            return "a SOCKS5 proxy's username and password are at most 255 bytes each"
        }
        for entry in excludedHosts
        where entry.isEmpty || entry.contains(where: { $0 == "," || $0.isWhitespace || $0.asciiValue.map { $0 < 32 } == true }) {
            return "the proxy's excluded host \"\(entry)\" is empty or contains a comma, a space or a control character"
        }
        return nil
    }
}

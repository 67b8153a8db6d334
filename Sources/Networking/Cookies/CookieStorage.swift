import Foundation
import Synchronization

/// Keeps the cookies servers set, in memory, and sends them back with later requests — opt-in:
/// a configuration keeps and sends cookies only when given one (``NetworkingConfiguration/cookieStorage``).
///
/// ```swift
/// let cookies = CookieStorage()
/// configuration.cookieStorage = cookies
/// // after a call: cookies.cookies(for: URL(string: "https://api.example.com/cart")!)
/// ```
///
/// It follows RFC 6265: host-only and domain cookies, paths, `Secure`, `Max-Age` and `Expires`
/// (an expired cookie is removed). A hostile server cannot fill memory: at most
/// ``maximumCookiesPerDomain`` per domain and ``maximumCookies`` in all, expired cookies going
/// first, then the oldest that is not `Secure` (a `Secure` one only for an answer over https);
/// when the storage is full, room is made among the cookies of the site (registrable domain) that
/// set the most, so one server, or the many subdomains of one site, cannot push out another's
/// session. Answers over plain `http` cannot set a `Secure`
/// cookie, nor replace or shadow one (RFC 6265bis §5.7), and a `__Secure-` or `__Host-` cookie
/// that breaks its name's promise (not `Secure`; for `__Host-`, a `Domain` or no `Path=/`) is
/// dropped (§4.1.3); cookies an app sets itself (``set(_:)``) are taken as they are. A `Domain`
/// attribute naming a single
/// label is refused; give `isPublicSuffix` (from the Public Suffix List, for example) to refuse
/// `co.uk` or `github.io` too.
/// Cookies set by the answers to redirects are kept too: the library's transports follow
/// redirects themselves, storing each hop's `Set-Cookie` fields here and choosing the next hop's
/// `Cookie` from this storage for that hop's URL. A field with a control character in it is
/// ignored (RFC 6265bis §5.6), so one bad cookie cannot break the `Cookie` header of every request.
///
/// Thread-safe; share one storage between configurations to share cookies.
public final class CookieStorage: Sendable {
    /// The most cookies kept for one domain. Default 50.
    public let maximumCookiesPerDomain: Int
    /// The most cookies kept in all. Default 3000.
    public let maximumCookies: Int

    private struct Entry {
        var cookie: Cookie
        var created: UInt64
        /// The site (registrable domain) of the host whose answer set it — the cookie's domain's
        /// for one given to ``set(_:)`` — so that one site's many subdomains count as one.
        var source: String

        func isExpired(at date: Date) -> Bool { cookie.expiresAt.map { $0 <= date } ?? false }
    }

    private struct State {
        var entries: [Entry] = []
        var counter: UInt64 = 0
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Date
    private let isPublicSuffix: @Sendable (String) -> Bool

    /// Creates an empty storage; limits below 1 become 1.
    ///
    /// - Parameters:
    ///   - maximumCookiesPerDomain: the most cookies kept for one domain.
    ///   - maximumCookies: the most cookies kept in all.
    ///   - now: the clock expiry is judged by (tests move it by hand).
    ///   - isPublicSuffix: whether a lower-cased domain is a public suffix, under which anyone may
    ///     register names (`co.uk`, `github.io`): a `Domain` attribute naming one is refused
    ///     unless it is the sending host, and a full storage tells sites apart by it. The default
    ///     knows none: single labels such as `com` are always refused, and a site is a host's
    ///     last two labels, so all of `*.co.uk` count as one site when making room.
    public init(
        maximumCookiesPerDomain: Int = 50, maximumCookies: Int = 3000, now: @escaping @Sendable () -> Date = { Date() },
        isPublicSuffix: @escaping @Sendable (String) -> Bool = { _ in false }
    ) {
        self.maximumCookiesPerDomain = max(1, maximumCookiesPerDomain)
        self.maximumCookies = max(1, maximumCookies)
        self.now = now
        self.isPublicSuffix = isPublicSuffix
    }

    /// The cookies that go with a request to `url` now, longest path first (RFC 6265 §5.4).
    public func cookies(for url: URL) -> [Cookie] {
        let date = now()
        return state.withLock { state in
            state.entries.removeAll { $0.isExpired(at: date) }
            return state.entries.filter { $0.cookie.matches(url, at: date) }
                .sorted { ($0.cookie.path.count, $1.created) > ($1.cookie.path.count, $0.created) }
                .map(\.cookie)
        }
    }

    /// Every cookie kept, expired ones removed first.
    public var allCookies: [Cookie] {
        let date = now()
        return state.withLock { state in
            state.entries.removeAll { $0.isExpired(at: date) }
            return state.entries.map(\.cookie)
        }
    }

    /// Keeps a cookie, replacing one with the same name, domain and path; an expired one removes it.
    ///
    /// The domain is lower-cased; a leading dot (`.example.com`, `HTTPCookie`'s form of a domain
    /// cookie) is dropped and makes the cookie a domain cookie, unless the rest is a single label
    /// or a public suffix. A cookie that could not be sent — an empty name or domain, `=` or `;`
    /// in its name, `;` in its value, a control character in its name,
    /// value, domain or path, or a name and value longer than 4,096 bytes together — is not kept.
    public func set(_ cookie: Cookie) {
        var cookie = cookie
        cookie.domain = cookie.domain.lowercased()
        if cookie.domain.hasPrefix(".") {
            cookie.domain.removeFirst()
            // A domain cookie, unless the domain is a single label or a public suffix: then it
            // would go to every site under it, so it stays host-only.
            cookie.isHostOnly = !SetCookieParser.mayBeShared(cookie.domain, isPublicSuffix: isPublicSuffix)
        }
        let fields = [cookie.name, cookie.value, cookie.domain, cookie.path]
        // Bytes, not characters: `;` before a combining accent is one character.
        guard !cookie.name.isEmpty, !cookie.domain.isEmpty, !cookie.name.utf8.contains(UInt8(ascii: "=")),
            !cookie.name.utf8.contains(UInt8(ascii: ";")), !cookie.value.utf8.contains(UInt8(ascii: ";")),
            cookie.name.utf8.count + cookie.value.utf8.count <= SetCookieParser.maximumNameAndValueLength,
            !fields.contains(where: { $0.utf8.contains(where: SetCookieParser.isForbiddenControl) })
        else { return }
        keep(cookie, from: cookie.domain, secureOrigin: true)
    }

    private func keep(_ cookie: Cookie, from host: String, secureOrigin: Bool) {
        let source = site(of: host)
        let date = now()
        state.withLock { state in
            // An answer over http may not replace or shadow a Secure cookie of the same name
            // whose domain and path overlap its own (RFC 6265bis §5.7, step 16).
            if !secureOrigin, !cookie.isSecure,
                state.entries.contains(where: { entry in
                    entry.cookie.isSecure && entry.cookie.name == cookie.name
                        && (Cookie.domainMatches(entry.cookie.domain, cookie.domain)
                            || Cookie.domainMatches(cookie.domain, entry.cookie.domain))
                        && Cookie.pathMatches(cookie.path, entry.cookie.path)
                })
            {
                return
            }
            // The host-only flag is part of a cookie's identity (RFC 6265bis §5.7): a
            // sibling host's `Domain=example.com` cookie never replaces or deletes the API's own
            // host-only one of the same name.
            let existing = state.entries.firstIndex {
                $0.cookie.name == cookie.name && $0.cookie.domain == cookie.domain && $0.cookie.path == cookie.path
                    && $0.cookie.isHostOnly == cookie.isHostOnly
            }
            let created = existing.map { state.entries[$0].created }
            if let existing { state.entries.remove(at: existing) }
            if let expiresAt = cookie.expiresAt, expiresAt <= date { return }
            state.counter += 1
            state.entries.append(Entry(cookie: cookie, created: created ?? state.counter, source: source))
            // Making room (RFC 6265bis §5.7, the last step): expired cookies go first, then the
            // oldest that is not Secure; a Secure one only for an answer over https. Else an
            // answer over http could push a Secure session out with junk and then set its own.
            state.entries.removeAll { $0.isExpired(at: date) }
            let sameDomain = state.entries.indices.filter { state.entries[$0].cookie.domain == cookie.domain }
            if sameDomain.count > maximumCookiesPerDomain,
                let oldest = Self.evictable(sameDomain, of: state.entries, secureOrigin: secureOrigin)
            {
                state.entries.remove(at: oldest)
            }
            if state.entries.count > maximumCookies {
                Self.evictFromLargestSource(&state.entries, setBy: source, secureOrigin: secureOrigin)
            }
        }
    }

    /// Of `candidates` (indices of `entries`, oldest first), the one to remove: the oldest that
    /// is not Secure, else, for an answer over https, the oldest. An answer over http always
    /// finds one: the cookie it just set is not Secure.
    private static func evictable(_ candidates: [Int], of entries: [Entry], secureOrigin: Bool) -> Int? {
        candidates.first { !entries[$0].cookie.isSecure } ?? (secureOrigin ? candidates.first : nil)
    }

    /// The registrable domain of a host: one label more than the longest public suffix
    /// `isPublicSuffix` names, else its last two labels (`a.b.evil.test` → `evil.test`); an IP
    /// address is its own.
    private func site(of host: String) -> String {
        guard !Cookie.isIPAddress(host) else { return host }
        let labels = host.split(separator: ".", omittingEmptySubsequences: true)
        guard labels.count > 2 else { return labels.joined(separator: ".") }
        for start in 1..<labels.count where isPublicSuffix(labels[start...].joined(separator: ".")) {
            return labels[(start - 1)...].joined(separator: ".")
        }
        return labels.suffix(2).joined(separator: ".")
    }

    /// Removes the oldest cookie of the site that set the most, so that a server filling the
    /// storage (from one host or many of its subdomains) pushes out its own cookies, not another's;
    /// as within a domain, one that is not Secure first. When an answer over http set the cookie
    /// and that site has only Secure ones, the oldest cookie of the setting site that is not
    /// Secure goes instead (at worst the one just set), never another site's.
    private static func evictFromLargestSource(_ entries: inout [Entry], setBy setter: String, secureOrigin: Bool) {
        var counts: [String: Int] = [:]
        for entry in entries { counts[entry.source, default: 0] += 1 }
        guard let most = counts.values.max() else { return }
        // Of sites that set as many, the one with the oldest cookie.
        guard let site = entries.first(where: { counts[$0.source] == most })?.source else { return }
        let candidates = entries.indices.filter { entries[$0].source == site }
        let victim =
            evictable(candidates, of: entries, secureOrigin: secureOrigin)
            ?? evictable(entries.indices.filter { entries[$0].source == setter }, of: entries, secureOrigin: secureOrigin)
        if let victim { entries.remove(at: victim) }
    }

    /// Removes every cookie.
    public func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }

    /// The `Cookie` header value for a request to `url`, or `nil` when no cookie matches.
    func headerValue(for url: URL) -> String? {
        let matching = cookies(for: url)
        guard !matching.isEmpty else { return nil }
        return matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Keeps the cookies a response sets: one per `Set-Cookie` field, as transports give them
    /// (libcurl keeps repeated fields apart; the URLSession transport splits what URLSession
    /// joined). A field is never split again at its commas: a value holding one (`sid="a,b";
    /// Secure`) would lose its attributes, `Secure` among them.
    func store(from response: TransportResponse, of request: TransportRequest) {
        let url = response.url ?? request.url
        guard let host = url.host?.lowercased() else { return }
        let secureOrigin = url.scheme?.lowercased() == "https"
        let date = now()
        for field in response.headers.values(for: "Set-Cookie") {
            if let cookie = SetCookieParser.cookie(from: field, for: url, now: date, isPublicSuffix: isPublicSuffix) {
                keep(cookie, from: host, secureOrigin: secureOrigin)
            }
        }
    }
}

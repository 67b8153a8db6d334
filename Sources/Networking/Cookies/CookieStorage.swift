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
/// ``maximumCookiesPerDomain`` per domain and ``maximumCookies`` in all, the oldest going first.
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
    }

    private struct State {
        var entries: [Entry] = []
        var counter: UInt64 = 0
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Date

    /// Creates an empty storage; limits below 1 become 1.
    public init(maximumCookiesPerDomain: Int = 50, maximumCookies: Int = 3000, now: @escaping @Sendable () -> Date = { Date() }) {
        self.maximumCookiesPerDomain = max(1, maximumCookiesPerDomain)
        self.maximumCookies = max(1, maximumCookies)
        self.now = now
    }

    /// The cookies that go with a request to `url` now, longest path first (RFC 6265 §5.4).
    public func cookies(for url: URL) -> [Cookie] {
        let date = now()
        return state.withLock { state in
            state.entries.removeAll { $0.cookie.expiresAt.map { $0 <= date } ?? false }
            return state.entries.filter { $0.cookie.matches(url, at: date) }
                .sorted { ($0.cookie.path.count, $1.created) > ($1.cookie.path.count, $0.created) }
                .map(\.cookie)
        }
    }

    /// Every cookie kept, expired ones removed first.
    public var allCookies: [Cookie] {
        let date = now()
        return state.withLock { state in
            state.entries.removeAll { $0.cookie.expiresAt.map { $0 <= date } ?? false }
            return state.entries.map(\.cookie)
        }
    }

    /// Keeps a cookie, replacing one with the same name, domain and path; an expired one removes it.
    public func set(_ cookie: Cookie) {
        let date = now()
        state.withLock { state in
            let existing = state.entries.firstIndex {
                $0.cookie.name == cookie.name && $0.cookie.domain == cookie.domain && $0.cookie.path == cookie.path
            }
            let created = existing.map { state.entries[$0].created }
            if let existing { state.entries.remove(at: existing) }
            if let expiresAt = cookie.expiresAt, expiresAt <= date { return }
            state.counter += 1
            state.entries.append(Entry(cookie: cookie, created: created ?? state.counter))
            let sameDomain = state.entries.indices.filter { state.entries[$0].cookie.domain == cookie.domain }
            if sameDomain.count > maximumCookiesPerDomain, let oldest = sameDomain.first { state.entries.remove(at: oldest) }
            if state.entries.count > maximumCookies { state.entries.removeFirst() }
        }
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

    /// Keeps the cookies a response sets.
    func store(from response: TransportResponse, of request: TransportRequest) {
        let url = response.url ?? request.url
        let date = now()
        for field in response.headers.values(for: "Set-Cookie") {
            for value in SetCookieParser.split(field) {
                if let cookie = SetCookieParser.cookie(from: value, for: url, now: date) { set(cookie) }
            }
        }
    }
}

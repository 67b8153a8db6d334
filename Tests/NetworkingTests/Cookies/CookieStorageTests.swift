import Foundation
import NetworkingTestSupport
import Synchronization
import Testing

@testable import Networking

/// A time that tests move by hand.
private final class ManualTime: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_700_000_000))

    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0.addTimeInterval(seconds) } }
}

@Suite("CookieStorage")
struct CookieStorageTests {
    private func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    /// Stores what a response from `text` with these `Set-Cookie` fields sets.
    private func receive(_ fields: [String], from text: String, into storage: CookieStorage) throws {
        var headers = HTTPHeaders()
        for field in fields { headers.add(name: "Set-Cookie", value: field) }
        let request = TransportRequest(method: .get, url: try url(text))
        storage.store(from: TransportResponse(statusCode: 200, headers: headers, url: request.url), of: request)
    }

    @Test("Cookies a response sets are kept and go back with matching requests only")
    func keepsAndMatches() throws {
        // Given
        let storage = CookieStorage()
        // When
        try receive(
            ["a=1; Path=/", "b=2; Path=/docs", "c=3; Domain=example.com; Path=/", "d=4; Secure; Path=/"],
            from: "https://api.example.com/login", into: storage)
        // Then
        #expect(storage.cookies(for: try url("https://api.example.com/docs/x")).map(\.name) == ["b", "a", "c", "d"])
        #expect(storage.cookies(for: try url("http://api.example.com/")).map(\.name) == ["a", "c"])
        #expect(storage.cookies(for: try url("https://www.example.com/")).map(\.name) == ["c"])
        #expect(storage.cookies(for: try url("https://other.org/")).isEmpty)
        #expect(storage.headerValue(for: try url("https://api.example.com/docs")) == "b=2; a=1; c=3; d=4")
        #expect(storage.allCookies.count == 4)
    }

    @Test("Longer paths come first, then older cookies")
    func order() throws {
        // Given
        let storage = CookieStorage()
        // When
        try receive(["z=1; Path=/", "y=2; Path=/a/b", "x=3; Path=/a", "w=4; Path=/"], from: "https://h.example/", into: storage)
        // Then
        #expect(storage.cookies(for: try url("https://h.example/a/b/c")).map(\.name) == ["y", "x", "z", "w"])
    }

    @Test("A cookie with the same name, domain and path replaces the old one and keeps its place")
    func replaces() throws {
        // Given
        let storage = CookieStorage()
        try receive(["a=1; Path=/", "b=2; Path=/"], from: "https://h.example/", into: storage)
        // When
        try receive(["a=changed; Path=/", "a=other-path; Path=/x"], from: "https://h.example/", into: storage)
        // Then
        #expect(storage.cookies(for: try url("https://h.example/")).map { "\($0.name)=\($0.value)" } == ["a=changed", "b=2"])
        #expect(storage.allCookies.count == 3)
    }

    @Test("A sibling host's cookie for the parent domain neither replaces nor deletes the API's host-only one of the same name")
    func hostOnlyIsPartOfTheIdentity() throws {
        // Given: the API's own session cookie
        let storage = CookieStorage()
        try receive(["sid=api; Path=/"], from: "https://example.com/login", into: storage)
        // When: another host under it sets and then deletes a sid for the whole domain
        try receive(["sid=fixed; Domain=example.com; Path=/"], from: "https://tenant.example.com/", into: storage)
        try receive(["sid=; Domain=example.com; Path=/; Max-Age=0"], from: "https://tenant.example.com/", into: storage)
        // Then
        #expect(storage.cookies(for: try url("https://example.com/")).map { "\($0.name)=\($0.value)" } == ["sid=api"])
    }

    @Test("A cookie expires with its Max-Age, and Max-Age=0 or a past Expires removes it")
    func expiry() throws {
        // Given
        let time = ManualTime()
        let storage = CookieStorage(now: { time.now })
        try receive(
            ["short=1; Max-Age=10; Path=/", "long=2; Max-Age=1000; Path=/", "gone=3; Path=/"], from: "https://h.example/", into: storage)
        // When
        time.advance(5)
        let early = storage.cookies(for: try url("https://h.example/")).map(\.name)
        time.advance(5)
        let late = storage.cookies(for: try url("https://h.example/")).map(\.name)
        try receive(
            ["gone=; Max-Age=0; Path=/", "long=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/"], from: "https://h.example/", into: storage)
        // Then
        #expect(early == ["short", "long", "gone"])
        #expect(late == ["long", "gone"])
        #expect(storage.allCookies.isEmpty)
    }

    @Test("At most maximumCookiesPerDomain per domain, the oldest going first; other domains keep theirs")
    func perDomainCap() throws {
        // Given
        let storage = CookieStorage(maximumCookiesPerDomain: 3)
        try receive(["keep=1; Path=/"], from: "https://other.example/", into: storage)
        // When
        try receive((1...5).map { "c\($0)=\($0); Path=/" }, from: "https://h.example/", into: storage)
        // Then
        #expect(storage.cookies(for: try url("https://h.example/")).map(\.name) == ["c3", "c4", "c5"])
        #expect(storage.cookies(for: try url("https://other.example/")).map(\.name) == ["keep"])
    }

    @Test("At most maximumCookies in all, the oldest of the host that set the most going first")
    func totalCap() throws {
        // Given
        let storage = CookieStorage(maximumCookiesPerDomain: 10, maximumCookies: 4)
        // When
        for host in ["a.example", "b.example", "c.example"] {
            try receive(["x=1; Path=/", "y=2; Path=/"], from: "https://\(host)/", into: storage)
        }
        // Then: a's oldest went when c's first came, then b's oldest (a then had fewer)
        #expect(storage.allCookies.count == 4)
        #expect(storage.cookies(for: try url("https://a.example/")).map(\.name) == ["y"])
        #expect(storage.cookies(for: try url("https://b.example/")).map(\.name) == ["y"])
        #expect(storage.cookies(for: try url("https://c.example/")).map(\.name) == ["x", "y"])
    }

    @Test("A host filling the storage, with cookies for each of its parent domains, pushes out its own, not another's session")
    func floodingHost() async throws {
        // Given: the API's session, then a host 60 labels deep setting 50 cookies on each parent
        let storage = CookieStorage()
        try receive(["session=s; Path=/; Secure"], from: "https://api.example.com/login", into: storage)
        let labels = (0..<60).map { "l\($0)" }
        let host = labels.joined(separator: ".") + ".evil.test"
        for depth in 0..<60 {
            let domain = labels[depth...].joined(separator: ".") + ".evil.test"
            try receive((0..<50).map { "c\($0)=v; Domain=\(domain); Path=/" }, from: "https://\(host)/", into: storage)
            // Seconds of work in a debug build: the other tests' awaits get their turn.
            await Task.yield()
        }
        // Then
        #expect(storage.allCookies.count == 3000)
        #expect(storage.cookies(for: try url("https://api.example.com/")).map(\.name) == ["session"])
    }

    @Test("An answer over http cannot set a Secure cookie, nor replace or shadow one (RFC 6265bis §5.7)")
    func secureCookiesFromHTTP() throws {
        // Given
        let storage = CookieStorage()
        try receive(["sid=good; Path=/; Secure"], from: "https://api.example.com/login", into: storage)
        // When: answers over http try to replace it, shadow it on a longer path, and set a Secure one
        try receive(["sid=evil; Path=/", "sid=evil; Path=/account", "other=1; Secure"], from: "http://api.example.com/", into: storage)
        // Then
        #expect(storage.allCookies.map(\.value) == ["good"])
        // An https answer may still replace it, and http may set other names
        try receive(["sid=new; Path=/; Secure"], from: "https://api.example.com/", into: storage)
        try receive(["theme=dark; Path=/"], from: "http://api.example.com/", into: storage)
        #expect(storage.allCookies.map(\.value).sorted() == ["dark", "new"])
    }

    @Test("A public suffix given to the storage cannot be a cookie's domain, unless it is the host")
    func publicSuffixes() throws {
        // Given
        let storage = CookieStorage(isPublicSuffix: { ["co.uk", "herokuapp.com"].contains($0) })
        // When
        try receive(["a=1; Domain=co.uk"], from: "https://evil.co.uk/", into: storage)
        try receive(["b=2; Domain=herokuapp.com"], from: "https://x.herokuapp.com/", into: storage)
        try receive(["c=3; Domain=shop.co.uk"], from: "https://www.shop.co.uk/", into: storage)
        try receive(["d=4; Domain=herokuapp.com"], from: "https://herokuapp.com/", into: storage)
        // Then: the suffix's own cookie stays host-only, so its tenants never get it
        #expect(storage.allCookies.map(\.name).sorted() == ["c", "d"])
        #expect(storage.cookies(for: try url("https://x.herokuapp.com/")).isEmpty)
        #expect(storage.cookies(for: try url("https://herokuapp.com/")).map(\.name) == ["d"])
    }

    @Test("Many subdomains of one site filling the storage count as one site: the API's session stays")
    func floodingSubdomains() async throws {
        // Given: the API's two cookies, then 3000 hosts under one site setting one cookie each
        let storage = CookieStorage()
        try receive(["session=s; Path=/", "theme=t; Path=/"], from: "https://api.example.com/login", into: storage)
        for number in 0..<3000 {
            try receive(["c=v; Path=/"], from: "https://a\(number).evil.test/", into: storage)
            if number % 50 == 0 { await Task.yield() }
        }
        // Then
        #expect(storage.allCookies.count == 3000)
        #expect(storage.cookies(for: try url("https://api.example.com/")).map(\.name).sorted() == ["session", "theme"])
    }

    @Test("Cookies given by hand are normalised, and ones that could not be sent are not kept")
    func setByHandNormalised() throws {
        // Given
        let storage = CookieStorage()
        // When
        storage.set(Cookie(name: "ok", value: "1", domain: ".Example.COM"))
        storage.set(Cookie(name: "bad", value: "a\r\nInjected: 1", domain: "example.com"))
        storage.set(Cookie(name: "", value: "1", domain: "example.com"))
        storage.set(Cookie(name: "semi", value: "a; b=c", domain: "example.com"))
        storage.set(Cookie(name: "big", value: String(repeating: "x", count: 5000), domain: "example.com"))
        storage.set(Cookie(name: "nowhere", value: "1", domain: "."))
        storage.set(Cookie(name: "tld", value: "1", domain: ".com"))
        // Then
        #expect(storage.allCookies.map(\.name) == ["ok", "tld"])
        #expect(storage.cookies(for: try url("https://api.example.com/")).map(\.name) == ["ok"])
        // ".com" is a single label: kept host-only, never sent to every .com host
        #expect(storage.allCookies.last?.isHostOnly == true)
    }

    @Test("Limits below 1 become 1", arguments: [Int.min, -1, 0])
    func limitsClamped(limit: Int) throws {
        // Given
        let storage = CookieStorage(maximumCookiesPerDomain: limit, maximumCookies: limit)
        // When
        try receive(["a=1; Path=/", "b=2; Path=/"], from: "https://h.example/", into: storage)
        // Then
        #expect(storage.maximumCookiesPerDomain == 1)
        #expect(storage.maximumCookies == 1)
        #expect(storage.allCookies.map(\.name) == ["b"])
    }

    @Test("Huge limits are kept as given")
    func hugeLimits() throws {
        let storage = CookieStorage(maximumCookiesPerDomain: .max, maximumCookies: .max)
        try receive(["a=1; Path=/"], from: "https://h.example/", into: storage)
        #expect(storage.allCookies.count == 1)
    }

    @Test("A Set-Cookie field is one cookie, never split at its commas: a value holding one keeps its Secure")
    func fieldIsOneCookie() throws {
        // Given
        let storage = CookieStorage()
        // When
        try receive([#"prefs=lang=en,theme=dark; Secure; Path=/"#, "b=2; Path=/"], from: "https://h.example/", into: storage)
        // Then
        let kept = storage.allCookies.sorted { $0.name < $1.name }.map { "\($0.name)=\($0.value) \($0.isSecure)" }
        #expect(kept == ["b=2 false", "prefs=lang=en,theme=dark true"])
    }

    @Test("A cookie with a bare CR or a NUL is never stored, so the Cookie header stays sendable")
    func controlCharactersRejected() throws {
        // Given
        let storage = CookieStorage()
        // When
        try receive(["bad=1\r; Path=/", "nul=a\0b; Path=/", "good=1; Path=/"], from: "https://h.example/", into: storage)
        // Then
        #expect(storage.allCookies.map(\.name) == ["good"])
        #expect(storage.headerValue(for: try url("https://h.example/")) == "good=1")
    }

    @Test("A cookie for another domain is never stored")
    func foreignRejected() throws {
        let storage = CookieStorage()
        try receive(["a=1; Domain=bank.example"], from: "https://evil.example/", into: storage)
        #expect(storage.allCookies.isEmpty)
    }

    @Test("removeAll empties the storage")
    func removeAll() throws {
        let storage = CookieStorage()
        try receive(["a=1"], from: "https://h.example/", into: storage)
        storage.removeAll()
        #expect(storage.allCookies.isEmpty)
    }

    @Test("set() keeps a cookie made by hand; an expired one removes its match")
    func setByHand() throws {
        // Given
        let time = ManualTime()
        let storage = CookieStorage(now: { time.now })
        // When
        storage.set(Cookie(name: "a", value: "1", domain: "H.Example"))
        let kept = storage.cookies(for: try url("https://h.example/"))
        storage.set(Cookie(name: "a", value: "", domain: "h.example", expiresAt: time.now))
        // Then
        #expect(kept.map(\.value) == ["1"])
        #expect(storage.allCookies.isEmpty)
    }

    @Test("An answer over http cannot push a Secure cookie out with junk to set its own; an expired cookie goes before a live one")
    func evictionKeepsSecureCookies() throws {
        // Given: a Secure session set over https, beside a cookie that expires
        let time = ManualTime()
        let storage = CookieStorage(maximumCookiesPerDomain: 3, maximumCookies: 4, now: { time.now })
        try receive(["sid=good; Path=/; Secure", "brief=1; Max-Age=5; Path=/"], from: "https://api.example.com/", into: storage)
        time.advance(10)
        // When: an answer over http fills the domain, then tries to set the session
        try receive((1...5).map { "j\($0)=x; Path=/" } + ["sid=evil; Path=/"], from: "http://api.example.com/", into: storage)
        // Then: the junk pushed out only itself (and the expired cookie), never the session
        let kept = storage.cookies(for: try url("https://api.example.com/")).map { "\($0.name)=\($0.value)" }
        #expect(kept.contains("sid=good"))
        #expect(!kept.contains("sid=evil"))
        #expect(kept.count == 3)
        // And the storage's total: another site over http cannot push the session out either
        try receive((1...4).map { "k\($0)=x; Path=/" }, from: "http://other.example/", into: storage)
        #expect(storage.cookies(for: try url("https://api.example.com/")).map(\.value).contains("good"))
        #expect(storage.allCookies.count == 4)
    }

    @Test("A full storage whose largest site has only Secure cookies: an answer over http drops its own cookie, never another site's")
    func fullStorageOverHTTP() throws {
        let storage = CookieStorage(maximumCookiesPerDomain: 10, maximumCookies: 4)
        try receive(["a=1; Path=/; Secure", "b=2; Path=/; Secure"], from: "https://api.example.com/", into: storage)
        try receive(["s=1; Path=/"], from: "https://shop.test/", into: storage)
        try receive(["x=1; Path=/"], from: "http://other.test/", into: storage)
        #expect(storage.allCookies.count == 4)
        // When: another http answer comes with the storage full
        try receive(["y=1; Path=/"], from: "http://other.test/", into: storage)
        // Then: the largest site's Secure cookies and the shop's session stay; other.test made room itself
        #expect(storage.cookies(for: try url("https://api.example.com/")).count == 2)
        #expect(storage.cookies(for: try url("https://shop.test/")).map(\.name) == ["s"])
        #expect(storage.cookies(for: try url("http://other.test/")).count == 1)
    }

    @Test("A cookie made by hand with ; before a combining accent in its value is not kept: it would split the Cookie header")
    func combiningSemicolon() throws {
        let storage = CookieStorage()
        storage.set(Cookie(name: "pref", value: "x;\u{301}y=1", domain: "h.example"))
        storage.set(Cookie(name: "a\u{301};b", value: "1", domain: "h.example"))
        #expect(storage.allCookies.isEmpty)
    }
}

@Suite("Cookies through a repository")
struct CookiePipelineTests {
    private func transport() -> StubTransport {
        StubTransport(routes: [
            .status(.post, "login", 204, headers: ["Set-Cookie": "session=s1; Path=/; HttpOnly"]),
            .status(.get, "me", 200, json: "{}"),
        ])
    }

    @Test("Off by default: no Cookie is sent and nothing is kept")
    func offByDefault() async throws {
        // Given
        let transport = transport()
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        // When
        try await repository.performRequest(Endpoint<Void>.post("login")).get()
        try await repository.performRequest(Endpoint<Void>.get("me")).get()
        // Then
        #expect(transport.requests.allSatisfy { $0.headers["Cookie"] == nil })
        #expect(repository.cookies(forPath: "me").isEmpty)
        #expect(repository.configuration.cookieStorage == nil)
    }

    @Test("With a storage, a cookie set by one call goes with the next, and cookies(forPath:) lists it")
    func withStorage() async throws {
        // Given
        let transport = transport()
        let storage = CookieStorage()
        var configuration = try makeConfiguration()
        configuration.cookieStorage = storage
        let repository = TestRepository(configuration: configuration, transport: transport)
        // When
        try await repository.performRequest(Endpoint<Void>.post("login")).get()
        try await repository.performRequest(Endpoint<Void>.get("me")).get()
        // Then
        #expect(transport.requests[0].headers["Cookie"] == nil)
        #expect(transport.requests[1].headers["Cookie"] == "session=s1")
        #expect(repository.cookies(forPath: "me").map(\.name) == ["session"])
        #expect(repository.cookies(forPath: "/me").first?.isHTTPOnly == true)
        #expect(storage.cookies(for: try #require(URL(string: "http://api.test/api/v1/me"))).map(\.value) == ["s1"])
    }

    @Test("A Cookie header the caller sets is left as it is")
    func callerCookieKept() async throws {
        // Given
        let transport = transport()
        var configuration = try makeConfiguration()
        configuration.cookieStorage = CookieStorage()
        let repository = TestRepository(configuration: configuration, transport: transport)
        try await repository.performRequest(Endpoint<Void>.post("login")).get()
        // When
        try await repository.performRequest(Endpoint<Void>.get("me", headers: ["Cookie": "mine=1"])).get()
        // Then
        #expect(transport.requests[1].headers.values(for: "Cookie") == ["mine=1"])
    }

    @Test("One storage shared by two configurations shares its cookies")
    func sharedStorage() async throws {
        // Given
        let transport = transport()
        let storage = CookieStorage()
        var first = try makeConfiguration()
        first.cookieStorage = storage
        var second = try makeConfiguration()
        second.cookieStorage = storage
        // When
        try await TestRepository(configuration: first, transport: transport).performRequest(Endpoint<Void>.post("login")).get()
        try await TestRepository(configuration: second, transport: transport).performRequest(Endpoint<Void>.get("me")).get()
        // Then
        #expect(transport.requests[1].headers["Cookie"] == "session=s1")
    }
}

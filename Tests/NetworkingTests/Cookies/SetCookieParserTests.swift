import Foundation
import Testing

@testable import Networking

@Suite("SetCookieParser (RFC 6265 §5.2)")
struct SetCookieParserTests {
    private static let now = Date(timeIntervalSince1970: 1_700_000_000)
    /// Wed, 21 Oct 2015 07:28:00 GMT.
    private static let october2015 = Date(timeIntervalSince1970: 1_445_412_480)

    private func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    private func cookie(_ field: String, from text: String = "https://api.example.com/v1/books") throws -> Cookie? {
        SetCookieParser.cookie(from: field, for: try url(text), now: Self.now)
    }

    // MARK: Name, value and attributes

    @Test("A plain cookie is host-only, for the default path, without expiry, not secure")
    func plain() throws {
        // Given / When
        let cookie = try #require(try cookie("session=abc123"))
        // Then
        #expect(cookie.name == "session")
        #expect(cookie.value == "abc123")
        #expect(cookie.domain == "api.example.com")
        #expect(cookie.isHostOnly)
        #expect(cookie.path == "/v1")
        #expect(cookie.expiresAt == nil)
        #expect(!cookie.isSecure)
        #expect(!cookie.isHTTPOnly)
    }

    @Test("Whitespace is trimmed, a value may hold '=', attribute names are case-insensitive, unknown ones are ignored")
    func lenientSyntax() throws {
        // Given / When
        let cookie = try #require(try cookie("  token = a=b==  ; SECURE; httponly; PATH=/x; SameSite=Lax; Priority=High"))
        // Then
        #expect(cookie.name == "token")
        #expect(cookie.value == "a=b==")
        #expect(cookie.isSecure)
        #expect(cookie.isHTTPOnly)
        #expect(cookie.path == "/x")
    }

    @Test("A field without a name, without '=' or longer than 8 KiB is ignored")
    func ignored() throws {
        #expect(try cookie("=value") == nil)
        #expect(try cookie("novalue") == nil)
        #expect(try cookie("") == nil)
        #expect(try cookie("big=" + String(repeating: "x", count: 9000)) == nil)
    }

    @Test(
        "A field with a control character in its name or value is ignored (RFC 6265 §4.1.1, 6265bis §5.6)",
        arguments: ["a=1\rb", "a=1\r", "a=1\0", "a=\0x", "a\rb=1", "a\0=1", "a=1\r\nInjected: x", "a=\u{7F}", "a=\u{1F}; Path=/"])
    func controlCharacters(field: String) throws {
        // Given a field a hostile or broken server sends, with a bare CR or a NUL say
        // When / Then: no cookie, so nothing can poison the Cookie header of later requests
        #expect(try cookie(field) == nil)
    }

    @Test("__Secure- and __Host- names keep their promise (any case), or the field is dropped")
    func namePrefixes() throws {
        #expect(try cookie("__Secure-id=1; Secure")?.isSecure == true)
        #expect(try cookie("__Secure-id=1; Secure; Domain=example.com; Path=/v1") != nil)
        #expect(try cookie("__Secure-id=1") == nil)
        #expect(try cookie("__SECURE-id=1") == nil)
        #expect(try cookie("__Host-id=1; Secure; Path=/").map { $0.isHostOnly && $0.path == "/" } == true)
        #expect(try cookie("__host-id=1; Secure; Path=/") != nil)
        #expect(try cookie("__Host-id=1; Path=/") == nil, "not Secure")
        #expect(try cookie("__Host-id=1; Secure") == nil, "the default path here is /v1")
        #expect(try cookie("__Host-id=1; Secure; Path=/v1") == nil)
        #expect(try cookie("__Host-id=1; Secure", from: "https://api.example.com/login") == nil, "the default path is / but not sent")
        #expect(try cookie("__Host-id=1; Secure; Path=foo", from: "https://api.example.com/login") == nil)
        #expect(try cookie("__Host-id=1; Secure; Path=/v1; Path=/") != nil, "the last Path counts")
        #expect(try cookie("__Host-id=1; Secure; Path=/; Domain=api.example.com") == nil, "a Domain, even the host's")
        // Only the prefix counts: a name that merely contains it is any cookie.
        #expect(try cookie("x__Host-id=1") != nil)
    }

    @Test("A horizontal tab is not a forbidden control character, and non-ASCII text is kept")
    func tabAndUnicodeAllowed() throws {
        #expect(try cookie("a=x\ty")?.value == "x\ty")
        #expect(try cookie("ü=é")?.value == "é")
    }

    // MARK: Expiry

    @Test("Max-Age wins over Expires, in either order")
    func maxAgeWins() throws {
        // Given / When
        let first = try #require(try cookie("a=1; Max-Age=60; Expires=Wed, 21 Oct 2015 07:28:00 GMT"))
        let last = try #require(try cookie("a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Max-Age=60"))
        // Then
        #expect(first.expiresAt == Self.now.addingTimeInterval(60))
        #expect(last.expiresAt == Self.now.addingTimeInterval(60))
    }

    @Test("Max-Age of zero or less expires the cookie at once; an unreadable Max-Age is ignored")
    func maxAgeEdges() throws {
        #expect(try #require(try cookie("a=1; Max-Age=0")).expiresAt.map { $0 <= Self.now } == true)
        #expect(try #require(try cookie("a=1; Max-Age=-30")).expiresAt.map { $0 <= Self.now } == true)
        #expect(try #require(try cookie("a=1; Max-Age=soon; Expires=Wed, 21 Oct 2015 07:28:00 GMT")).expiresAt == Self.october2015)
        #expect(try #require(try cookie("a=1; Max-Age=soon")).expiresAt == nil)
    }

    @Test(
        "Expires in the date forms servers send",
        arguments: [
            "Wed, 21 Oct 2015 07:28:00 GMT", "Wednesday, 21-Oct-15 07:28:00 GMT", "Wed, 21-Oct-2015 07:28:00 GMT",
            "Wed Oct 21 07:28:00 2015", "21 Oct 2015 07:28:00",
        ])
    func expiresForms(date: String) throws {
        // Given / When
        let cookie = try #require(try cookie("a=1; Expires=\(date)"))
        // Then
        #expect(cookie.expiresAt == Self.october2015)
    }

    @Test(
        "Max-Age is an optional '-' and digits (RFC 6265 §5.2.2): huge values are the longest or shortest, '+5' and '5s' are ignored"
    )
    func maxAgeSyntax() throws {
        #expect(try #require(try cookie("a=1; Max-Age=-99999999999999999999999")).expiresAt.map { $0 <= Self.now } == true)
        #expect(
            try #require(try cookie("a=1; Max-Age=99999999999999999999999")).expiresAt.map { $0 > Self.now.addingTimeInterval(1e12) }
                == true)
        #expect(try #require(try cookie("a=1; Max-Age=+5")).expiresAt == nil)
        #expect(try #require(try cookie("a=1; Max-Age=5s")).expiresAt == nil)
        #expect(try #require(try cookie("a=1; Max-Age=-")).expiresAt == nil)
    }

    @Test("An Expires that cannot be read is ignored, keeping an earlier one; a day the month lacks is not read")
    func unreadableSecondExpires() throws {
        #expect(try #require(try cookie("a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Expires=junk")).expiresAt == Self.october2015)
        #expect(try #require(try cookie("a=1; Expires=Tue, 31 Feb 2015 07:28:00 GMT")).expiresAt == nil)
    }

    @Test("Limits of RFC 6265bis §5.6: a name and value over 4,096 bytes drop the cookie; an attribute over 1,024 bytes is ignored")
    func sizeLimits() throws {
        #expect(try cookie("a=" + String(repeating: "x", count: 4096)) == nil)
        #expect(try cookie("a=" + String(repeating: "x", count: 4095)) != nil)
        let longPath = "/" + String(repeating: "p", count: 1100)
        #expect(try #require(try cookie("a=1; Path=\(longPath)")).path == "/v1")
    }

    @Test("Secure set over plain http drops the cookie (RFC 6265bis §5.7)")
    func secureOverHTTP() throws {
        #expect(try cookie("a=1; Secure", from: "http://api.example.com/") == nil)
        #expect(try cookie("a=1", from: "http://api.example.com/") != nil)
    }

    @Test("A Domain naming a single label with a trailing dot, or a public suffix, is refused unless it is the host")
    func trailingDotsAndPublicSuffixes() throws {
        #expect(try cookie("a=1; Domain=com.", from: "https://a.example.com./") == nil)
        let suffixes: (String) -> Bool = { $0 == "co.uk" }
        #expect(
            SetCookieParser.cookie(from: "a=1; Domain=co.uk", for: try url("https://evil.co.uk/"), now: Self.now, isPublicSuffix: suffixes)
                == nil)
        #expect(
            SetCookieParser.cookie(from: "a=1; Domain=co.uk", for: try url("https://co.uk/"), now: Self.now, isPublicSuffix: suffixes)
                != nil)
    }

    @Test("Only the last Domain attribute counts (RFC 6265 §5.3 step 4)")
    func lastDomainWins() throws {
        let kept = try #require(try cookie("id=1; Domain=other.test; Domain=example.com", from: "https://www.example.com/"))
        #expect(kept.domain == "example.com")
        #expect(!kept.isHostOnly)
        #expect(try cookie("id=1; Domain=example.com; Domain=other.test", from: "https://www.example.com/") == nil)
    }

    @Test("A field is split at the byte ;, also before a combining accent, as the server reads the header it gets back")
    func combiningSemicolon() throws {
        let kept = try #require(try cookie("pref=x;\u{301}Secure"))
        #expect(kept.value == "x")
        #expect(kept.isSecure == false, "the attribute is Secure followed by an accent, not Secure")
        let named = try #require(try cookie("a=1;\u{301} Path=/"))
        #expect(named.value == "1")
    }

    @Test("An Expires that is not a date leaves a session cookie", arguments: ["soon", "Wed, 32 Oct 2015 07:28:00 GMT", "21 Oct 2015", ""])
    func unreadableExpires(date: String) throws {
        #expect(try #require(try cookie("a=1; Expires=\(date)")).expiresAt == nil)
    }

    // MARK: Domain

    @Test("A Domain covering the host makes a domain cookie, sent to the domain and its subdomains")
    func domainCookie() throws {
        // Given / When
        let cookie = try #require(try cookie("a=1; Domain=example.com; Path=/"))
        // Then
        #expect(cookie.domain == "example.com")
        #expect(!cookie.isHostOnly)
        #expect(cookie.matches(try url("https://example.com/"), at: Self.now))
        #expect(cookie.matches(try url("https://api.example.com/"), at: Self.now))
        #expect(cookie.matches(try url("https://deep.www.example.com/"), at: Self.now))
        #expect(!cookie.matches(try url("https://notexample.com/"), at: Self.now))
        #expect(!cookie.matches(try url("https://example.com.evil.org/"), at: Self.now))
    }

    @Test("A leading dot and upper case in Domain are ignored")
    func domainNormalised() throws {
        let cookie = try #require(try cookie("a=1; Domain=.EXAMPLE.com"))
        #expect(cookie.domain == "example.com")
        #expect(!cookie.isHostOnly)
    }

    @Test("A Domain equal to the host is a domain cookie too (RFC 6265 §5.3 step 6): it goes to subdomains")
    func domainEqualToHost() throws {
        // Given / When
        let cookie = try #require(try cookie("a=1; Domain=api.example.com; Path=/"))
        // Then
        #expect(!cookie.isHostOnly)
        #expect(cookie.matches(try url("https://v2.api.example.com/"), at: Self.now))
    }

    @Test(
        "A foreign Domain, a parent that is a bare top-level label, or a sibling is rejected",
        arguments: ["other.com", "com", "www.example.com", "pi.example.com"])
    func foreignDomain(domain: String) throws {
        #expect(try cookie("a=1; Domain=\(domain)") == nil)
    }

    @Test("An empty Domain is ignored: the cookie stays host-only")
    func emptyDomain() throws {
        let cookie = try #require(try cookie("a=1; Domain="))
        #expect(cookie.isHostOnly)
        #expect(cookie.domain == "api.example.com")
    }

    @Test("A host-only cookie goes to its host only")
    func hostOnly() throws {
        // Given
        let cookie = try #require(try cookie("a=1; Path=/"))
        // Then
        #expect(cookie.matches(try url("https://api.example.com/x"), at: Self.now))
        #expect(cookie.matches(try url("https://API.example.com/x"), at: Self.now))
        #expect(!cookie.matches(try url("https://v2.api.example.com/x"), at: Self.now))
        #expect(!cookie.matches(try url("https://example.com/x"), at: Self.now))
    }

    @Test("Cookies from an IP address never match other addresses")
    func ipAddress() throws {
        // Given
        let cookie = try #require(try cookie("a=1; Path=/", from: "http://127.0.0.1:8080/login"))
        // Then
        #expect(cookie.domain == "127.0.0.1")
        #expect(cookie.matches(try url("http://127.0.0.1:9090/"), at: Self.now))
        #expect(!cookie.matches(try url("http://10.127.0.0.1/"), at: Self.now))
        #expect(try self.cookie("a=1; Domain=0.0.1", from: "http://127.0.0.1/") == nil)
    }

    // MARK: Path

    @Test(
        "The default path is the request path up to its last '/'",
        arguments: [
            ("https://h.example/", "/"), ("https://h.example", "/"), ("https://h.example/books", "/"),
            ("https://h.example/a/b/c", "/a/b"), ("https://h.example/a/b/", "/a/b"), ("https://h.example/a?x=/y/z", "/"),
        ])
    func defaultPath(url text: String, expected: String) throws {
        #expect(try #require(try cookie("a=1", from: text)).path == expected)
    }

    @Test("A Path that does not start with '/' means the default path")
    func relativePath() throws {
        #expect(try #require(try cookie("a=1; Path=docs", from: "https://h.example/a/b")).path == "/a")
        #expect(try #require(try cookie("a=1; Path=", from: "https://h.example/a/b")).path == "/a")
    }

    @Test(
        "Path matching: the path itself, or under it at a '/'",
        arguments: [
            ("/docs", "/docs", true), ("/docs", "/docs/", true), ("/docs", "/docs/web", true), ("/docs", "/docsets", false),
            ("/docs", "/", false), ("/docs/", "/docs/web", true), ("/docs/", "/docs/", true), ("/docs/", "/docs", false),
            ("/", "/anything/at/all", true),
        ])
    func pathMatching(cookiePath: String, requestPath: String, matches: Bool) throws {
        let cookie = Cookie(name: "a", value: "1", domain: "h.example", path: cookiePath)
        #expect(cookie.matches(try url("https://h.example\(requestPath)"), at: Self.now) == matches)
    }

    // MARK: Secure and expiry when matching

    @Test("A Secure cookie goes over https only")
    func secure() throws {
        let cookie = try #require(try cookie("a=1; Secure; Path=/"))
        #expect(cookie.matches(try url("https://api.example.com/"), at: Self.now))
        #expect(!cookie.matches(try url("http://api.example.com/"), at: Self.now))
    }

    @Test("An expired cookie matches nothing")
    func expiredDoesNotMatch() throws {
        let cookie = try #require(try cookie("a=1; Max-Age=10; Path=/"))
        #expect(cookie.matches(try url("https://api.example.com/"), at: Self.now.addingTimeInterval(9)))
        #expect(!cookie.matches(try url("https://api.example.com/"), at: Self.now.addingTimeInterval(10)))
    }

    // MARK: Joined fields

    @Test(
        "Joined Set-Cookie values split back into one per cookie, without splitting inside Expires",
        arguments: [
            ("a=1; Path=/, b=2; Path=/", ["a=1; Path=/", "b=2; Path=/"]),
            ("a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT, b=2", ["a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT", "b=2"]),
            (
                "a=1; Expires=Wednesday, 21-Oct-15 07:28:00 GMT; Path=/, b=2; Max-Age=5, c=3",
                ["a=1; Expires=Wednesday, 21-Oct-15 07:28:00 GMT; Path=/", "b=2; Max-Age=5", "c=3"]
            ),
            (
                "a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/",
                ["a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"]
            ),
            ("list=x,y,z", ["list=x,y,z"]),
            (#"sid="a,b"; Path=/; Secure, c=3"#, [#"sid="a,b"; Path=/; Secure"#, "c=3"]),
            (#"sid="a,b=c"; Secure, c=3"#, [#"sid="a,b=c"; Secure"#, "c=3"]),
            ("a=1, not a name=2; Path=/", ["a=1, not a name=2; Path=/"]),
            // A date holds one comma: one without a time does not swallow the next cookie.
            (
                "a=1; Expires=Wed, 21 Oct 2015, b=2; Domain=example.com; Path=/",
                ["a=1; Expires=Wed, 21 Oct 2015", "b=2; Domain=example.com; Path=/"]
            ),
            ("a=1; Expires=, b=2", ["a=1; Expires=", "b=2"]),
            ("single=1", ["single=1"]),
            ("", []),
        ])
    func split(joined: String, expected: [String]) {
        #expect(SetCookieParser.split(joined) == expected)
    }

    @Test("Splitting takes linear time, however many commas a server sends", .timeLimit(.minutes(1)))
    func splitIsLinear() async throws {
        let fields = await onPlainThread { SetCookieParser.split("a=b" + String(repeating: ",", count: 1_000_000)) }
        #expect(fields.count == 1)
        let dated = await onPlainThread { SetCookieParser.split("a=1; Expires=Wed" + String(repeating: ",", count: 100_000) + " b=2") }
        #expect(dated.count == 2)
    }

    @Test("Cookie descriptions never show the value")
    func description() {
        let cookie = Cookie(name: "session", value: "s3cr3t", domain: "api.example.com")
        #expect(!cookie.description.contains("s3cr3t"))
        #expect(cookie.description.contains("session"))
        var dumped = ""
        dump(cookie, to: &dumped)
        #expect(!dumped.contains("s3cr3t") && dumped.contains("<redacted>") && dumped.contains("api.example.com"), "\(dumped)")
    }
}

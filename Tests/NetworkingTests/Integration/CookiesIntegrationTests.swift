import Foundation
import Networking
import Testing

/// What httpbin's `/cookies` answers: the cookies the request carried.
private struct CookiesEcho: Decodable, Sendable {
    let cookies: [String: String]
}

/// Opt-in cookies against httpbin: `/cookies/set` answers a 302 with `Set-Cookie` fields and
/// redirects to `/cookies`, which echoes the cookies it received.
@Suite("Cookies against httpbin")
struct CookiesIntegrationTests {
    private func repository(_ kind: TransportUnderTest, storage: CookieStorage?) throws -> TestAPI.Repository {
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.httpbinURL)
        configuration.cookieStorage = storage
        // The default transport for libcurl; a URLSessionTransport of its own otherwise.
        return TestAPI.Repository(configuration: configuration, transport: kind == .libcurl ? nil : URLSessionTransport())
    }

    @Test("Off by default: no Cookie is sent, nothing is kept", arguments: TransportUnderTest.all)
    func offByDefault(kind: TransportUnderTest) async throws {
        // Given
        let repository = try repository(kind, storage: nil)
        // When
        let afterSet: CookiesEcho = try await repository.performRequest(
            Endpoint.get("cookies/set", parameters: ["a": "1", "b": "2"]).withoutSession()
        ).get()
        let later: CookiesEcho = try await repository.performRequest(Endpoint.get("cookies").withoutSession()).get()
        let headers: JSONValue = try await repository.performRequest(Endpoint.get("headers").withoutSession()).get()
        // Then
        #expect(afterSet.cookies.isEmpty)
        #expect(later.cookies.isEmpty)
        #expect(headers["headers"]?["Cookie"] == nil)
        #expect(repository.cookies(forPath: "cookies").isEmpty)
    }

    @Test(
        "A call that sends a Cookie of its own still keeps the cookies its redirect sets; its own goes on to the next hop",
        arguments: TransportUnderTest.all)
    func callersCookieAcrossARedirect(kind: TransportUnderTest) async throws {
        // Given
        let storage = CookieStorage()
        let repository = try repository(kind, storage: storage)
        // When: the 302 sets a and redirects to /cookies
        let afterSet: CookiesEcho = try await repository.performRequest(
            Endpoint.get("cookies/set", parameters: ["a": "1"], headers: ["Cookie": "consent=yes"]).withoutSession()
        ).get()
        // Then
        #expect(afterSet.cookies == ["consent": "yes"])
        #expect(repository.cookies(forPath: "cookies").map { "\($0.name)=\($0.value)" } == ["a=1"])
        let later: CookiesEcho = try await repository.performRequest(Endpoint.get("cookies").withoutSession()).get()
        #expect(later.cookies == ["a": "1"])
    }

    @Test(
        "With a storage: cookies set across a redirect are sent to the next hop, kept, listed and deleted",
        arguments: TransportUnderTest.all)
    func withStorage(kind: TransportUnderTest) async throws {
        // Given
        let servers = try TestServers.require()
        let storage = CookieStorage()
        let repository = try repository(kind, storage: storage)
        let cookiesURL = try #require(URL(string: servers.httpbinURL + "/cookies"))
        // When: the 302 sets a and b and redirects to /cookies
        let afterSet: CookiesEcho = try await repository.performRequest(
            Endpoint.get("cookies/set", parameters: ["a": "1", "b": "2"]).withoutSession()
        ).get()
        // Then
        #expect(afterSet.cookies == ["a": "1", "b": "2"])
        #expect(Set(repository.cookies(forPath: "cookies").map { "\($0.name)=\($0.value)" }) == ["a=1", "b=2"])
        #expect(Set(storage.cookies(for: cookiesURL).map(\.name)) == ["a", "b"])
        #expect(storage.cookies(for: cookiesURL).allSatisfy { $0.domain == "127.0.0.1" && $0.path == "/" && $0.isHostOnly })

        // When: a later call carries them
        let later: CookiesEcho = try await repository.performRequest(Endpoint.get("cookies").withoutSession()).get()
        // Then
        #expect(later.cookies == ["a": "1", "b": "2"])

        // When: /cookies/delete?a expires a and redirects to /cookies
        let afterDelete: CookiesEcho = try await repository.performRequest(
            Endpoint.get("cookies/delete", parameters: ["a": ""]).withoutSession()
        ).get()
        // Then
        #expect(afterDelete.cookies == ["b": "2"])
        #expect(storage.cookies(for: cookiesURL).map(\.name) == ["b"])
        #expect(repository.cookies(forPath: "/cookies").map(\.name) == ["b"])
    }

    @Test(
        "Several Set-Cookie fields of one response are all kept, even through URLSession, which joins them",
        arguments: TransportUnderTest.all)
    func repeatedSetCookie(kind: TransportUnderTest) async throws {
        // Given: httpbin answers with one Set-Cookie field per value asked for
        let storage = CookieStorage()
        let repository = try repository(kind, storage: storage)
        let fields = ["x=1; Path=/", "y=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/"]
        var endpoint = Endpoint<TransportResponse>.get("response-headers", parameters: ["Set-Cookie": fields]).withoutSession()
        endpoint.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets)
        // When
        let response = try await repository.performRequest(endpoint).get()
        let echo: CookiesEcho = try await repository.performRequest(Endpoint.get("cookies").withoutSession()).get()
        // Then
        #expect(response.headers.values(for: "Set-Cookie") == fields)
        #expect(Set(storage.allCookies.map(\.name)) == ["x", "y"])
        #expect(echo.cookies == ["x": "1", "y": "2"])
    }

    @Test(
        "Over http, __Secure- and __Host- cookies (never Secure there) are dropped; the others of the answer are kept",
        arguments: TransportUnderTest.all)
    func prefixedCookiesOverHTTP(kind: TransportUnderTest) async throws {
        let storage = CookieStorage()
        let repository = try repository(kind, storage: storage)
        let fields = ["__Secure-a=1; Path=/", "__Host-b=2; Path=/", "c=3; Path=/"]
        var endpoint = Endpoint<TransportResponse>.get("response-headers", parameters: ["Set-Cookie": fields]).withoutSession()
        endpoint.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets)
        let response = try await repository.performRequest(endpoint).get()
        let echo: CookiesEcho = try await repository.performRequest(Endpoint.get("cookies").withoutSession()).get()
        #expect(response.headers.values(for: "Set-Cookie") == fields)
        #expect(storage.allCookies.map(\.name) == ["c"])
        #expect(echo.cookies == ["c": "3"])
    }

    @Test("A cookie whose value holds a comma keeps its attributes: a field is one cookie", arguments: TransportUnderTest.all)
    func commaInValue(kind: TransportUnderTest) async throws {
        // Given: a quoted value with a comma, then attributes that look like a cookie's start
        let storage = CookieStorage()
        let repository = try repository(kind, storage: storage)
        let field = #"sid="a,b"; Path=/; HttpOnly; Max-Age=600"#
        // When
        let _: JSONValue = try await repository.performRequest(
            Endpoint.get("response-headers", parameters: ["Set-Cookie": field]).withoutSession()
        ).get()
        // Then
        let kept = storage.allCookies.map { "\($0.name)=\($0.value) \($0.path) \($0.isHTTPOnly) \($0.expiresAt != nil)" }
        #expect(kept == [#"sid="a,b" / true true"#])
    }

    @Test("An answer over plain http can neither set a Secure cookie nor replace one", arguments: TransportUnderTest.all)
    func secureOverHTTP(kind: TransportUnderTest) async throws {
        // Given: a Secure session cookie from an earlier https answer, for httpbin's host
        let servers = try TestServers.require()
        let storage = CookieStorage()
        let host = try #require(URL(string: servers.httpbinURL)?.host)
        storage.set(Cookie(name: "sid", value: "good", domain: host, isSecure: true))
        let repository = try repository(kind, storage: storage)
        // When: httpbin, over http, answers with fields that would replace it and add a Secure one
        let _: JSONValue = try await repository.performRequest(
            Endpoint.get("response-headers", parameters: ["Set-Cookie": "sid=evil; Path=/"]).withoutSession()
        ).get()
        let _: JSONValue = try await repository.performRequest(
            Endpoint.get("response-headers", parameters: ["Set-Cookie": "other=1; Secure; Path=/"]).withoutSession()
        ).get()
        // Then
        #expect(storage.allCookies.map { "\($0.name)=\($0.value)" } == ["sid=good"])
    }
}

import Foundation
import Testing

@testable import Networking

/// Every transport follows redirects with the shared ``RedirectPolicy``.
@Suite("Transport redirects")
struct TransportRedirectTests {
    static let statuses = [301, 302, 303, 307, 308]

    @Test("A GET is followed as a GET", arguments: TransportUnderTest.all, statuses)
    func getIsFollowed(transport: TransportUnderTest, status: Int) async throws {
        let servers = try TestServers.require()
        let request = try Wire.request(servers.apiURL + "/redirect/\(status)?to=/api/v1/echo?hop=\(status)")
        let response = try await Wire.response(request, over: transport.shared)
        let echo = try Wire.echo(response)
        #expect(response.statusCode == 200)
        #expect(echo.method == "GET")
        #expect(echo.query == "hop=\(status)")
    }

    @Test(
        "307 and 308 keep a POST and its body; 301, 302 and 303 turn it into a GET without one",
        arguments: TransportUnderTest.all, statuses)
    func postBodyAcrossRedirects(transport: TransportUnderTest, status: Int) async throws {
        let servers = try TestServers.require()
        let body = Data(#"{"keep":true}"#.utf8)
        let request = try Wire.request(
            .post, servers.apiURL + "/redirect/\(status)?to=/api/v1/echo", headers: ["Content-Type": "application/json"], body: body)
        let echo = try Wire.echo(try await Wire.response(request, over: transport.shared))
        if status == 307 || status == 308 {
            #expect(echo.method == "POST")
            #expect(echo.data == #"{"keep":true}"#)
        } else {
            #expect(echo.method == "GET")
            #expect(echo.data.isEmpty)
            #expect(echo.header("Content-Type") == nil)
        }
    }

    @Test(
        "A request that keeps its method on redirects (the offline queue's) goes on as a POST with its body after a 301 or 302 to the same resource elsewhere; a 303, or a redirect to another resource, still ends in a GET",
        arguments: TransportUnderTest.all, [301, 302, 303])
    func postKeptAcrossRedirects(transport: TransportUnderTest, status: Int) async throws {
        let servers = try TestServers.require()
        let api = try #require(URLComponents(string: servers.apiURL))
        // The same server under another name: another origin, the same resource.
        let elsewhere = "http://localhost:\(api.port ?? 0)"
        var moved = try Wire.request(
            .post, servers.apiURL + "/echo?n=1",
            headers: ["Content-Type": "application/json", "X-Move-To": elsewhere, "X-Move-Status": "\(status)"],
            body: Data(#"{"keep":true}"#.utf8))
        moved.keepsMethodOnRedirect = true
        let echo = try Wire.echo(try await Wire.response(moved, over: transport.shared))
        #expect(echo.method == (status == 303 ? "GET" : "POST"))
        #expect(echo.data == (status == 303 ? "" : #"{"keep":true}"#))
        #expect(echo.query == "n=1")
        var seeResult = try Wire.request(
            .post, servers.apiURL + "/redirect/\(status)?to=/api/v1/echo", headers: ["Content-Type": "application/json"],
            body: Data(#"{"keep":true}"#.utf8))
        seeResult.keepsMethodOnRedirect = true
        #expect(try Wire.echo(try await Wire.response(seeResult, over: transport.shared)).method == "GET")
    }

    @Test("A POST redirected with 307 from the test API over https to its http address is refused, its body not sent in the clear")
    func bodyIsNotSentAgainOverHTTP() async throws {
        let servers = try TestServers.require()
        let security = TransportSecurity(certificateAuthorityFile: servers.caFile)
        let request = try Wire.request(
            .post, servers.apiTLSURL + "/redirect/307?to=\(servers.apiURL)/echo", headers: ["Content-Type": "application/json"],
            body: Data(#"{"refresh_token":"r"}"#.utf8), security: security)
        let result = await Wire.send(request, over: TransportUnderTest.libcurl.shared)
        guard case .failure(.invalidResponse(let reason)) = result else {
            Issue.record("expected the redirect to be refused, got \(result)")
            return
        }
        #expect(reason.contains("from https to http"))
        // A GET is followed there
        let get = try Wire.request(servers.apiTLSURL + "/redirect/307?to=\(servers.apiURL)/echo", security: security)
        #expect(try await Wire.response(get, over: TransportUnderTest.libcurl.shared).statusCode == 200)
    }

    @Test("Authorization stays on its origin", arguments: TransportUnderTest.all)
    func authorizationIsDroppedAcrossOrigins(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let headers: HTTPHeaders = ["Authorization": "Bearer secret", "Cookie": "session=1", "X-Kept": "yes"]
        // Same origin: kept.
        let same = try Wire.echo(
            try await Wire.response(
                try Wire.request(servers.apiURL + "/redirect/302?to=/api/v1/echo", headers: headers), over: transport.shared))
        #expect(same.header("Authorization") == "Bearer secret")
        // Another port: dropped, other headers kept.
        let crossOrigin = try await Wire.response(
            try Wire.request(servers.apiURL + "/redirect/307?to=\(servers.httpbinURL)/anything", headers: headers),
            over: transport.shared)
        let seen = try #require(crossOrigin.json?["headers"])
        #expect(seen["Authorization"] == nil)
        #expect(seen["Cookie"] == nil)
        #expect(seen["X-Kept"] == .string("yes"))
    }

    @Test("Relative locations are resolved against the current URL", arguments: TransportUnderTest.all)
    func relativeRedirects(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let response = try await Wire.response(try Wire.request(servers.httpbinURL + "/relative-redirect/3"), over: transport.shared)
        #expect(response.statusCode == 200)
        #expect(response.json?["url"] != nil)
    }

    @Test("One redirect more than the limit fails clearly", arguments: TransportUnderTest.all)
    func tooManyRedirects(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let limited = transport.make(maximumRedirects: 2)
        let ok = await Wire.send(try Wire.request(servers.httpbinURL + "/redirect/2"), over: limited)
        #expect((try? ok.get())?.statusCode == 200)
        let failed = await Wire.send(try Wire.request(servers.httpbinURL + "/redirect/3"), over: limited)
        guard case .failure(.invalidResponse(let reason)) = failed else {
            Issue.record("expected invalidResponse, got \(failed)")
            return
        }
        #expect(reason.contains("too many redirects"))
    }
}

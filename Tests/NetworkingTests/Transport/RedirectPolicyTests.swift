import Foundation
import Testing

@testable import Networking

@Suite("Redirect policy")
struct RedirectPolicyTests {
    let policy = RedirectPolicy(maximumRedirects: 3)
    let origin = URL(string: "https://api.example.com/v1/items?page=2")!

    private func request(_ method: HTTPMethod, body: String? = "{}") -> TransportRequest {
        TransportRequest(
            method: method, url: origin,
            headers: ["Authorization": "Bearer t", "Cookie": "a=b", "Content-Type": "application/json", "X-Trace": "1"],
            body: body.map { Data($0.utf8) })
    }

    private func redirect(_ status: Int, to location: String?) -> TransportResponse {
        TransportResponse(statusCode: status, headers: location.map { ["Location": $0] } ?? [:])
    }

    @Test("TransportRequest.redirected(by:), for redirects a transport did not follow, applies the same rules; nil when final")
    func publicRedirectFollowsThePolicy() throws {
        let post = request(.post)
        #expect(try post.redirected(by: redirect(200, to: "/v2/items")) == nil)
        #expect(try post.redirected(by: redirect(307, to: nil)) == nil, "no Location: final")
        let moved = try #require(try post.redirected(by: redirect(307, to: "/v2/items")))
        #expect(moved.url.absoluteString == "https://api.example.com/v2/items" && moved.method == .post && moved.body == post.body)
        #expect(moved.headers["Authorization"] == "Bearer t")
        let elsewhere = try #require(try post.redirected(by: redirect(308, to: "https://other.example.net/items")))
        #expect(elsewhere.headers["Authorization"] == nil && elsewhere.headers["Cookie"] == nil && elsewhere.method == .post)
        #expect(try post.redirected(by: redirect(303, to: "/done"))?.method == .get)
        #expect(throws: TransportError.self) { try post.redirected(by: redirect(307, to: "ftp://files.example.com/x")) }
        // A streamed body went once: a 307 or 308 is the answer; a 303 still reads the result.
        var streamed = post
        streamed.body = .stream(AsyncStream<Data> { $0.finish() })
        #expect(try streamed.redirected(by: redirect(307, to: "/v2/items")) == nil)
        #expect(try streamed.redirected(by: redirect(308, to: "/v2/items")) == nil)
        #expect(try streamed.redirected(by: redirect(303, to: "/done"))?.method == .get)
    }

    @Test("keepsCredentials(redirectedTo:) says what redirected(by:) does with Authorization: same origin, or http to https on one host")
    func credentialsKeptByRedirects() throws {
        let plain = TransportRequest(method: .get, url: try #require(URL(string: "http://api.example.com/a")))
        for target in [
            "http://API.example.com:80/b", "https://api.example.com/b", "https://api.example.com:8443/b", "http://other.example.com/b",
        ] {
            let url = try #require(URL(string: target))
            let followed = try #require(
                try TransportRequest(method: .get, url: plain.url, headers: ["Authorization": "Bearer t"])
                    .redirected(by: redirect(307, to: target)))
            #expect(plain.keepsCredentials(redirectedTo: url) == (followed.headers["Authorization"] != nil), "\(target)")
        }
        #expect(plain.keepsCredentials(redirectedTo: try #require(URL(string: "https://api.example.com/b"))))
        #expect(!plain.keepsCredentials(redirectedTo: try #require(URL(string: "http://other.example.com/b"))))
    }

    @Test("A redirect that drops the body drops every field that described it (RFC 9110 §15.4), and keeps the others")
    func bodyFieldsGoWithTheBody() throws {
        var post = request(.post)
        for (name, value) in [
            ("Content-Encoding", "gzip"), ("Content-MD5", "abc="), ("Content-Digest", "sha-256=:abc=:"), ("Repr-Digest", "sha-256=:abc=:"),
            ("Content-Language", "en"), ("Content-Location", "/draft"), ("Content-Length", "2"),
        ] { post.headers[name] = value }
        let next = try #require(try policy.nextRequest(after: redirect(303, to: "/v2/items"), to: post, redirectsSoFar: 0))
        #expect(next.method == .get && next.body == nil)
        for name in RedirectPolicy.bodyFields { #expect(next.headers[name] == nil, "\(name)") }
        #expect(next.headers["X-Trace"] == "1" && next.headers["Authorization"] == "Bearer t")

        let kept = try #require(try policy.nextRequest(after: redirect(307, to: "/v2/items"), to: post, redirectsSoFar: 0))
        #expect(kept.headers["Content-Digest"] == "sha-256=:abc=:" && kept.headers["Content-Encoding"] == "gzip")
    }

    @Test(
        "Method and body per status",
        arguments: [
            (301, HTTPMethod.post, HTTPMethod.get, false), (302, .post, .get, false), (303, .post, .get, false),
            (307, .post, .post, true), (308, .post, .post, true),
            (301, .put, .put, true), (302, .delete, .delete, true), (303, .put, .get, false), (303, .head, .head, false),
            (307, .patch, .patch, true), (308, .put, .put, true), (303, .get, .get, false),
        ])
    func methodAndBody(status: Int, method: HTTPMethod, expected: HTTPMethod, keepsBody: Bool) throws {
        let body: String? = method == .head || method == .get ? nil : "{}"
        let next = try #require(
            try policy.nextRequest(after: redirect(status, to: "/v2/items"), to: request(method, body: body), redirectsSoFar: 0))
        #expect(next.method == expected)
        #expect((next.body != nil) == keepsBody)
        if body != nil { #expect((next.headers["Content-Type"] != nil) == keepsBody) }
        #expect(next.url.absoluteString == "https://api.example.com/v2/items")
    }

    @Test(
        "A request that keeps its method on redirects: a 301 or 302 to the same path and query elsewhere keeps a POST and its body; to another resource (Post/Redirect/Get) or by 303, it becomes a GET"
    )
    func keepingTheMethod() throws {
        var post = request(.post)
        post.keepsMethodOnRedirect = true
        let moved = [
            "https://api2.example.com/v1/items?page=2", "https://api.example.com:8080/v1/items?page=2",
            "https://api.example.com/v1/items/?page=2",
        ]
        for status in [301, 302] {
            for location in moved {
                let next = try #require(try policy.nextRequest(after: redirect(status, to: location), to: post, redirectsSoFar: 0))
                #expect(next.method == .post && next.body == post.body && next.headers["Content-Type"] == "application/json", "\(location)")
                #expect(next.keepsMethodOnRedirect)
            }
            // Another resource, or the same URL again: Post/Redirect/Get.
            for location in ["/v2/items", "/v1/items?page=3", "/v1/items/42?page=2", "https://api.example.com/v1/items?page=2"] {
                let next = try #require(try policy.nextRequest(after: redirect(status, to: location), to: post, redirectsSoFar: 0))
                #expect(next.method == .get && next.body == nil, "\(location)")
            }
        }
        let seeOther = try #require(try policy.nextRequest(after: redirect(303, to: moved[0]), to: post, redirectsSoFar: 0))
        #expect(seeOther.method == .get && seeOther.body == nil)
        #expect(post != request(.post), "the flag is part of the request's identity")
    }

    @Test("Credentials follow an upgrade from http to https on the same host and default ports, not a downgrade or another port")
    func credentialsFollowAnUpgrade() throws {
        var plain = request(.post)
        plain.url = URL(string: "http://api.example.com/v1/items")!
        let upgraded = try #require(
            try policy.nextRequest(after: redirect(301, to: "https://api.example.com/v1/items"), to: plain, redirectsSoFar: 0))
        #expect(upgraded.headers["Authorization"] == "Bearer t" && upgraded.headers["Cookie"] == "a=b")
        for location in ["https://api.example.com:8443/v1/items", "https://other.example.com/v1/items"] {
            let next = try #require(try policy.nextRequest(after: redirect(301, to: location), to: plain, redirectsSoFar: 0))
            #expect(next.headers["Authorization"] == nil, "\(location)")
        }
    }

    @Test("No field named like a credential follows a redirect from https to http, even on the same host")
    func noCredentialGoesToPlainHTTP() throws {
        var secure = request(.get, body: nil)
        secure.headers["X-Api-Key"] = "k3y"
        secure.headers["X-Auth-Token"] = "t0k"
        secure.headers["Proxy-Authorization"] = "Basic cA=="
        let downgraded = try #require(
            try policy.nextRequest(after: redirect(301, to: "http://api.example.com/v1/items/"), to: secure, redirectsSoFar: 0))
        for name in ["Authorization", "Cookie", "X-Api-Key", "X-Auth-Token", "Proxy-Authorization"] {
            #expect(downgraded.headers[name] == nil, "\(name)")
        }
        // To another host, a Proxy-Authorization of the request's own (which goes to the origin) is dropped too.
        let elsewhere = try #require(
            try policy.nextRequest(after: redirect(302, to: "https://other.example.org/"), to: secure, redirectsSoFar: 0))
        #expect(elsewhere.headers["Proxy-Authorization"] == nil && elsewhere.headers["X-Trace"] == "1")
        #expect(downgraded.headers["X-Trace"] == "1")
        // Over https to the same host, they go on.
        let moved = try #require(
            try policy.nextRequest(after: redirect(301, to: "https://api.example.com/v1/items/"), to: secure, redirectsSoFar: 0))
        #expect(moved.headers["X-Api-Key"] == "k3y" && moved.headers["Authorization"] == "Bearer t")
    }

    @Test("A body is never sent again from https to http: a 307 or 308 there, or a write's move, fails; a 302 that drops it is followed")
    func noBodyGoesToPlainHTTP() throws {
        for status in [307, 308] {
            #expect(throws: TransportError.self) {
                try policy.nextRequest(
                    after: redirect(status, to: "http://api.example.com/v1/items?page=2"), to: request(.post), redirectsSoFar: 0)
            }
        }
        var write = request(.put)
        write.keepsMethodOnRedirect = true
        #expect(throws: TransportError.self) {
            try policy.nextRequest(after: redirect(301, to: "http://api.example.com/v1/items?page=2"), to: write, redirectsSoFar: 0)
        }
        let dropped = try #require(
            try policy.nextRequest(after: redirect(302, to: "http://api.example.com/v1/items"), to: request(.post), redirectsSoFar: 0))
        #expect(dropped.method == .get && dropped.body == nil)
        // Over https, or from http to http, the body goes on.
        #expect(
            try policy.nextRequest(after: redirect(307, to: "https://cdn.example.com/x"), to: request(.post), redirectsSoFar: 0)?.body
                != nil)
        var plain = request(.post)
        plain.url = URL(string: "http://api.example.com/x")!
        #expect(try policy.nextRequest(after: redirect(307, to: "http://cdn.example.com/x"), to: plain, redirectsSoFar: 0)?.body != nil)
    }

    @Test("A request with a client certificate is never redirected to http")
    func clientCertificateStaysOnHTTPS() throws {
        var post = request(.get, body: nil)
        post.security.clientCertificate = .pem(certificate: URL(fileURLWithPath: "/keys/client.pem"))
        #expect(throws: TransportError.self) {
            try policy.nextRequest(after: redirect(302, to: "http://api.example.com/v1/items"), to: post, redirectsSoFar: 0)
        }
        // It goes on to the same host or one under it; to another host, the request goes without it
        let cdn = try #require(try policy.nextRequest(after: redirect(302, to: "https://cdn.example.com/x"), to: post, redirectsSoFar: 0))
        #expect(cdn.security.clientCertificate == nil)
        let under = try #require(
            try policy.nextRequest(after: redirect(302, to: "https://eu.api.example.com/x"), to: post, redirectsSoFar: 0))
        #expect(under.security.clientCertificate == post.security.clientCertificate)
        post.url = URL(string: "http://api.example.com/x")!
        #expect(post.problemSending?.contains("a client certificate needs https") == true)
    }

    @Test(
        "Relative locations resolve against the current URL",
        arguments: [
            ("/other", "https://api.example.com/other"),
            ("sibling?x=1", "https://api.example.com/v1/sibling?x=1"),
            ("//cdn.example.com/file", "https://cdn.example.com/file"),
            ("http://api.example.com:8080/p", "http://api.example.com:8080/p"),
        ])
    func relativeLocations(location: String, expected: String) throws {
        let next = try #require(try policy.nextRequest(after: redirect(302, to: location), to: request(.get, body: nil), redirectsSoFar: 0))
        #expect(next.url.absoluteString == expected)
    }

    @Test("A Host field of the caller's goes on only within its origin")
    func hostField() throws {
        var get = request(.get, body: nil)
        get.headers["Host"] = "api.internal"
        let same = try #require(try policy.nextRequest(after: redirect(302, to: "/v2/items"), to: get, redirectsSoFar: 0))
        #expect(same.headers["Host"] == "api.internal")
        for location in ["https://login.example.com/", "https://api.example.com:8443/x", "http://api.example.com/x"] {
            let next = try #require(try policy.nextRequest(after: redirect(302, to: location), to: get, redirectsSoFar: 0))
            #expect(next.headers["Host"] == nil, "\(location)")
        }
    }

    @Test("Credentials stay on their origin")
    func credentials() throws {
        let same = try #require(
            try policy.nextRequest(after: redirect(307, to: "https://API.example.com:443/x"), to: request(.post), redirectsSoFar: 0))
        #expect(same.headers["Authorization"] == "Bearer t")
        #expect(same.headers["Cookie"] == "a=b")
        for location in ["https://evil.example.com/x", "http://api.example.com/x", "https://api.example.com:8443/x"] {
            // A GET: a body is not sent from https to http at all.
            let next = try #require(
                try policy.nextRequest(after: redirect(307, to: location), to: request(.get, body: nil), redirectsSoFar: 0))
            #expect(next.headers["Authorization"] == nil, "\(location)")
            #expect(next.headers["Cookie"] == nil, "\(location)")
            #expect(next.headers["X-Trace"] == "1")
        }
    }

    @Test("Non-redirects and redirects without Location are final", arguments: [200, 300, 304, 305, 404])
    func finalResponses(status: Int) throws {
        #expect(try policy.nextRequest(after: redirect(status, to: "/x"), to: request(.get, body: nil), redirectsSoFar: 0) == nil)
        #expect(try policy.nextRequest(after: redirect(302, to: nil), to: request(.get, body: nil), redirectsSoFar: 0) == nil)
    }

    @Test("Bad redirects fail with invalidResponse", arguments: ["ftp://example.com/file", "javascript:alert(1)", "http://[::1", ""])
    func badLocations(location: String) {
        #expect(throws: TransportError.self) {
            try policy.nextRequest(after: redirect(302, to: location), to: request(.get, body: nil), redirectsSoFar: 0)
        }
    }

    @Test("A Location's token never reaches the error", arguments: [3, 4, 0])
    func locationRedacted(redirectsSoFar: Int) {
        let location =
            switch redirectsSoFar {
            case 3: "https://other.example.com/x?access_token=t0k3n"
            case 4: "https://t0k3n@other.example.com/x"
            default: "https://u:t0k3n@[::1"
            }
        do {
            _ = try policy.nextRequest(after: redirect(302, to: location), to: request(.get, body: nil), redirectsSoFar: redirectsSoFar)
            Issue.record("expected a failure")
        } catch {
            #expect(!String(describing: error).contains("t0k3n"), "\(error)")
        }
    }

    @Test("A pinned request never leaves https")
    func pinnedDowngrade() throws {
        var pinned = request(.get, body: nil)
        pinned.security = TransportSecurity(pinnedPublicKeys: [try PublicKeyPin(sha256Digest: Data(count: 32))])
        #expect(throws: TransportError.self) {
            try policy.nextRequest(after: redirect(302, to: "http://api.example.com/x"), to: pinned, redirectsSoFar: 0)
        }
    }

    @Test("The hop after the limit fails; follow() counts hops")
    func limit() async throws {
        #expect(try policy.nextRequest(after: redirect(302, to: "/x"), to: request(.get, body: nil), redirectsSoFar: 2) != nil)
        #expect(throws: TransportError.self) {
            try policy.nextRequest(after: redirect(302, to: "/x"), to: request(.get, body: nil), redirectsSoFar: 3)
        }
        var hops = 0
        let result: TransportResponse
        do {
            result = try await policy.follow(request(.get, body: nil)) { (_) async throws(TransportError) -> TransportResponse in
                hops += 1
                return hops < 4 ? redirect(302, to: "/hop\(hops)") : TransportResponse(statusCode: 200)
            }
        } catch {
            Issue.record("3 redirects are within the limit: \(error)")
            return
        }
        #expect(result.statusCode == 200)
        #expect(hops == 4)
    }
}

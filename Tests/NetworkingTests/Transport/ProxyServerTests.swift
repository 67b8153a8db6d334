import Foundation
import Testing

@testable import Networking

/// ``ProxyServer``: parsing and printing without I/O, and ``LibcurlTransport`` through the test
/// proxies (`script/testapi/proxyserver.py`: HTTP and SOCKS5 on one port, open, requiring
/// credentials, or over TLS). Each forwarded connection is in the proxy's log with the port the
/// target sees as its peer's, which the test API's `/echo` returns: that proves a request went
/// through the proxy, and which way.
@Suite("Proxies")
struct ProxyServerTests {
    static let user = "proxyuser"
    static let password = "proxy-secret"

    @Test("A proxy URL gives kind, host, port (or the scheme's default) and the percent-decoded user and password")
    func parsesURLs() throws {
        func parse(_ text: String) throws -> ProxyServer? {
            ProxyServer(url: try #require(URL(string: text)))
        }
        #expect(
            try parse("http://ci%40corp:p%3Ass@proxy.internal:3128")
                == ProxyServer(.http, host: "proxy.internal", port: 3128, username: "ci@corp", password: "p:ss"))
        #expect(try parse("https://proxy.internal")?.port == 443)
        #expect(try parse("http://proxy.internal/")?.port == 80)
        for text in ["socks5://127.0.0.1", "SOCKS5H://127.0.0.1"] {
            let socks = try #require(try parse(text))
            #expect(socks.kind == .socks5 && socks.port == 1080, "\(text)")
        }
        #expect(try parse("http://[::1]:8080")?.host == "::1")
        #expect(try parse("http://[::1]:8080")?.authority == "[::1]:8080")
        #expect(try parse("http://xn--bcher-kva.example:3128")?.host == "xn--bcher-kva.example")
        for text in [
            "ftp://proxy:21", "http://proxy:3128/path", "http://proxy:3128?x=1", "file:///tmp/proxy", "proxy.internal:3128",
            // Parts Foundation reads as none: a port too large for any number, escapes that are not UTF-8.
            "http://proxy:99999999999999999999", "http://proxy/%FF", "http://proxy/?%FF", "http://ci%FF:pw@proxy", "http://ci:p%FF@proxy",
        ] {
            #expect(try parse(text) == nil, "\(text)")
        }
    }

    @Test("A proxy's description and dump name its user and whether it has a password, never the password")
    func hidesThePassword() {
        let proxy = ProxyServer(.socks5, host: "10.0.0.1", port: 1080, username: "ci", password: "hunter2", excludedHosts: ["localhost"])
        #expect(proxy.description == "SOCKS5 proxy 10.0.0.1:1080 as ci, with a password, not for localhost")
        var dumped = ""
        dump(proxy, to: &dumped)
        #expect(!dumped.contains("hunter2") && dumped.contains("<redacted>"), "\(dumped)")
        #expect(ProxyServer(.http, host: "proxy", port: 3128).description == "HTTP proxy proxy:3128")
        #if os(Linux) && canImport(CCurl)
            // Through the transport, and a repository holding it, too.
            let transport = LibcurlTransport(proxy: proxy)
            var transportDump = ""
            dump(transport, to: &transportDump)
            #expect(!transportDump.contains("hunter2"), "\(transportDump)")
        #endif
    }

    @Test("A proxy that cannot be used says why")
    func problems() {
        #expect(ProxyServer(.http, host: "proxy", port: 3128).problem == nil)
        #expect(ProxyServer(.http, host: "", port: 3128).problem?.contains("host") == true)
        #expect(ProxyServer(.http, host: "user@proxy", port: 3128).problem?.contains("host") == true)
        // A whole proxy URL given as the host: its credentials are never shown.
        let url = ProxyServer(.http, host: "http://ci:s3cret@proxy:3128", port: 3128)
        var dumped = ""
        dump(url, to: &dumped)
        for shown in [url.problem ?? "", url.description, dumped] {
            #expect(!shown.contains("s3cret") && !shown.contains("ci:") && shown.contains("<redacted>@proxy"), "\(shown)")
        }
        #expect(ProxyServer(.http, host: "proxy\r\nX: y", port: 3128).problem?.contains("host") == true)
        #expect(ProxyServer(.http, host: "proxy", port: 0).problem?.contains("port") == true)
        #expect(ProxyServer(.http, host: "proxy", port: 65536).problem?.contains("port") == true)
        #expect(ProxyServer(.http, host: "proxy", port: 1, password: "secret").problem?.contains("no username") == true)
        #expect(ProxyServer(.http, host: "proxy", port: 1, username: "a\0b").problem?.contains("NUL") == true)
        #expect(ProxyServer(.http, host: "proxy", port: 1, excludedHosts: ["a,b"]).problem?.contains("comma") == true)
        #expect(ProxyServer(.http, host: "proxy", port: 1, excludedHosts: [""]).problem != nil)
        #expect(ProxyServer(.http, host: "proxy.internal:3128", port: 3128).problem?.contains("its port goes in") == true)
        #expect(ProxyServer(.http, host: "fd00::1", port: 3128).problem == nil)
        // An address with its port, a name with one, full-width digits: no IPv6 address.
        for host in ["10.0.0.1:3128", "cafe:3128", "fd00::\u{FF11}"] {
            #expect(ProxyServer(.http, host: host, port: 3128).problem?.contains("its port goes in") == true, "\(host)")
        }
        #expect(ProxyServer(.http, host: "10.0.0.1", port: 3128).problem == nil)
        let long = String(repeating: "t", count: 256)
        #expect(ProxyServer(.socks5, host: "proxy", port: 1080, username: "ci", password: long).problem?.contains("255") == true)
        #expect(ProxyServer(.http, host: "proxy", port: 3128, username: "ci", password: long).problem == nil)
    }

    #if os(Linux) && canImport(CCurl)
        /// One entry of the test proxy's log.
        struct LogEntry: Decodable {
            let kind: String
            let target: String
            let user: String
            let outboundPort: Int

            enum CodingKeys: String, CodingKey {
                case kind, target, user
                case outboundPort = "outbound_port"
            }
        }

        /// The test API's `/echo`, with the port it saw the connection come from.
        struct PeerEcho: Decodable {
            let headers: [String: String]
            let peerPort: Int

            enum CodingKeys: String, CodingKey {
                case headers
                case peerPort = "peer_port"
            }
        }

        /// A proxy of the given kind at a test proxy's address.
        static func proxy(
            _ kind: ProxyServer.Kind, _ url: String, username: String? = nil, password: String? = nil,
            certificateAuthorityFile: URL? = nil
        ) throws -> ProxyServer {
            let address = try #require(URL(string: url))
            return ProxyServer(
                kind, host: try #require(address.host), port: try #require(address.port), username: username, password: password,
                certificateAuthorityFile: certificateAuthorityFile)
        }

        /// The test proxy's log, read directly.
        static func log(_ proxyURL: String, servers: TestServers) async throws -> [LogEntry] {
            let direct = LibcurlTransport(readsProxyEnvironment: false)
            let security = TransportSecurity(certificateAuthorityFile: servers.caFile)
            let response = try await Wire.response(try Wire.request(proxyURL + "/log", security: security), over: direct)
            return try JSONDecoder().decode([LogEntry].self, from: response.body)
        }

        /// Sends `/echo` through `transport` and checks, from the proxy's log, that it went through
        /// `proxyURL` as `kind`; returns what the server saw.
        @discardableResult
        static func echoThrough(
            _ transport: LibcurlTransport, _ base: String, proxyURL: String, kind: String, servers: TestServers
        ) async throws -> PeerEcho {
            let security = TransportSecurity(
                pinnedPublicKeys: [try PublicKeyPin(servers.serverPin)], certificateAuthorityFile: servers.caFile)
            let request = try Wire.request(
                base + "/echo?probe=\(UUID().uuidString)", security: base.hasPrefix("https") ? security : .default)
            let response = try await Wire.response(request, over: transport)
            #expect(response.statusCode == 200, "\(base) through \(proxyURL): \(response.statusCode)")
            let echo = try JSONDecoder().decode(PeerEcho.self, from: response.body)
            let entries = try await log(proxyURL, servers: servers)
            #expect(
                entries.contains { $0.kind == kind && $0.outboundPort == echo.peerPort },
                "\(base) did not go through \(proxyURL) as \(kind)")
            return echo
        }

        @Test(
            "Through an HTTP proxy an http request is forwarded and an https one tunnelled, with the server's pins and authority checked end to end"
        )
        func httpProxy() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport(proxy: try Self.proxy(.http, servers.proxyURL))
            try await Self.echoThrough(transport, servers.apiURL, proxyURL: servers.proxyURL, kind: "http", servers: servers)
            try await Self.echoThrough(transport, servers.apiTLSURL, proxyURL: servers.proxyURL, kind: "connect", servers: servers)
            // A connection through the tunnel is reused.
            try await Self.echoThrough(transport, servers.apiTLSURL, proxyURL: servers.proxyURL, kind: "connect", servers: servers)
            let wrongPin = TransportSecurity(
                pinnedPublicKeys: [try PublicKeyPin(servers.otherPin)], certificateAuthorityFile: servers.caFile)
            let pinned = await Wire.send(try Wire.request(servers.apiTLSURL + "/echo", security: wrongPin), over: transport)
            #expect(pinned == Result<TransportResponse, TransportError>.failure(.pinMismatch(host: "127.0.0.1")), "\(pinned)")
            let untrusted = await Wire.send(try Wire.request(servers.apiTLSURL + "/echo"), over: transport)
            guard case .failure(.tls(.untrustedCertificate)) = untrusted else {
                Issue.record("the server's certificate must be checked through the tunnel: \(untrusted)")
                return
            }
        }

        @Test(
            "A proxy that wants credentials answers an http request with 407 and refuses a tunnel (proxyRefused 407, never a response); with them it passes both, and the server never sees them"
        )
        func proxyCredentials() async throws {
            let servers = try TestServers.require()
            let security = TransportSecurity(certificateAuthorityFile: servers.caFile)
            for (username, password) in [(nil, nil), (Self.user, "wrong")] as [(String?, String?)] {
                let transport = LibcurlTransport(
                    proxy: try Self.proxy(.http, servers.proxyAuthURL, username: username, password: password))
                let response = try await Wire.response(try Wire.request(servers.apiURL + "/echo"), over: transport)
                #expect(response.statusCode == 407, "as \(username ?? "nobody"): \(response.statusCode)")
                let tunnel = await Wire.send(try Wire.request(servers.apiTLSURL + "/echo", security: security), over: transport)
                #expect(tunnel == .failure(.network(.proxyRefused(status: 407))), "as \(username ?? "nobody"): \(tunnel)")
            }
            let transport = LibcurlTransport(
                proxy: try Self.proxy(.http, servers.proxyAuthURL, username: Self.user, password: Self.password))
            for (base, kind) in [(servers.apiURL, "http"), (servers.apiTLSURL, "connect")] {
                let echo = try await Self.echoThrough(transport, base, proxyURL: servers.proxyAuthURL, kind: kind, servers: servers)
                #expect(echo.headers.keys.allSatisfy { !$0.lowercased().hasPrefix("proxy-") }, "\(echo.headers)")
            }
            let entries = try await Self.log(servers.proxyAuthURL, servers: servers)
            #expect(entries.contains { $0.user == Self.user })
        }

        @Test(
            "Through a SOCKS5 proxy both schemes are tunnelled; refused credentials are proxyRefused 407, a forbidden server 403, and a server that refuses the proxy connectionRefused"
        )
        func socks5() async throws {
            let servers = try TestServers.require()
            let open = LibcurlTransport(proxy: try Self.proxy(.socks5, servers.proxyURL))
            for base in [servers.apiURL, servers.apiTLSURL] {
                try await Self.echoThrough(open, base, proxyURL: servers.proxyURL, kind: "socks5", servers: servers)
            }
            let signed = LibcurlTransport(
                proxy: try Self.proxy(.socks5, servers.proxyAuthURL, username: Self.user, password: Self.password))
            try await Self.echoThrough(signed, servers.apiTLSURL, proxyURL: servers.proxyAuthURL, kind: "socks5", servers: servers)
            // The open proxy checks credentials it is offered too.
            for (url, username, password) in [
                (servers.proxyAuthURL, nil, nil), (servers.proxyAuthURL, Self.user, "wrong"), (servers.proxyURL, Self.user, "wrong"),
            ]
                as [(String, String?, String?)]
            {
                let transport = LibcurlTransport(proxy: try Self.proxy(.socks5, url, username: username, password: password))
                let result = await Wire.send(try Wire.request(servers.apiURL + "/echo"), over: transport)
                #expect(result == .failure(.network(.proxyRefused(status: 407))), "\(url) as \(username ?? "nobody"): \(result)")
            }
            let blocked = await Wire.send(try Wire.request("https://blocked.test/"), over: open)
            #expect(blocked == .failure(.network(.proxyRefused(status: 403))), "\(blocked)")
            let refused = await Wire.send(try Wire.request("http://127.0.0.1:1/"), over: open)
            #expect(refused == .failure(.network(.connectionRefused)), "\(refused)")
        }

        @Test(
            "A download through a tunnel, and a body sent up through a forwarding proxy, arrive whole"
        )
        func transfers() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport(proxy: try Self.proxy(.http, servers.proxyURL))
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let tls = TestAPI.Repository(
                configuration: try TestServers.configuration(servers.apiTLSURL, caFile: servers.caFile), transport: transport)
            let destination = folder.appendingPathComponent("bytes.bin")
            let file = try await tls.performRequest(Endpoint<DownloadedFile>.get("bytes/300000").downloading(to: destination)).get()
            #expect(file.size == 300_000)
            let bytes = try Data(contentsOf: destination)
            #expect(bytes.count == 300_000 && bytes.enumerated().allSatisfy { Int($0.element) == $0.offset % 251 })
            let body = Data(#"{"title":"Through a proxy"}"#.utf8)
            let request = try Wire.request(.post, servers.apiURL + "/echo", headers: ["Content-Type": "application/json"], body: body)
            let echo = try Wire.echo(try await Wire.response(request, over: transport))
            #expect(echo.method == "POST" && echo.data == #"{"title":"Through a proxy"}"#)
        }

        @Test(
            "A tunnel the proxy will not open (a forbidden server, 403; one it cannot reach, 502) is proxyRefused, never a response that could pass for the server's; an http request's refusal is the proxy's response"
        )
        func refusedTunnel() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport(proxy: try Self.proxy(.http, servers.proxyURL))
            let forbidden = await Wire.send(try Wire.request("https://blocked.test/"), over: transport)
            #expect(forbidden == .failure(.network(.proxyRefused(status: 403))), "\(forbidden)")
            let unreachable = await Wire.send(try Wire.request("https://127.0.0.1:1/"), over: transport)
            #expect(unreachable == .failure(.network(.proxyRefused(status: 502))), "\(unreachable)")
            let plain = try await Wire.response(try Wire.request("http://blocked.test/"), over: transport)
            #expect(plain.statusCode == 403)
        }

        @Test(
            "An HTTPS proxy's own certificate is checked against its authority file: with it both schemes pass, without it the proxy's certificate is untrusted"
        )
        func httpsProxy() async throws {
            let servers = try TestServers.require()
            let trusted = LibcurlTransport(proxy: try Self.proxy(.https, servers.proxyTLSURL, certificateAuthorityFile: servers.caFile))
            try await Self.echoThrough(trusted, servers.apiURL, proxyURL: servers.proxyTLSURL, kind: "http", servers: servers)
            try await Self.echoThrough(trusted, servers.apiTLSURL, proxyURL: servers.proxyTLSURL, kind: "connect", servers: servers)
            let untrusting = LibcurlTransport(proxy: try Self.proxy(.https, servers.proxyTLSURL))
            let security = TransportSecurity(certificateAuthorityFile: servers.caFile)
            let result = await Wire.send(try Wire.request(servers.apiTLSURL + "/echo", security: security), over: untrusting)
            guard case .failure(.tls(.untrustedCertificate(let detail))) = result else {
                Issue.record("expected the proxy's certificate to be untrusted, got \(result)")
                return
            }
            #expect(detail.contains("the proxy's certificate"), "\(detail)")
        }

        @Test(
            "Excluded hosts are reached directly, compared as the URL writes them; the others go through the proxy (here one that is down: connectionRefused)"
        )
        func excludedHosts() async throws {
            let servers = try TestServers.require()
            let down = ProxyServer(.http, host: "127.0.0.1", port: 1, excludedHosts: ["localhost"])
            let transport = LibcurlTransport(proxy: down)
            let port = try #require(URL(string: servers.apiURL)?.port)
            let direct = try await Wire.response(try Wire.request("http://localhost:\(port)/api/v1/echo"), over: transport)
            #expect(direct.statusCode == 200)
            let proxied = await Wire.send(try Wire.request(servers.apiURL + "/echo"), over: transport)
            #expect(proxied == .failure(.network(.connectionRefused)), "\(proxied)")
            let everything = LibcurlTransport(proxy: ProxyServer(.http, host: "127.0.0.1", port: 1, excludedHosts: ["localhost", "*"]))
            #expect(try await Wire.response(try Wire.request(servers.apiURL + "/echo"), over: everything).statusCode == 200)
        }

        @Test(
            "Without a proxy, the environment's applies unless readsProxyEnvironment is false, which sets an empty proxy and no exclusions (libcurl then ignores the variables)"
        )
        func environment() {
            #expect(LibcurlProxyOptions.make(proxy: nil, readsEnvironment: true) == nil)
            let direct = LibcurlProxyOptions.make(proxy: nil, readsEnvironment: false)
            #expect(direct?.url == "" && direct?.excludedHosts == "" && direct?.username == nil)
            let given = LibcurlProxyOptions.make(
                proxy: ProxyServer(.socks5, host: "::1", port: 1080, excludedHosts: ["a.test", "10.0.0.0/8"]), readsEnvironment: true)
            #expect(given?.url == "socks5h://[::1]:1080" && given?.excludedHosts == "a.test,10.0.0.0/8")
            // libcurl reads "*" as every host only alone.
            let everything = LibcurlProxyOptions.make(
                proxy: ProxyServer(.http, host: "p", port: 1, excludedHosts: ["a.test", "*"]), readsEnvironment: true)
            #expect(everything?.excludedHosts == "*")
        }

        @Test("A proxy that cannot be used fails every request before anything is sent, rather than connect without it")
        func unusableProxy() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport(proxy: ProxyServer(.http, host: "proxy", port: 0))
            let result = await Wire.send(try Wire.request(servers.apiURL + "/echo"), over: transport)
            guard case .failure(.invalidRequest(let reason)) = result else {
                Issue.record("expected invalidRequest, got \(result)")
                return
            }
            #expect(reason.contains("port 0"), "\(reason)")
        }

        @Test("Through a repository, a refused tunnel is noNetworkConnection(proxyRefused), which a retry policy does not retry")
        func repositorySeesTheRefusal() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport(proxy: try Self.proxy(.http, servers.proxyAuthURL))
            let repository = TestAPI.Repository(
                configuration: try TestServers.configuration(servers.apiTLSURL, caFile: servers.caFile), transport: transport)
            let result = await repository.fetchBooks(page: 1)
            guard case .failure(.noNetworkConnection(.proxyRefused(status: 407), let context)) = result else {
                Issue.record("expected noNetworkConnection(proxyRefused(407)), got \(result)")
                return
            }
            #expect(context.response == nil)
            let description = "\(RepositoryError.noNetworkConnection(.proxyRefused(status: 407), context))"
            #expect(description.contains("the proxy refused") && description.contains("credentials"), "\(description)")
            #expect(
                RetryPolicy().delay(
                    after: .failure(.noNetworkConnection(.proxyRefused(status: 407), context)), attempt: 1, method: .get, now: Date())
                    == nil)
        }
    #endif
}

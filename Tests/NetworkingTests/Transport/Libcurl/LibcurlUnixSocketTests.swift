#if os(Linux) && canImport(CCurl)
    import Foundation
    import NetworkingTestSupport
    import Testing

    @testable import Networking

    /// `LibcurlTransport(unixSocket:)` against the test nginx, which listens on a Unix domain
    /// socket besides its port: the same files, ranges and uploads as over TCP.
    @Suite("LibcurlTransport on a Unix domain socket")
    struct LibcurlUnixSocketTests {
        @Test("A repository reads, ranges and uploads through the socket; the URL's host only names the server")
        func repository() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport(unixSocket: servers.nginxSocket)
            // Nothing listens on this host's port 9: the bytes can only have gone through the socket.
            let repository = TestAPI.Repository(
                configuration: try TestServers.configuration("http://localhost:9"), transport: transport)
            let overSocket = try await repository.performRawRequest(Endpoint.get("small.json").withoutSession()).get()
            let overTCP = try await TestAPI.anonymous(servers.nginxURL).performRawRequest(.get("small.json")).get()
            #expect(overSocket.statusCode == 200)
            #expect(overSocket.body == overTCP.body && !overSocket.body.isEmpty)
            #expect(overSocket.headers["ETag"] == overTCP.headers["ETag"])

            let range = try await repository.performRawRequest(
                Endpoint.get("1m.bin", headers: ["Range": "bytes=10-19"]).withoutSession()
            ).get()
            #expect(range.statusCode == 206 && range.body.count == 10)

            let name = "uploads/socket-\(UUID().uuidString).txt"
            let put = try await repository.performRawRequest(
                Endpoint<TransportResponse>.upload(.put, name, body: .data(Data("over a socket".utf8))).withoutSession()
            ).get()
            #expect(put.statusCode == 201)
            let back = try await TestAPI.anonymous(servers.nginxURL).performRawRequest(.get(name)).get()
            #expect(back.text == "over a socket")
        }

        @Test("Many requests in flight share the socket's connections")
        func concurrent() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport(unixSocket: servers.nginxSocket)
            let request = TransportRequest(method: .get, url: try #require(URL(string: "http://localhost/health")))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<32 { group.addTask { try await transport.send(request).statusCode } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 32))
        }

        @Test("A socket file nobody listens on is connectionRefused; a bad path or a proxy besides fails before sending")
        func failures() async throws {
            let url = try #require(URL(string: "http://localhost/health"))
            let missing = LibcurlTransport(unixSocket: URL(fileURLWithPath: "/tmp/networking-no-such-\(UUID().uuidString).sock"))
            await #expect(throws: TransportError.network(.connectionRefused)) {
                try await missing.send(TransportRequest(method: .get, url: url))
            }
            let invalid: [(LibcurlTransport, String)] = [
                (LibcurlTransport(unixSocket: URL(fileURLWithPath: "/" + String(repeating: "s", count: 120))), "107"),
                (LibcurlTransport(unixSocket: URL(string: "http://localhost/socket")), "not a file URL"),
                (
                    LibcurlTransport(
                        proxy: ProxyServer(.http, host: "127.0.0.1", port: 9), unixSocket: URL(fileURLWithPath: "/tmp/x.sock")),
                    "both"
                ),
            ]
            for (transport, reason) in invalid {
                do {
                    _ = try await transport.send(TransportRequest(method: .get, url: url))
                    Issue.record("expected invalidRequest mentioning \(reason)")
                } catch {
                    guard case .invalidRequest(let message) = error else {
                        Issue.record("expected invalidRequest, got \(error)")
                        continue
                    }
                    #expect(message.contains(reason), "\(message)")
                }
            }
        }
    }
#endif

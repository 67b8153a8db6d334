import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("OutageProxy against the test API")
struct OutageProxyTests {
    /// Sockets still open (owned by a descriptor: a non-zero inode) whose local port is one of
    /// `ports`, from /proc/net/tcp: the proxies' accepted connections. Other tests running in
    /// parallel open their own descriptors, so a count of all of them would not say anything.
    private func openSockets(onPorts ports: Set<Int>) -> Int {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return 0 }
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            guard fields.count > 9, let port = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) }) else { return false }
            return ports.contains(port) && fields[9] != "0"
        }.count
    }

    @Test("A released proxy stops listening, and forwarded connections close their sockets")
    func releaseClosesEverything() async throws {
        let servers = try TestServers.require()
        var api = try #require(URLComponents(string: servers.apiURL))
        let upstream = try #require(api.port)
        let transport = LibcurlTransport()
        var ports: Set<Int> = []
        var lastPort = 0
        for _ in 0..<20 {
            let proxy = try OutageProxy(upstreamPort: upstream)
            api.port = proxy.port
            lastPort = proxy.port
            ports.insert(proxy.port)
            let repository = TestAPI.Repository(
                configuration: try TestServers.configuration(try #require(api.string)), transport: transport)
            // The server closes the connection after answering: both pumps end.
            let echo = Endpoint<Void>.get("echo", headers: ["Connection": "close"]).withoutSession()
            _ = try await repository.performRequest(echo).get()
        }
        // The pumps close their sockets once both directions have ended.
        var open = openSockets(onPorts: ports)
        for _ in 0..<50 where open > 0 {
            try await Task.sleep(for: .milliseconds(100))
            open = openSockets(onPorts: ports)
        }
        #expect(open == 0, "\(open) sockets of 20 released proxies are still open")
        // The last proxy is gone: its port refuses.
        api.port = lastPort
        let refused = await TestAPI.Repository(configuration: try TestServers.configuration(try #require(api.string)), transport: transport)
            .performRequest(Endpoint<Void>.get("echo").withoutSession())
        guard case .noNetworkConnection? = refused.failure else {
            Issue.record("expected the released proxy's port to refuse, got \(refused)")
            return
        }
    }

    #if os(Linux)
        @Test("A client that has sent its whole request and shut its side still gets the answer")
        func halfClose() async throws {
            let servers = try TestServers.require()
            // The test API answers after a second: long after the request's end reached the proxy.
            let api = try #require(URLComponents(string: servers.apiURL))
            let upstream = try #require(api.port)
            let proxy = try OutageProxy(upstreamPort: upstream)
            // On a plain thread: the socket calls block for the second the answer takes.
            let answer = await onPlainThread { () -> String in
                let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                defer { close(socket) }
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(proxy.port).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard connected == 0 else { return "connect failed" }
                let request = Array("GET \(api.path)/slow?seconds=1 HTTP/1.0\r\nHost: localhost\r\n\r\n".utf8)
                _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                shutdown(socket, Int32(SHUT_WR))
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
                    guard count > 0 else { break }
                    received += buffer[0..<count]
                }
                return String(decoding: received, as: UTF8.self)
            }
            #expect(answer.hasPrefix("HTTP/1.") && answer.contains(" 200 "), "got \(answer.prefix(200))")
        }
    #endif
}

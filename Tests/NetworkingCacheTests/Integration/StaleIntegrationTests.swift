import Foundation
import Networking
import NetworkingCache
import NetworkingTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A stale answer standing in for a server that is really gone: a real connection refused, on
/// the default transport, from a server this test starts and stops (Python's `http.server`,
/// which the test servers need anyway).
@Suite struct StaleIntegrationTests {
    /// `python3 -m http.server` on a free loopback port, serving a folder.
    final class FileServer: Sendable {
        let process: Process
        let port: Int

        init(serving folder: URL) async throws {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("file-server-\(UUID().uuidString).log")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", folder.path]
            let handle = try FileHandle(forWritingTo: output)
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            defer { try? FileManager.default.removeItem(at: output) }
            // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
            var port: Int?
            for _ in 0..<3_000 where port == nil {
                try await Task.sleep(for: .milliseconds(10))
                let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
                if let range = text.range(of: " port ") {
                    port = Int(text[range.upperBound...].prefix { $0.isNumber })
                }
            }
            guard let port else {
                kill(process.processIdentifier, SIGKILL)
                throw TestServers.Unavailable(description: "python3 -m http.server did not start")
            }
            self.process = process
            self.port = port
        }

        /// Stops the server and waits until it is gone (its port then refuses connections). With
        /// `SIGKILL`: a child started from a test thread may inherit a mask that blocks `SIGTERM`.
        func stop() async throws {
            kill(process.processIdentifier, SIGKILL)
            for _ in 0..<500 where process.isRunning { try await Task.sleep(for: .milliseconds(10)) }
        }
    }

    @Test func aStaleAnswerStandsInForAServerThatIsGone() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try Data(#"{"id": 1, "title": "Dune"}"#.utf8).write(to: folder.url.appendingPathComponent("book.json"))
        let server = try await FileServer(serving: folder.url)
        defer { kill(server.process.processIdentifier, SIGKILL) }
        let clock = TestClock()
        let cache = try ResponseCache(configuration: .init(clock: clock.networkingClock))
        let repository = CacheRepository(
            configuration: try TestServers.configuration("http://127.0.0.1:\(server.port)", interceptors: [cache]))
        let book = Endpoint<RepositoryResponse<JSONValue>>.get("book.json").withoutSession().cached(for: 60)

        let first = try await repository.fetch(book.servingStaleOnConnectivityFailure()).get()
        try await server.stop()
        clock.advance(by: 61)

        // Without permission, the failure comes through; with it, the stored answer, marked stale.
        let refused = await repository.fetch(book)
        #expect(refused.failure?.isConnectivityFailure == true)
        let stale = try await repository.fetch(book.servingStaleOnConnectivityFailure()).get()
        #expect(first.source == .network)
        #expect(stale.source == .stale)
        #expect(stale.value == first.value)
        #expect(stale.headers["Age"] == "61")
    }
}

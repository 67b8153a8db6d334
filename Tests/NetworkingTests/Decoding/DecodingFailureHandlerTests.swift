import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// These tests replace the process-wide `DecodingFailure.defaultHandler`, so they run one at a
/// time and restore it. Other suites run in parallel and may report failures to whatever handler
/// is installed, so each test counts only the failures of its own host.
@Suite("Decoding-failure hook: configuration and process-wide handlers", .serialized)
struct DecodingFailureHandlerTests {
    /// Installs a recording default handler for the duration of `body`, then restores the old one.
    private func withDefaultHandler(_ body: (Recorder<DecodingFailure>) async throws -> Void) async rethrows {
        let previous = DecodingFailure.defaultHandler
        let recorder = Recorder<DecodingFailure>()
        DecodingFailure.defaultHandler = { recorder.record($0) }
        defer { DecodingFailure.defaultHandler = previous }
        try await body(recorder)
    }

    private func failingRepository(host: String, hook: DecodingFailureHandler?) throws -> TestRepository {
        TestRepository(
            configuration: try makeConfiguration(domain: host, decodingFailureHandler: hook),
            transport: StubTransport(routes: [.json(.get, "books/1", #"{"id": "one"}"#)]))
    }

    private func mine(_ recorder: Recorder<DecodingFailure>, host: String) -> [DecodingFailure] {
        recorder.all.filter { $0.context.request.url.host == host }
    }

    @Test("Without a configuration hook, the process-wide handler is told")
    func defaultHandlerIsUsed() async throws {
        try await withDefaultHandler { recorder in
            // Given
            let host = "default-\(UUID().uuidString.prefix(8).lowercased()).test"
            let repository = try failingRepository(host: host, hook: nil)
            // When
            let result = await repository.performRequest(Endpoint<Book>.get("books/1"))
            // Then
            #expect(result.failure != nil)
            let told = mine(recorder, host: host)
            #expect(told.count == 1)
            #expect(told.first?.entityType == "Book")
            #expect(told.first?.codingPath == "id")
        }
    }

    @Test("A configuration hook is told instead of the process-wide handler")
    func configurationHookWins() async throws {
        try await withDefaultHandler { recorder in
            // Given
            let host = "hooked-\(UUID().uuidString.prefix(8).lowercased()).test"
            let hook = Recorder<DecodingFailure>()
            let repository = try failingRepository(host: host, hook: { hook.record($0) })
            // When
            _ = await repository.performRequest(Endpoint<Book>.get("books/1"))
            // Then
            #expect(hook.all.count == 1)
            #expect(mine(recorder, host: host).isEmpty)
        }
    }

    @Test("The default handler is nil until set and can be restored")
    func restore() async throws {
        // Given
        let previous = DecodingFailure.defaultHandler
        // When
        await withDefaultHandler { _ in #expect(DecodingFailure.defaultHandler != nil) }
        // Then
        #expect((DecodingFailure.defaultHandler == nil) == (previous == nil))
    }
}

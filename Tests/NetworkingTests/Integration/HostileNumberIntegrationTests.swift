import Foundation
import Networking
import Testing

/// A number Foundation's `JSONDecoder` stops the process on, served by nginx: every path that
/// reads a response body must answer with an error or a value instead.
@Suite("A number JSONDecoder traps on, from a real server")
struct HostileNumberIntegrationTests {
    /// 2^53 + 2 written with 200 zeros and an exponent that takes them back: `Decimal` gives up on it.
    static let number = "9007199254740994" + String(repeating: "0", count: 200) + "e-200"

    struct Book: Decodable {
        let id: Int
    }

    @Test("Typed decoding with either decoder, json(), and logging the body all answer")
    func everyReader() async throws {
        // Given: the document stored on nginx
        let servers = try TestServers.require()
        let path = "uploads/hostile-\(UUID().uuidString).json"
        let store = try TestAPI.anonymous(servers.nginxURL)
        let body = Data("{\"id\": \(Self.number), \"title\": \"x\"}".utf8)
        let stored = try await store.performRawRequest(
            Endpoint<TransportResponse>.upload(.put, path, body: .data(body), contentType: "application/json").withoutSession()
        ).get()
        #expect(stored.statusCode == 201)

        for foundation in [false, true] {
            var configuration = try TestServers.configuration(servers.nginxURL)
            configuration.usesFoundationJSONDecoder = foundation
            let logger = RecordingLogger()
            configuration.logging = LoggingConfiguration(level: .debug, logger: logger)
            let repository = TestAPI.Repository(configuration: configuration)
            // When
            let typed = await repository.performRequest(Endpoint<Book>.get(path).withoutSession())
            let raw = try await repository.performRawRequest(Endpoint<TransportResponse>.get(path).withoutSession()).get()
            // Then
            guard case .decodeError(let failure)? = typed.failure else {
                Issue.record("expected .decodeError with usesFoundationJSONDecoder \(foundation), got \(typed)")
                continue
            }
            #expect(failure.reason.hasPrefix("The given data was not valid JSON."), "\(failure.reason)")
            #expect(raw.json?["id"] == .double(9_007_199_254_740_994))
            #expect(logger.records.contains { $0.message.contains("\"title\"") })
        }
    }
}

import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

/// Streamed bodies read line by line from httpbin: `/stream/{n}` sends `n` JSON objects, one per
/// line (NDJSON), as the transport delivers them; `/range/{n}` a body with no line break.
@Suite("Streamed lines end to end")
struct ResponseLinesIntegrationTests {
    struct Line: Decodable, Sendable { let id: Int }

    @Test("httpbin's NDJSON stream is read line by line, each line decoded", arguments: TransportUnderTest.all)
    func ndjson(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let repository = try TestAPI.anonymous(servers.httpbinURL, transport: transport.shared)
        let stream = try await repository.performRequest(Endpoint<ResponseChunks>.get("stream/20").withoutSession()).get()
        var ids: [Int] = []
        for try await line in stream.lines { ids.append(try FastJSONDecoder().decode(Line.self, from: Data(line.utf8)).id) }
        #expect(ids == Array(0..<20))
    }

    @Test(
        "A body with no line break longer than the maximum fails with invalidResponse and ends the transfer",
        arguments: TransportUnderTest.all)
    func tooLong(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let repository = try TestAPI.anonymous(servers.httpbinURL, transport: transport.shared)
        let stream = try await repository.performRequest(Endpoint<ResponseChunks>.get("range/100000").withoutSession()).get()
        var count = 0
        do {
            for try await _ in stream.lines(maximumLength: 1_000) { count += 1 }
            Issue.record("expected the long line to fail")
        } catch {
            guard case .invalidResponse(let reason, let context) = error else {
                Issue.record("expected invalidResponse, got \(error)")
                return
            }
            #expect(reason.contains("longer than 1000 bytes"))
            #expect(context.request.url.path.hasSuffix("/range/100000"))
        }
        #expect(count == 0)
    }
}

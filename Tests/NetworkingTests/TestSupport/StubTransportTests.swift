import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// `StubTransport` keeps the transport contract a test relies on: the caller's cancellation wins
/// over a route that answers once its sleep is cut short.
@Suite("StubTransport", .timeLimit(.minutes(1)))
struct StubTransportTests {
    /// A route that answers 200 after `seconds` (or at once when its sleep is cancelled).
    static func slow(_ seconds: Double) -> StubTransport {
        StubTransport(routes: [
            StubTransport.Route(.get, "slow") { request throws(TransportError) in
                try? await Task.sleep(for: .seconds(seconds))
                return TransportResponse(statusCode: 200, headers: [:], body: Data(), url: request.url)
            }
        ])
    }

    static func request(timeout: TimeInterval) throws -> TransportRequest {
        TransportRequest(method: .get, url: try #require(URL(string: "http://api.test/slow")), timeout: timeout)
    }

    static func outcome(of transport: StubTransport, _ request: TransportRequest) async -> Result<Int, TransportError> {
        do throws(TransportError) {
            return .success(try await transport.send(request).statusCode)
        } catch {
            return .failure(error)
        }
    }

    @Test("A cancelled call throws cancelled, even when the route answers once its sleep is cut short")
    func cancellation() async throws {
        let transport = Self.slow(30)
        let request = try Self.request(timeout: 60)
        let call = Task { await Self.outcome(of: transport, request) }
        try await Task.sleep(for: .milliseconds(100))
        call.cancel()
        #expect(await call.value.failure == .cancelled)
    }
}

import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// `StubTransport` keeps the transport contract a test relies on: the caller's cancellation wins
/// over a route that answers once its sleep is cut short.
@Suite("StubTransport", .timeLimit(.minutes(1)))
struct StubTransportTests {
    static func outcome(of transport: StubTransport, _ request: TransportRequest) async -> Result<Int, TransportError> {
        do throws(TransportError) {
            return .success(try await transport.send(request).statusCode)
        } catch {
            return .failure(error)
        }
    }

    @Test("A cancelled call throws cancelled, even when the route answers once its sleep is cut short")
    func cancellation() async throws {
        // A route that says it was reached, then answers 200 after 30 s (at once when its sleep is cancelled).
        let (reached, arrives) = AsyncStream<Void>.makeStream()
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "slow") { request throws(TransportError) in
                arrives.yield()
                try? await Task.sleep(for: .seconds(30))
                return TransportResponse(statusCode: 200, headers: [:], body: Data(), url: request.url)
            }
        ])
        let request = TransportRequest(method: .get, url: try #require(URL(string: "http://api.test/slow")))
        let call = Task { await Self.outcome(of: transport, request) }
        for await _ in reached { break }
        call.cancel()
        #expect(await call.value.failure == .cancelled)
    }
}

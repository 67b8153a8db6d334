import Foundation
import Networking
import Testing

/// What a caller keeps of an echo: not `Decodable`, so only a decoding step can make it.
private struct EchoSummary: Sendable, Equatable {
    let method: String
    let tags: [String]
    let contentType: String?
}

@Suite("Endpoint.decoding against the test API")
struct CustomDecodingIntegrationTests {
    @Test("A non-Decodable model from /echo, using decode(_:at:), json() and the response")
    func nonDecodableFromEcho() async throws {
        // Given
        let repository = try TestAPI.anonymous()
        let endpoint = Endpoint<EchoSummary>.get("echo", parameters: ["tag": ["a", "b"]]).withoutSession().decoding { input in
            EchoSummary(
                method: try input.json()["method"]?.stringValue ?? "",
                tags: try input.decode([String].self, at: "args.tag[]"),
                contentType: input.response.headers["Content-Type"])
        }
        // When
        let summary = try await repository.performRequest(endpoint).get()
        // Then
        #expect(summary == EchoSummary(method: "GET", tags: ["a", "b"], contentType: "application/json"))
    }

    @Test("A Decodable model decoded by its own step instead of the default")
    func decodableOverride() async throws {
        // Given
        let repository = try TestAPI.anonymous()
        let endpoint = Endpoint<[String]>.get("echo", parameters: ["x": "1"]).withoutSession().decoding { input in
            try input.decode([String: [String]].self, at: "args").keys.sorted()
        }
        // When
        let keys = try await repository.performRequest(endpoint).get()
        // Then
        #expect(keys == ["x"])
    }

    @Test("A DecodingError inside reaches the hook with the real request, response and coding path")
    func decodingErrorFromServer() async throws {
        // Given
        let hook = HookRecorder()
        let repository = try hook.repository()
        let endpoint = Endpoint<EchoSummary>.get("broken/wrong-shape").withoutSession().decoding { input in
            EchoSummary(method: "", tags: [try input.decode(String.self, at: "title")], contentType: nil)
        }
        // When
        let result = await repository.performRequest(endpoint)
        // Then
        guard case .decodeError(let failure)? = result.failure else {
            Issue.record("expected .decodeError, got \(result)")
            return
        }
        #expect(failure.codingPath == "title")
        #expect(failure.statusCode == 200)
        #expect(failure.context.request.url.path == "/api/v1/broken/wrong-shape")
        #expect(failure.context.response?.json?["title"] == 42)
        #expect(hook.reports.count == 1)
        #expect(hook.reports.first?.codingPath == "title")
        #expect(hook.reports.first?.context.response?.statusCode == 200)
    }

    @Test("A malformed body read by a decoding step is .jsonError")
    func malformedFromServer() async throws {
        // Given
        let hook = HookRecorder()
        let repository = try hook.repository()
        let endpoint = Endpoint<EchoSummary>.get("broken/malformed").withoutSession().decoding { input in
            EchoSummary(method: try input.json()["title"]?.stringValue ?? "", tags: [], contentType: nil)
        }
        // When
        let result = await repository.performRequest(endpoint)
        // Then
        guard case .jsonError(let failure)? = result.failure else {
            Issue.record("expected .jsonError, got \(result)")
            return
        }
        #expect(failure.kind == .malformedJSON)
        #expect(hook.reports.map(\.kind) == [.malformedJSON])
    }
}

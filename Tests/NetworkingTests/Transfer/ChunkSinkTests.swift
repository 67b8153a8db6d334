import Foundation
import Testing

@testable import Networking

/// The buffer behind ``ResponseChunks`` without I/O: one reader at a time, and no retry that
/// would repeat the bytes a reader already has.
@Suite("Streamed body buffer")
struct ChunkSinkTests {
    let head = ResponseHead(statusCode: 200, url: URL(string: "http://example.com/log"))

    @Test("A second reader waiting at the same time fails at once; the first still gets the end")
    func oneReaderAtATime() async throws {
        let sink = ChunkSink(method: .get)
        #expect(sink.begin(head, canPause: false) {})
        let first = Task { await sink.next() }
        let second = Task { await sink.next() }
        try await Task.sleep(for: .milliseconds(200))
        sink.end(nil)
        let results = [await first.value, await second.value]
        let refused = results.filter {
            if case .failure(.invalidRequest) = $0 { true } else { false }
        }
        #expect(refused.count == 1)
        #expect(results.contains { (try? $0.get()) == .some(nil) })
    }

    @Test("A retry that starts the body again fails the sequence instead of repeating its bytes")
    func retryAfterTheBodyBegan() async throws {
        let sink = ChunkSink(method: .post)
        #expect(sink.begin(head, canPause: false) {})
        let first = Data("first attempt".utf8)
        _ = first.withUnsafeBytes { sink.receive($0) }
        // The connection broke; the pipeline's retry delivers a new head and the body from its start.
        #expect(sink.begin(head, canPause: false) {})
        let again = first.withUnsafeBytes { sink.receive($0) }
        guard case .failed = again else {
            Issue.record("the retry's bytes must be refused, got \(again)")
            return
        }
        // The refused bytes end the transfer as cancelled; the reader sees why instead.
        sink.end(.cancelled(nil))
        #expect(try await sink.next().get() == first)
        guard case .failure(.invalidResponse(_, let context)) = await sink.next() else {
            Issue.record("expected invalidResponse after the first attempt's bytes")
            return
        }
        #expect(context.request.method == .post)
    }
}

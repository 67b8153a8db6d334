import Foundation
import Testing

@testable import Networking

/// The buffer behind ``ResponseChunks`` without I/O: one reader at a time, and no retry that
/// would repeat the bytes a reader already has.
@Suite("Streamed body buffer")
struct ChunkSinkTests {
    let head = ResponseHead(statusCode: 200, url: URL(string: "http://example.com/log"))

    /// Returns once a reader waits on `sink` (after at most about 10 s).
    func readerWaits(on sink: ChunkSink) async throws {
        for _ in 0..<1_000 where !sink.hasWaitingReader { try await Task.sleep(for: .milliseconds(10)) }
        try #require(sink.hasWaitingReader)
    }

    @Test("A second reader asking while one waits fails at once; the first still gets the end")
    func oneReaderAtATime() async throws {
        let sink = ChunkSink(method: .get)
        #expect(sink.begin(head, canPause: false) {})
        let first = Task { await sink.next() }
        try await readerWaits(on: sink)
        guard case .failure(.invalidRequest) = await sink.next() else {
            Issue.record("the second reader must be refused")
            sink.end(nil)
            return
        }
        sink.end(nil)
        #expect(try await first.value.get() == nil)
    }

    @Test("A retry after bytes were taken fails the waiting reader instead of repeating them")
    func retryAfterTheBodyBegan() async throws {
        let sink = ChunkSink(method: .post)
        #expect(sink.begin(head, canPause: false) {})
        let first = Data("first attempt".utf8)
        _ = first.withUnsafeBytes { sink.receive($0) }
        #expect(try await sink.next().get() == first)
        let reader = Task { await sink.next() }
        try await readerWaits(on: sink)
        // The connection broke; the pipeline's retry delivers a new head and the body from its start.
        #expect(sink.begin(head, canPause: false) {})
        guard case .failure(.invalidResponse(_, let context)) = await reader.value else {
            Issue.record("expected invalidResponse for the waiting reader")
            return
        }
        #expect(context.request.method == .post)
        let again = first.withUnsafeBytes { sink.receive($0) }
        guard case .failed = again else {
            Issue.record("the retry's bytes must be refused, got \(again)")
            return
        }
        // The refused bytes end the transfer as cancelled; the failure found first stays.
        sink.end(.cancelled(nil))
        guard case .failure(.invalidResponse) = await sink.next() else {
            Issue.record("expected invalidResponse after the end")
            return
        }
    }

    @Test("A retry before any byte was taken goes on as if the first attempt had not been")
    func retryBeforeTheBody() async throws {
        let sink = ChunkSink(method: .get)
        #expect(sink.begin(head, canPause: false) {})
        #expect(sink.begin(head, canPause: false) {})
        let body = Data("whole body".utf8)
        _ = body.withUnsafeBytes { sink.receive($0) }
        sink.end(nil)
        #expect(try await sink.next().get() == body)
        #expect(try await sink.next().get() == nil)
    }
}

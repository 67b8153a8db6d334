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

    @Test("A cancelled reader gets .cancelled at once, not the chunks buffered before, even of a body that had arrived whole")
    func cancelledReaderDropsTheBuffer() async throws {
        let chunks = ResponseChunks(method: .get, unreadLimit: .max)
        #expect(chunks.sink.begin(head, canPause: false) {})
        for _ in 0..<3 { _ = Data("abc".utf8).withUnsafeBytes { chunks.sink.receive($0) } }
        chunks.sink.end(nil)
        let (read, error) = await readCancelled(chunks, after: 0)
        #expect(read.isEmpty)
        guard case .cancelled(let context?)? = error else {
            Issue.record("expected .cancelled, got \(String(describing: error))")
            return
        }
        #expect(context.request.url.path == "/log")
        // Read again later, it does not look complete either.
        guard case .failure(.cancelled) = await chunks.sink.next() else {
            Issue.record("a cancelled body must not end as if complete")
            return
        }
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

    @Test("On a transport that cannot pause, a reader lagging more than the unread limit ends the transfer after the chunks in")
    func unreadLimitWithoutPause() async throws {
        let sink = ChunkSink(method: .get, unreadLimit: 100)
        #expect(sink.begin(head, canPause: false) {})
        let piece = Data(repeating: 7, count: 60)
        guard case .accepted = piece.withUnsafeBytes({ sink.receive($0) }) else {
            Issue.record("the first 60 bytes fit")
            return
        }
        guard case .failed(.responseTooLarge(let limit)) = piece.withUnsafeBytes({ sink.receive($0) }) else {
            Issue.record("120 unread bytes are over the limit of 100")
            return
        }
        #expect(limit == 100)
        sink.end(.responseTooLarge(limit: 100, context: ErrorContext(request: RequestSummary(method: .get, url: head.url!))))
        #expect(try await sink.next().get() == piece)
        guard case .failure(.responseTooLarge) = await sink.next() else {
            Issue.record("expected responseTooLarge after the chunk")
            return
        }
    }

    @Test("A chunk handed straight to a waiting reader is never over the unread limit, whatever its size")
    func waitingReaderTakesAnySize() async throws {
        let sink = ChunkSink(method: .get, unreadLimit: 10)
        #expect(sink.begin(head, canPause: false) {})
        let reader = Task { await sink.next() }
        try await readerWaits(on: sink)
        let chunk = Data(repeating: 1, count: 64)
        guard case .accepted = chunk.withUnsafeBytes({ sink.receive($0) }) else {
            Issue.record("a chunk for a waiting reader is not buffered")
            return
        }
        #expect(try await reader.value.get() == chunk)
    }

    @Test("Many chunks read while more arrive come out whole and in order")
    func manyChunksInOrder() async throws {
        let sink = ChunkSink(method: .get)
        #expect(sink.begin(head, canPause: false) {})
        var expected: [UInt32] = []
        var read: [UInt32] = []
        for round in 0..<5 {
            for index in 0..<3_000 {
                let value = UInt32(round * 3_000 + index)
                expected.append(value)
                _ = withUnsafeBytes(of: value) { sink.receive($0) }
            }
            // Read a part of what is in, so the unread chunks sit behind read ones.
            for _ in 0..<2_000 {
                read.append(try #require(try await sink.next().get()).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
            }
        }
        sink.end(nil)
        while let chunk = try await sink.next().get() { read.append(chunk.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }) }
        #expect(read == expected)
    }

    @Test("A sink that pauses on a transport that cannot pause fails the transfer instead of losing bytes")
    func pauseWithoutPause() throws {
        let response = TransportResponse(statusCode: 200, headers: [:], body: Data(repeating: 1, count: 10), url: head.url)
        #expect(throws: TransportError.self) { try RequestPipeline.feed(response, to: PausingSink()) }
    }
}

/// Takes every head and pauses at every chunk.
private struct PausingSink: ResponseBodySink {
    func begin(_ head: ResponseHead, canPause: Bool, resume: @escaping @Sendable () -> Void) -> Bool { true }
    func receive(_ bytes: UnsafeRawBufferPointer) -> ResponseBodySinkStatus { .paused }
}

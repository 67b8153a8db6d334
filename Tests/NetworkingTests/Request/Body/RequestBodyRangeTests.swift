import Foundation
import Testing

@testable import Networking

/// Bodies whose file ranges a user or a stored journal controls: clamped or refused with an
/// error, never an arithmetic trap.
@Suite("Request body ranges")
struct RequestBodyRangeTests {
    /// A stored body (as the offline journal keeps them) with its file segment's numbers replaced.
    func stored(file: URL, offset: String, length: String, segments: Int = 1) throws -> RequestBody {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var text = String(decoding: try encoder.encode(RequestBody.file(file, offset: 0, length: 1)), as: UTF8.self)
        text = text.replacingOccurrences(of: #""length":1"#, with: #""length":\#(length)"#)
        text = text.replacingOccurrences(of: #""offset":0"#, with: #""offset":\#(offset)"#)
        if segments > 1, let start = text.range(of: "[")?.upperBound, let end = text.range(of: "]", options: .backwards)?.lowerBound {
            let segment = text[start..<end]
            text.replaceSubrange(start..<end, with: Array(repeating: String(segment), count: segments).joined(separator: ","))
        }
        return try JSONDecoder().decode(RequestBody.self, from: Data(text.utf8))
    }

    @Test("A negative offset means 0, a negative length the rest of the file: stored or given in code alike")
    func negativeNumbersAreClamped() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let file = try folder.file("five.txt", contents: Data("hello".utf8))
        let body = try stored(file: file, offset: "-9223372036854775808", length: "-5")
        #expect(body == .file(file))
        #expect(body.length == 5)
        let given = RequestBody.file(file, offset: -3, length: -1)
        #expect(given == body)
        #expect(try readAll(given).get() == Data("hello".utf8))
        #expect(RequestBody.file(file, offset: 1, length: .min).length == 4)
    }

    @Test("Ranges or sums past Int64.max fail to send (a sum's length is unknown), never trap")
    func overflowingRanges() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let file = try folder.file("five.txt", contents: Data("hello".utf8))
        let twice = try stored(file: file, offset: "0", length: "9223372036854775807", segments: 2)
        #expect(twice.length == nil)
        #expect(throws: TransportError.self) { try BodyReader(twice) {} }
        let farAway = RequestBody.file(file, offset: .max, length: 10)
        // Past the end of the file: no length to announce, and nothing to send.
        #expect(farAway.length == nil)
        #expect(throws: TransportError.invalidRequest("the body file \(file.path) holds 5 bytes, fewer than its offset \(Int64.max)")) {
            try BodyReader(farAway) {}
        }
        #expect(!twice.description.isEmpty)
    }

    /// Reads the whole body through a reader, in pieces of `size` bytes.
    func readAll(_ body: RequestBody, pieceSize size: Int = 4) throws -> Result<Data, TransportError> {
        let reader = try BodyReader(body) {}
        defer { reader.close() }
        var collected = Data()
        var buffer = [UInt8](repeating: 0, count: size)
        while true {
            switch buffer.withUnsafeMutableBytes({ reader.read(into: $0) }) {
            case .bytes(let count): collected.append(contentsOf: buffer[0..<count])
            case .end: return .success(collected)
            case .failed(let error): return .failure(error)
            case .wouldBlock: return .failure(.invalidRequest("would block"))
            }
        }
    }

    @Test("A named pipe given with a length fails at once instead of blocking the sending thread")
    func namedPipe() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let fifo = folder.url.appendingPathComponent("fifo")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        // Without a writer, a blocking open would never return: the test fails instead of hanging.
        let reading = Task.detached { [self] in
            (try? self.readAll(.file(fifo, length: 10))) ?? .failure(.invalidRequest("the reader could not be made"))
        }
        let result = try #require(await reading.value(within: .seconds(60)), "the open blocked")
        guard case .failure(.invalidRequest(let reason)) = result else {
            Issue.record("a pipe was read")
            return
        }
        #expect(reason.contains("is not a regular file"), "\(reason)")
    }

    @Test("A form's file that grew or was replaced since the form was made fails, never goes cut short")
    func grownFormFile() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let file = try folder.file("recording.bin", contents: Data(repeating: 1, count: 10))
        let empty = try folder.file("empty.bin", contents: Data())
        var form = try MultipartFormData(boundary: "b")
        try form.append(fileAt: file, name: "f")
        try form.append(fileAt: empty, name: "e")
        let body = RequestBody.multipart(form)
        #expect(try readAll(body).get() == form.encodedData(maximumSize: 1000))
        // A stored form (the offline queue's) keeps the mark through Codable.
        let stored = try JSONDecoder().decode(RequestBody.self, from: JSONEncoder().encode(body))
        #expect(stored == body)

        try Data(repeating: 2, count: 11).write(to: file)
        for sent in [body, stored] {
            guard case .failure(.invalidRequest(let reason)) = try readAll(sent) else {
                Issue.record("a grown file was sent")
                continue
            }
            #expect(reason.contains("no longer the 10 bytes measured when the form was made"), "\(reason)")
        }
        try Data(repeating: 2, count: 10).write(to: file)
        try Data("x".utf8).write(to: empty)
        guard case .failure(.invalidRequest(let reason)) = try readAll(body) else {
            Issue.record("a file that was empty was sent cut short")
            return
        }
        #expect(reason.contains("empty.bin"), "\(reason)")
        // A range of a file, given by the caller, is a range: the rest of the file is not sent.
        #expect(try readAll(.file(file, offset: 2, length: 3)).get() == Data(repeating: 2, count: 3))
    }

    @Test("A gzipped stream that goes quiet within a second of its last flush is flushed when the second is up, not at its next chunk")
    func gzippedStreamFlushesWhenQuiet() async throws {
        let (chunks, producer) = AsyncStream.makeStream(of: Data.self)
        defer { producer.finish() }
        let (woken, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .unbounded)
        let reader = try BodyReader(RequestBody.stream(chunks).gzipped()) { wake.yield() }
        defer { reader.close() }
        var inflater = try GzipDecompressor(maximumOutputSize: 1 << 20)
        var inflated = Data()
        var wakes = woken.makeAsyncIterator()
        /// Reads until the reader would block, inflating what came.
        func drain() throws {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while case .bytes(let count) = buffer.withUnsafeMutableBytes({ reader.read(into: $0) }) {
                inflated.append(try buffer.withUnsafeBytes { try inflater.decompress(UnsafeRawBufferPointer(rebasing: $0[0..<count])) })
            }
        }
        try drain()
        producer.yield(Data("first ".utf8))
        _ = await wakes.next()
        try drain()
        #expect(inflated == Data("first ".utf8), "the first chunk is flushed at once")
        producer.yield(Data("second".utf8))
        _ = await wakes.next()
        try drain()
        // A machine busy for a second since the first flush (the whole suite's start) flushes at
        // once: nothing is left to wait for.
        if inflated == Data("first second".utf8) { return }
        #expect(inflated == Data("first ".utf8), "a flush within the second is put off")
        // Then: nothing more comes, and the reader is woken to flush when the second is up
        _ = await wakes.next()
        try drain()
        #expect(inflated == Data("first second".utf8))
    }

    @Test("A read into an empty buffer takes nothing and skips nothing")
    func emptyBuffer() throws {
        let reader = try BodyReader(.data(Data("hello".utf8))) {}
        let empty = reader.read(into: UnsafeMutableRawBufferPointer(start: nil, count: 0))
        guard case .bytes(0) = empty else {
            Issue.record("\(empty)")
            return
        }
        var buffer = [UInt8](repeating: 0, count: 8)
        guard case .bytes(5) = buffer.withUnsafeMutableBytes({ reader.read(into: $0) }) else {
            Issue.record("the body was skipped")
            return
        }
    }
}

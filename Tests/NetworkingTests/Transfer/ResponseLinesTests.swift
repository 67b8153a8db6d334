import Foundation
import Testing

@testable import Networking

/// ``ResponseLines`` over a body fed in pieces, without I/O; the integration tests read httpbin's
/// `/stream` (NDJSON) line by line.
@Suite("Streamed body lines")
struct ResponseLinesTests {
    /// A `ResponseChunks` whose body is `pieces`, complete.
    func chunks(_ pieces: [String], failing failure: RepositoryError? = nil) -> ResponseChunks {
        let chunks = ResponseChunks(method: .get, unreadLimit: .max)
        _ = chunks.sink.begin(ResponseHead(statusCode: 200, url: URL(string: "http://example.com/feed")), canPause: false) {}
        for piece in pieces { _ = Data(piece.utf8).withUnsafeBytes { chunks.sink.receive($0) } }
        chunks.sink.end(failure)
        return chunks
    }

    func lines(_ pieces: [String], maximumLength: Int = ResponseLines.defaultMaximumLength) async throws(RepositoryError) -> [String] {
        var lines: [String] = []
        for try await line in chunks(pieces).lines(maximumLength: maximumLength) { lines.append(line) }
        return lines
    }

    @Test("LF and CRLF end lines wherever the pieces split them; the text after the last one is the last line")
    func splitting() async throws {
        #expect(try await lines(["a\nb", "c\r", "\nd\n"]) == ["a", "bc", "d"])
        #expect(try await lines(["{\"n\":1}\n{\"n\"", ":2}"]) == ["{\"n\":1}", "{\"n\":2}"])
        #expect(try await lines(["\n\n", "x\r\n"]) == ["", "", "x"])
        #expect(try await lines(["end\r"]) == ["end"])
        #expect(try await lines([]) == [])
        #expect(try await lines(["a\rb\n"]) == ["a\rb"], "a lone CR is text")
        // Invalid UTF-8 becomes U+FFFD rather than failing.
        let invalid = ResponseChunks(method: .get, unreadLimit: .max)
        _ = invalid.sink.begin(ResponseHead(statusCode: 200, url: nil), canPause: false) {}
        _ = Data([0x61, 0xFF, 0x0A]).withUnsafeBytes { invalid.sink.receive($0) }
        invalid.sink.end(nil)
        var read: [String] = []
        for try await line in invalid.lines { read.append(line) }
        #expect(read == ["a\u{FFFD}"])
    }

    @Test("A cancelled reader gets .cancelled, not the lines already read from the body")
    func cancelledReader() async throws {
        let (read, error) = await readCancelled(chunks(["a\nb\nc\n", "d\n"]).lines, after: 1)
        #expect(read == ["a"])
        guard case .cancelled? = error else {
            Issue.record("expected .cancelled, got \(String(describing: error))")
            return
        }
    }

    @Test("Many lines in one piece, and one line in many pieces, come whole")
    func manyAndLong() async throws {
        let many = (0..<10_000).map { "line \($0)\n" }.joined()
        #expect(try await lines([many]).count == 10_000)
        let long = String(repeating: "x", count: 100_000)
        let pieces = stride(from: 0, to: long.count, by: 7).map { String(long.dropFirst($0).prefix(7)) }
        #expect(try await lines(pieces + ["\nnext"]) == [long, "next"])
    }

    @Test("A line longer than the maximum fails the sequence with invalidResponse naming the request; the lines before it came")
    func tooLong() async throws {
        var read: [String] = []
        do {
            for try await line in chunks(["short\n", String(repeating: "y", count: 50), "z"]).lines(maximumLength: 40) { read.append(line) }
            Issue.record("expected the long line to fail")
        } catch {
            guard case .invalidResponse(let reason, let context) = error else {
                Issue.record("expected invalidResponse, got \(error)")
                return
            }
            #expect(reason.contains("longer than 40 bytes"))
            #expect(context.request.url.absoluteString == "http://example.com/feed")
        }
        #expect(read == ["short"])
        // A line of exactly the maximum is fine, its CRLF split or not; one byte more in one piece is not.
        #expect(try await lines([String(repeating: "y", count: 40) + "\r", "\n"], maximumLength: 40).count == 1)
        #expect(try await lines([String(repeating: "y", count: 40) + "\n"], maximumLength: 40).count == 1)
        await #expect(throws: RepositoryError.self) { try await lines([String(repeating: "y", count: 41) + "\n"], maximumLength: 40) }
        // The last line too, with no line feed after it.
        #expect(try await lines([String(repeating: "y", count: 40)], maximumLength: 40).count == 1)
        await #expect(throws: RepositoryError.self) { try await lines([String(repeating: "y", count: 41)], maximumLength: 40) }
    }

    @Test("A transfer that fails midway fails the lines after those complete")
    func failure() async throws {
        var read: [String] = []
        do {
            for try await line in chunks(["one\ntwo"], failing: .cancelled(nil)).lines { read.append(line) }
            Issue.record("expected the failure")
        } catch {
            guard case .cancelled = error else {
                Issue.record("expected cancelled, got \(error)")
                return
            }
        }
        #expect(read == ["one"])
    }
}

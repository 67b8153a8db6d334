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

    @Test("A stored negative offset means 0, a negative length the rest of the file")
    func negativeNumbersAreClamped() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let file = try folder.file("five.txt", contents: Data("hello".utf8))
        let body = try stored(file: file, offset: "-9223372036854775808", length: "-5")
        #expect(body == .file(file))
        #expect(body.length == 5)
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
        #expect(farAway.length == 10)
        #expect(throws: TransportError.self) { try BodyReader(farAway) {} }
        #expect(!twice.description.isEmpty)
    }
}

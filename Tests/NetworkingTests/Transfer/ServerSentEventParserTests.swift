import Foundation
import Testing

@testable import Networking

/// The `text/event-stream` reader without I/O, against the WHATWG specification's rules and
/// examples (HTML §9.2.6), with the body split at every place a transport may split it.
@Suite("Server-sent event parsing")
struct ServerSentEventParserTests {
    /// The events of `text` read in one piece, then split at every byte; all must agree.
    func events(_ text: String, maximumEventSize: Int = 1 << 20) throws -> [ServerSentEvent] {
        let bytes = Array(text.utf8)
        var whole = ServerSentEventParser(maximumEventSize: maximumEventSize)
        let expected = try whole.parse(bytes)
        for split in 0...bytes.count {
            var parser = ServerSentEventParser(maximumEventSize: maximumEventSize)
            let events = try parser.parse(bytes[..<split]) + parser.parse(bytes[split...])
            #expect(events == expected, "split at byte \(split)")
        }
        var byteByByte = ServerSentEventParser(maximumEventSize: maximumEventSize)
        #expect(try bytes.flatMap { try byteByByte.parse([$0]) } == expected)
        return expected
    }

    @Test("The specification's examples: data lines joined, types, ids that carry on, a trailing event without its blank line dropped")
    func specificationExamples() throws {
        #expect(
            try events("data: YHOO\ndata: +2\ndata: 10\n\n") == [ServerSentEvent(data: "YHOO\n+2\n10")])
        #expect(
            try events(": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n") == [
                ServerSentEvent(data: "first event", id: "1"),
                // "id" alone empties the last event ID.
                ServerSentEvent(data: "second event", id: nil),
            ])
        #expect(try events("data\n\ndata\ndata\n\ndata:") == [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")])
        #expect(try events("data:test\n\ndata: test\n\n") == [ServerSentEvent(data: "test"), ServerSentEvent(data: "test")])
        #expect(
            try events("event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n").map(\.type) == [
                "add", "remove", "add",
            ])
    }

    @Test("LF, CR and CRLF end lines, mixed and split across chunks; CR LF is one ending, LF CR two")
    func lineEndings() throws {
        let expected = [ServerSentEvent(type: "t", data: "a\nb", id: "7"), ServerSentEvent(data: "c", id: "7")]
        #expect(try events("id: 7\nevent: t\ndata: a\ndata: b\n\ndata: c\n\n") == expected)
        #expect(try events("id: 7\r\nevent: t\r\ndata: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n") == expected)
        #expect(try events("id: 7\revent: t\rdata: a\rdata: b\r\rdata: c\r\r") == expected)
        #expect(try events("id: 7\r\nevent: t\rdata: a\ndata: b\r\n\rdata: c\n\r\n") == expected)
        // LF then CR: two line endings, so a blank line between them.
        #expect(try events("data: x\n\rdata: y\n\n") == [ServerSentEvent(data: "x"), ServerSentEvent(data: "y")])
    }

    @Test(
        "One space after the colon is dropped, no more; a field without a colon has an empty value; unknown fields and comments are ignored"
    )
    func fields() throws {
        #expect(try events("data:  two spaces\n\n") == [ServerSentEvent(data: " two spaces")])
        #expect(try events("data:\ttab\n\n") == [ServerSentEvent(data: "\ttab")])
        #expect(try events("data: a: b\n\n") == [ServerSentEvent(data: "a: b")])
        #expect(try events("Data: no\nfoo: bar\n: comment\ndata: yes\n\n") == [ServerSentEvent(data: "yes")])
        // An event with a type and no data is not dispatched, and its type does not leak.
        #expect(try events("event: lone\n\ndata: x\n\n") == [ServerSentEvent(data: "x")])
    }

    @Test("A byte order mark is dropped at the start only; invalid UTF-8 is replaced, never fatal")
    func encoding() throws {
        #expect(try events("\u{FEFF}data: a\n\ndata: \u{FEFF}b\n\n") == [ServerSentEvent(data: "a"), ServerSentEvent(data: "\u{FEFF}b")])
        #expect(try events("\u{FEFF}\n\u{FEFF}data: c\n\n") == [])
        var parser = ServerSentEventParser(maximumEventSize: 1024)
        let events = try parser.parse(Array("data: ".utf8) + [0xFF, 0xE2, 0x82] + Array("\n\n".utf8))
        #expect(events == [ServerSentEvent(data: "\u{FFFD}\u{FFFD}")])
        #expect(try self.events("data: é 😀\n\n") == [ServerSentEvent(data: "é 😀")])
    }

    @Test(
        "An id with a NUL or another control character is ignored; an id counts once its event's blank line came; the last event ID outlives a reset, which drops a half-read event with its id"
    )
    func identifiers() throws {
        var parser = ServerSentEventParser(maximumEventSize: 1024)
        #expect(
            try parser.parse(Array("id: 4\ndata: a\n\nid: x\u{0}y\ndata: b\n\nid: x\u{1B}y\ndata: c\n\nid: 5\ndata: half".utf8)).map(\.id)
                == ["4", "4", "4"])
        // Event 5 was cut midway: a reconnection asks for what follows 4, so 5 comes again.
        #expect(parser.lastEventID == "4")
        parser.reset()
        #expect(try parser.parse(Array("\n\ndata: next\n\n".utf8)) == [ServerSentEvent(data: "next", id: "4")])
        // After a reset a byte order mark may start the new connection's body.
        parser.reset()
        #expect(try parser.parse(Array("\u{FEFF}data: again\n\n".utf8)) == [ServerSentEvent(data: "again", id: "4")])
        // A block with an id and no data still sets the last event ID; an empty id clears it.
        #expect(try parser.parse(Array("id: 9\n\n".utf8)).isEmpty)
        #expect(parser.lastEventID == "9")
        #expect(try parser.parse(Array("id\n\ndata: z\n\n".utf8)) == [ServerSentEvent(data: "z", id: nil)])
        #expect(parser.lastEventID == "")
    }

    @Test("An id longer than 4 KiB is ignored, as the endpoint's own Last-Event-ID would be: sent back, a server refuses the header")
    func overlongIdentifier() throws {
        let long = String(repeating: "x", count: 4097)
        var parser = ServerSentEventParser(maximumEventSize: 16384, lastEventID: long)
        #expect(parser.lastEventID == "")
        let longest = String(repeating: "y", count: 4096)
        #expect(try parser.parse(Array("id: \(longest)\ndata: a\n\nid: \(long)\ndata: b\n\n".utf8)).map(\.id) == [longest, longest])
    }

    @Test("retry takes ASCII digits only; a huge value is capped, not a trap")
    func retry() throws {
        var parser = ServerSentEventParser(maximumEventSize: 1024)
        _ = try parser.parse(Array("retry: 1500\n".utf8))
        #expect(parser.reconnectionDelay == .milliseconds(1500))
        _ = try parser.parse(Array("retry: 2s\nretry: -1\nretry: \nretry: 1.5\n".utf8))
        #expect(parser.reconnectionDelay == .milliseconds(1500))
        _ = try parser.parse(Array("retry: \(String(repeating: "9", count: 400))\n".utf8))
        #expect(parser.reconnectionDelay == .seconds(Int64(Duration.longestSeconds)))
        _ = try parser.parse(Array("retry:0\n".utf8))
        #expect(parser.reconnectionDelay == .zero)
    }

    @Test("A line or an event beyond the limit fails, whether its bytes come in one chunk or many; comments count too")
    func limits() throws {
        let limit = 64
        var parser = ServerSentEventParser(maximumEventSize: limit)
        #expect(throws: ServerSentEventParser.Failure.eventTooLarge) {
            _ = try parser.parse(Array(String(repeating: "x", count: limit + 1).utf8))
        }
        parser = ServerSentEventParser(maximumEventSize: limit)
        #expect(throws: ServerSentEventParser.Failure.eventTooLarge) {
            for _ in 0..<(limit + 1) { _ = try parser.parse(Array(":".utf8)) }
        }
        parser = ServerSentEventParser(maximumEventSize: limit)
        #expect(throws: ServerSentEventParser.Failure.eventTooLarge) {
            for _ in 0..<20 { _ = try parser.parse(Array("data: abcd\n".utf8)) }
        }
        // Within the limit, event after event: the limit is per event, not per stream.
        parser = ServerSentEventParser(maximumEventSize: limit)
        for _ in 0..<1_000 { #expect(try parser.parse(Array("data: abcd\n\n".utf8)).count == 1) }
    }
}

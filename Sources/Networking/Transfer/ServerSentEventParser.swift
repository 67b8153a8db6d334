/// Reads a `text/event-stream` body (WHATWG HTML, "Server-sent events", §9.2.6) as it arrives, in
/// chunks split anywhere: a line ending (CR, LF or CRLF) may straddle two chunks, a UTF-8 sequence
/// too.
///
/// Lines are split on bytes: CR and LF never occur inside a UTF-8 sequence, so each line's bytes
/// are decoded on their own, with invalid sequences replaced as the specification's decoder does.
/// A line or an event larger than `maximumEventSize` fails the stream rather than grow without end.
struct ServerSentEventParser {
    /// The bytes of an event, its lines and the line being read, beyond which the stream fails.
    let maximumEventSize: Int

    /// The ID of the last event received whole (the specification's "last event ID string"):
    /// an `id:` line counts once its event's blank line came. It outlives a reconnection, which
    /// sends it as `Last-Event-ID`, so an event cut midway is asked for again.
    private(set) var lastEventID = ""
    /// The last `id:` read (the specification's "last event ID buffer"), committed at the blank line.
    private var idBuffer = ""
    /// The longest `id:` kept, in bytes: it goes back as a `Last-Event-ID` header, and servers
    /// refuse a request whose header line passes 8 KiB (431), which would end the stream.
    static let maximumIDLength = 4096

    /// Whether an ID is kept: not with a NUL (the specification) or another control character
    /// but a tab (sent back as `Last-Event-ID`, it would have the reconnection refused), nor
    /// longer than ``maximumIDLength`` as sent (invalid bytes read as U+FFFD, three bytes each).
    private static func isKept(_ id: String) -> Bool {
        HTTPHeaders.isSendableFieldValue(id) && id.utf8.count <= maximumIDLength
    }
    /// The reconnection time the server last asked for with `retry:`, if any.
    private(set) var reconnectionDelay: Duration?

    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType = ""
    /// The last byte seen was a CR: an LF right after it (perhaps in the next chunk) ends nothing.
    private var afterCR = false
    /// No line of this connection was finished yet: a byte order mark before it is dropped.
    private var atStart = true

    /// A parser whose stream resumes after `lastEventID` (an endpoint's own `Last-Event-ID`;
    /// ignored if it has a NUL or is too long, as an `id:` line would be).
    init(maximumEventSize: Int, lastEventID: String = "") {
        self.maximumEventSize = maximumEventSize
        if Self.isKept(lastEventID) {
            self.lastEventID = lastEventID
            idBuffer = lastEventID
        }
    }

    /// Why the stream cannot be read further.
    enum Failure: Error, Equatable {
        /// A line or an event outgrew ``maximumEventSize``.
        case eventTooLarge
    }

    /// Reads the next bytes; returns the events they complete, in order.
    mutating func parse(_ bytes: some Sequence<UInt8>) throws(Failure) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        try parse(bytes, into: &events)
        return events
    }

    /// Reads the next bytes, appending the events they complete to `events`: when it throws,
    /// the events completed before the failure are there, to be delivered before it.
    mutating func parse(_ bytes: some Sequence<UInt8>, into events: inout [ServerSentEvent]) throws(Failure) {
        for byte in bytes {
            switch byte {
            case Self.cr:
                if let event = try endLine() { events.append(event) }
                afterCR = true
            case Self.lf:
                if afterCR {
                    afterCR = false
                } else if let event = try endLine() {
                    events.append(event)
                }
            default:
                afterCR = false
                guard line.count < maximumEventSize - data.count else { throw .eventTooLarge }
                line.append(byte)
            }
        }
    }

    /// The connection ended: an event without its blank line is dropped (as the specification
    /// says), with its `id:`, and the next connection starts afresh; the last event ID and the
    /// reconnection time stay.
    mutating func reset() {
        Self.clear(&line)
        Self.clear(&data)
        idBuffer = lastEventID
        hasData = false
        eventType = ""
        afterCR = false
        atStart = true
    }

    /// Interprets the line read so far; a blank one dispatches the event, if it has data.
    private mutating func endLine() throws(Failure) -> ServerSentEvent? {
        defer {
            Self.clear(&line)
            atStart = false
        }
        var start = 0
        if atStart, line.starts(with: Self.byteOrderMark) { start = Self.byteOrderMark.count }
        guard start < line.count else { return dispatch() }
        if line[start] == Self.colon { return nil }  // a comment
        let colon = line[start...].firstIndex(of: Self.colon) ?? line.count
        var valueStart = min(colon + 1, line.count)
        if valueStart < line.count, line[valueStart] == Self.space { valueStart += 1 }
        let field = line[start..<colon]
        let value = line[valueStart...]
        if field.elementsEqual("data".utf8) {
            guard data.count + value.count < maximumEventSize else { throw .eventTooLarge }
            if hasData { data.append(Self.lf) }
            data.append(contentsOf: value)
            hasData = true
        } else if field.elementsEqual("event".utf8) {
            eventType = String(decoding: value, as: UTF8.self)
        } else if field.elementsEqual("id".utf8) {
            // Ignored with a NUL (the specification), or too long to send back as a header.
            let id = String(decoding: value, as: UTF8.self)
            if Self.isKept(id) { idBuffer = id }
        } else if field.elementsEqual("retry".utf8) {
            if let milliseconds = Self.milliseconds(value) { reconnectionDelay = .milliseconds(milliseconds) }
        }
        return nil
    }

    /// The event read since the last blank line, if it had a `data` field; clears it either way.
    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            Self.clear(&data)
            hasData = false
            eventType = ""
        }
        lastEventID = idBuffer
        guard hasData else { return nil }
        return ServerSentEvent(
            type: eventType.isEmpty ? "message" : eventType,
            data: String(decoding: data, as: UTF8.self),
            id: lastEventID.isEmpty ? nil : lastEventID)
    }

    /// A `retry` value: ASCII digits only, else ignored; a huge one is capped at
    /// ``Duration/longestSeconds`` rather than overflow.
    private static func milliseconds(_ value: ArraySlice<UInt8>) -> Int64? {
        guard !value.isEmpty else { return nil }
        let longest = Int64(Duration.longestSeconds) * 1000
        var result: Int64 = 0
        for byte in value {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            result = min(result * 10 + Int64(byte - UInt8(ascii: "0")), longest)
        }
        return result
    }

    /// Empties a buffer, keeping its storage unless one large event grew it (a long-lived feed
    /// would otherwise hold the largest event's size for good).
    private static func clear(_ buffer: inout [UInt8]) {
        if buffer.capacity > 64 * 1024 {
            buffer = []
        } else {
            buffer.removeAll(keepingCapacity: true)
        }
    }

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
}

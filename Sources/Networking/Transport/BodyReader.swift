import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a ``RequestBody`` piece by piece into a transport's buffer, synchronously: bytes from
/// memory, from files (read as they are sent, never loaded whole), from a stream (a producer task
/// fills a bounded buffer), compressed with gzip on the way when asked.
///
/// Thread-safety: used by one thread at a time (the transport's), hence not `Sendable`; only the
/// stream's producer runs elsewhere, behind its own lock.
final class BodyReader {
    /// What one read produced.
    enum Outcome {
        /// This many bytes were written into the buffer.
        case bytes(Int)
        /// The body is complete.
        case end
        /// No bytes are ready yet (a stream); `onReadable` is called when some are.
        case wouldBlock
        /// The body cannot be read.
        case failed(TransportError)
    }

    /// The bytes that will be sent, when known ahead (not for gzip, nor unsized streams).
    let length: Int64?
    /// Bytes handed out so far (compressed ones, for gzip).
    private(set) var bytesRead: Int64 = 0

    private let source: any BodySource
    private var compressor: GzipCompressor?
    private let isGzipped: Bool
    private var pending = Data()
    private var pendingOffset = 0
    private var finished = false
    /// Whether input went into the compressor since it last gave out everything it had.
    private var unflushed = false
    /// When the compressor last gave out everything: at most one flush a second (each ends a
    /// block, which costs compression to a stream that pauses after every small chunk).
    private var lastFlush: ContinuousClock.Instant?
    /// Wakes the reader when a flush put off by that limit is due, for a stream that goes quiet
    /// meanwhile: its last bytes would otherwise wait in zlib for the next chunk.
    private var flushTimer: DeadlineTimer?
    private let onReadable: @Sendable () -> Void
    /// Where gzip's input is read to; made on a gzipped body's first read only.
    private lazy var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    /// Prepares to read `body`; files are measured now and opened on first read.
    ///
    /// - Parameter onReadable: called from any thread when a stream that had no bytes has some.
    /// - Throws: ``TransportError/invalidRequest(_:)`` for a file that cannot be measured, or a
    ///   stream already read by an earlier request.
    init(_ body: RequestBody, onReadable: @escaping @Sendable () -> Void) throws(TransportError) {
        self.onReadable = onReadable
        switch body.source {
        case .segments(let segments): source = try SegmentSource(segments)
        case .stream(let stream):
            guard let chunks = stream.take() else {
                throw .invalidRequest(
                    "a streamed body can be sent once; it cannot be sent again (a retry or a redirect that keeps the body)")
            }
            source = StreamSource(chunks, length: stream.length, onReadable: onReadable)
        }
        isGzipped = body.isGzipped
        length = body.isGzipped ? nil : source.length
        if isGzipped {
            do {
                compressor = try GzipCompressor()
            } catch {
                throw .invalidRequest("gzip compression could not start: \(error)")
            }
        }
    }

    deinit { source.close() }

    /// Fills `buffer` with the next bytes.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Outcome {
        let outcome = isGzipped ? readCompressed(into: buffer) : source.read(into: buffer)
        if case .bytes(let count) = outcome { bytesRead += Int64(count) }
        return outcome
    }

    /// Starts the body again from its first byte; `false` for a stream, which cannot.
    func rewind() -> Bool {
        guard source.rewind() else { return false }
        bytesRead = 0
        pending = Data()
        pendingOffset = 0
        finished = false
        unflushed = false
        lastFlush = nil
        if isGzipped { compressor = try? GzipCompressor() }
        return !isGzipped || compressor != nil
    }

    /// Stops reading: closes files, stops a stream's producer.
    func close() {
        flushTimer?.cancel()
        source.close()
    }

    private func readCompressed(into buffer: UnsafeMutableRawBufferPointer) -> Outcome {
        while true {
            if pendingOffset < pending.count {
                let count = min(buffer.count, pending.count - pendingOffset)
                pending.withUnsafeBytes { bytes in
                    if let from = bytes.baseAddress, let to = buffer.baseAddress {
                        to.copyMemory(from: from + pendingOffset, byteCount: count)
                    }
                }
                pendingOffset += count
                return .bytes(count)
            }
            if finished { return .end }
            guard compressor != nil else { return .failed(.invalidRequest("gzip compression could not start")) }
            let outcome = scratch.withUnsafeMutableBytes { source.read(into: $0) }
            do {
                switch outcome {
                case .bytes(let count):
                    // Through the optional, so the compressor is changed in place, never copied.
                    let input = scratch
                    pending = try input.withUnsafeBytes { bytes in
                        try compressor?.compress(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) ?? Data()
                    }
                    unflushed = true
                case .end:
                    pending = try compressor?.finish() ?? Data()
                    finished = true
                case .wouldBlock where unflushed && lastFlush.map { ContinuousClock.now - $0 >= .seconds(1) } != false:
                    // A stream that pauses: what it gave so far goes out now rather than wait in
                    // zlib for more (and a transport sees bytes coming, not an idle stream).
                    pending = try compressor?.flush() ?? Data()
                    unflushed = false
                    lastFlush = ContinuousClock.now
                    flushTimer = nil
                case .wouldBlock:
                    if unflushed, flushTimer == nil, let lastFlush {
                        let due = ContinuousClock.now.duration(to: lastFlush + .seconds(1))
                        flushTimer = DeadlineTimer(after: due.seconds, action: onReadable)
                    }
                    return outcome
                case .failed:
                    return outcome
                }
            } catch {
                return .failed(.invalidRequest("the body could not be compressed: \(error)"))
            }
            pendingOffset = 0
        }
    }
}

/// Where a ``BodyReader`` takes its uncompressed bytes from.
private protocol BodySource: AnyObject {
    var length: Int64? { get }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> BodyReader.Outcome
    func rewind() -> Bool
    func close()
}

/// Data and file ranges, in order.
private final class SegmentSource: BodySource {
    private struct Piece {
        let segment: BodySegment
        let length: Int64
    }

    private let pieces: [Piece]
    let length: Int64?
    private var index = 0
    private var offset: Int64 = 0
    private var descriptor: Int32 = -1

    init(_ segments: [BodySegment]) throws(TransportError) {
        var pieces: [Piece] = []
        var total: Int64 = 0
        for segment in segments {
            let length = try segment.measuredLength()
            // Ranges past the largest file offset, and totals past Int64.max, cannot be sent.
            if case .file(let url, let offset, _, _) = segment, offset.addingReportingOverflow(length).overflow {
                throw .invalidRequest("the body's range of \(url.path) lies outside any file (offset \(offset), \(length) bytes)")
            }
            let (sum, overflow) = total.addingReportingOverflow(length)
            guard !overflow else { throw .invalidRequest("the body is larger than \(Int64.max) bytes") }
            total = sum
            pieces.append(Piece(segment: segment, length: length))
        }
        self.pieces = pieces
        length = total
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> BodyReader.Outcome {
        while index < pieces.count {
            let piece = pieces[index]
            guard buffer.count > 0 else { return .bytes(0) }
            let remaining = piece.length - offset
            guard remaining > 0 else {
                if case .file(let url, let fileOffset, _, isWhole: true) = piece.segment,
                    let failure = wholeFileEnds(url, at: fileOffset + piece.length)
                {
                    return .failed(failure)
                }
                nextPiece()
                continue
            }
            let count = Int(min(Int64(buffer.count), remaining))
            switch piece.segment {
            case .data(let data):
                let start = data.startIndex + Int(offset)
                data.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: start..<(start + count))
                offset += Int64(count)
                return .bytes(count)
            case .file(let url, let fileOffset, _, let isWhole):
                if let failure = openIfNeeded(url) { return .failed(failure) }
                // A form's file that changed since is refused before its bytes go, not after.
                if isWhole, offset == 0, let failure = wholeFileEnds(url, at: fileOffset + piece.length) {
                    return .failed(failure)
                }
                // `off_t` has 32 bits on Linux for armv7: an offset past it is an error, not a trap.
                guard let position = off_t(exactly: fileOffset + offset) else {
                    return .failed(
                        .invalidRequest("the body file \(url.path) is too large to be read at offset \(fileOffset + offset) here"))
                }
                let got = pread(descriptor, buffer.baseAddress, count, position)
                if got < 0 {
                    if errno == EINTR { continue }
                    return .failed(.invalidRequest("the body file \(url.path) cannot be read: \(String(cString: strerror(errno)))"))
                }
                guard got > 0 else {
                    return .failed(
                        .invalidRequest("the body file \(url.path) is shorter than when the request was made (it changed while being sent)")
                    )
                }
                offset += Int64(got)
                return .bytes(got)
            }
        }
        return .end
    }

    /// Opens the current piece's file unless it is open; the error when it cannot be read.
    ///
    /// `O_NONBLOCK`, and regular files only: a named pipe given with a length would otherwise
    /// block the thread that sends (for libcurl, the loop every transfer runs on) until a writer
    /// came. The flag changes nothing for a regular file.
    private func openIfNeeded(_ url: URL) -> TransportError? {
        guard descriptor < 0 else { return nil }
        descriptor = POSIX.open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            return .invalidRequest("the body file \(url.path) cannot be opened: \(String(cString: strerror(errno)))")
        }
        guard case .regular = POSIX.kind(of: descriptor) else {
            POSIX.close(descriptor)
            descriptor = -1
            return .invalidRequest("the body file \(url.path) is not a regular file")
        }
        return nil
    }

    /// The error when a whole file (a form's) is not the `end` bytes measured when the body was
    /// built: it changed since, and sending its beginning would pass a cut file for the whole.
    private func wholeFileEnds(_ url: URL, at end: Int64) -> TransportError? {
        if let failure = openIfNeeded(url) { return failure }
        let changed = TransportError.invalidRequest(
            "the body file \(url.path) is no longer the \(end) bytes measured when the form was made (it changed since)")
        guard POSIX.kind(of: descriptor) == .regular(size: end) else { return changed }
        // A file growing while being sent may not show it in its size yet: one byte more says so.
        guard let position = off_t(exactly: end) else { return changed }
        var extra: UInt8 = 0
        while true {
            let got = pread(descriptor, &extra, 1, position)
            if got < 0, errno == EINTR { continue }
            return got > 0 ? changed : nil
        }
    }

    private func nextPiece() {
        if descriptor >= 0 {
            POSIX.close(descriptor)
            descriptor = -1
        }
        index += 1
        offset = 0
    }

    func rewind() -> Bool {
        if descriptor >= 0 {
            POSIX.close(descriptor)
            descriptor = -1
        }
        index = 0
        offset = 0
        return true
    }

    func close() { _ = rewind() }

    deinit { close() }
}

/// Chunks of an asynchronous sequence, produced by a task into a bounded buffer.
private final class StreamSource: BodySource {
    let length: Int64?
    private let buffer = StreamBuffer()
    private var producer: Task<Void, Never>?
    private var produced: Int64 = 0
    private let onReadable: @Sendable () -> Void
    /// Since when the last announced byte has been held back, waiting for the stream to end
    /// (see `take`), and the timer that lets it go after ``holdLimit``.
    private var heldSince: ContinuousClock.Instant?
    private var holdTimer: DeadlineTimer?
    /// How long the last announced byte waits for the stream to end or to go on: a sequence
    /// that stays open after its length (a socket, a stream finished after the call returns)
    /// is taken as whole then, as libcurl would have taken it.
    static let holdLimit: Double = 1

    init(_ chunks: any AsyncSequence<Data, any Error> & Sendable, length: Int64?, onReadable: @escaping @Sendable () -> Void) {
        self.length = length
        self.onReadable = onReadable
        let buffer = buffer
        producer = Task {
            do {
                for try await chunk in chunks {
                    if Task.isCancelled { break }
                    guard !chunk.isEmpty else { continue }
                    await buffer.waitForSpace()
                    if buffer.append(chunk) { onReadable() }
                }
                if buffer.finish(failure: nil) { onReadable() }
            } catch {
                if buffer.finish(failure: "\(error)") { onReadable() }
            }
        }
    }

    func read(into destination: UnsafeMutableRawBufferPointer) -> BodyReader.Outcome {
        // Bytes past the announced length, here already (the last byte waits for the end: see `take`).
        if let length, Int64(buffer.buffered) > length - produced {
            return .failed(.invalidRequest("the body stream produced more than the \(length) bytes it announced"))
        }
        let remaining = length.map { $0 - produced }
        let released = heldSince.map { ContinuousClock.now - $0 >= .seconds(Self.holdLimit) } ?? false
        // Its length sent, and let go after the hold: whole, though the sequence stays open (a
        // reader that asks on, staging the body for URLSession, is told the end).
        if released, remaining == 0 { return .end }
        let outcome = buffer.take(into: destination, announced: released ? nil : remaining)
        if case .wouldBlock = outcome, let remaining, remaining > 0, Int64(buffer.buffered) >= remaining, heldSince == nil {
            heldSince = .now
            holdTimer = DeadlineTimer(after: Self.holdLimit, action: onReadable)
        }
        switch outcome {
        case .bytes(let count):
            produced += Int64(count)
            if let length, produced > length {
                return .failed(.invalidRequest("the body stream produced more than the \(length) bytes it announced"))
            }
        case .end:
            if let length, produced != length {
                return .failed(.invalidRequest("the body stream produced \(produced) bytes, not the \(length) it announced"))
            }
        case .wouldBlock, .failed: break
        }
        return outcome
    }

    func rewind() -> Bool { produced == 0 }

    func close() {
        holdTimer?.cancel()
        producer?.cancel()
        buffer.wakeProducer()
    }
}

/// The chunks a stream's producer has made and the transport has not taken yet, at most
/// ``highWater`` bytes (the producer waits beyond it).
private final class StreamBuffer: Sendable {
    private struct State {
        /// The chunks; those before ``head`` were taken already (dropped in bulk, so taking a
        /// chunk never moves the others).
        var chunks: [Data] = []
        var head = 0
        var firstOffset = 0
        var buffered = 0
        var finished = false
        var failure: String?
        var readerWaits = false
        var producerWaits: CheckedContinuation<Void, Never>?
        /// The reader closed: the producer never waits again.
        var closed = false
    }

    /// The most bytes buffered ahead of the transport.
    static let highWater = 1024 * 1024

    private let state = Mutex(State())

    /// The bytes made and not taken yet.
    var buffered: Int { state.withLock { $0.buffered } }

    /// Waits while the buffer is full.
    func waitForSpace() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state -> Bool in
                guard state.buffered >= Self.highWater, !state.closed else { return false }
                state.producerWaits = continuation
                return true
            }
            if !wait { continuation.resume() }
        }
    }

    /// Adds a chunk; `true` when the reader waits for it.
    func append(_ chunk: Data) -> Bool {
        state.withLock { state in
            state.chunks.append(chunk)
            state.buffered += chunk.count
            defer { state.readerWaits = false }
            return state.readerWaits
        }
    }

    /// Marks the end (or a failure); `true` when the reader waits for it.
    func finish(failure: String?) -> Bool {
        state.withLock { state in
            state.finished = true
            state.failure = failure
            defer { state.readerWaits = false }
            return state.readerWaits
        }
    }

    /// Lets a waiting producer go on (it then sees that it was cancelled), now and from now on.
    func wakeProducer() {
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.producerWaits = nil }
            return state.producerWaits
        }
        waiting?.resume()
    }

    /// Copies the next bytes out — from as many chunks as fit, so a stream of tiny chunks is not
    /// sent a chunk per call — or says why there are none.
    ///
    /// `announced`: the bytes of a sized stream still to send. Its last byte is held back until
    /// the producer has finished (or, by the source, for a second at most): libcurl asks for no
    /// byte past the announced length, so more bytes coming after it would otherwise go unseen,
    /// and the call succeed with a body cut short.
    func take(into destination: UnsafeMutableRawBufferPointer, announced: Int64? = nil) -> BodyReader.Outcome {
        let (outcome, wake) = state.withLock { state -> (BodyReader.Outcome, CheckedContinuation<Void, Never>?) in
            var room = destination.count
            if let announced, state.failure == nil, !state.finished {
                room = Int(clamping: min(Int64(room), announced - 1))
                if room <= 0 {
                    state.readerWaits = true
                    return (.wouldBlock, nil)
                }
            }
            guard state.head < state.chunks.count else {
                if let failure = state.failure { return (.failed(.invalidRequest("the body stream failed: \(failure)")), nil) }
                if state.finished { return (.end, nil) }
                state.readerWaits = true
                return (.wouldBlock, nil)
            }
            let bytes = UnsafeMutableBufferPointer(rebasing: destination.bindMemory(to: UInt8.self)[..<room])
            var count = 0
            while count < bytes.count, state.head < state.chunks.count {
                let chunk = state.chunks[state.head]
                let length = min(bytes.count - count, chunk.count - state.firstOffset)
                let start = chunk.startIndex + state.firstOffset
                chunk.copyBytes(to: UnsafeMutableBufferPointer(rebasing: bytes[count...]), from: start..<(start + length))
                count += length
                state.firstOffset += length
                if state.firstOffset == chunk.count {
                    // Sent: its bytes go now, not when the taken chunks are dropped in bulk.
                    state.chunks[state.head] = Data()
                    state.head += 1
                    state.firstOffset = 0
                }
            }
            state.buffered -= count
            if state.head == state.chunks.count {
                state.chunks.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 1024, state.head * 2 >= state.chunks.count {
                state.chunks.removeFirst(state.head)
                state.head = 0
            }
            guard state.buffered < Self.highWater / 2 else { return (.bytes(count), nil) }
            defer { state.producerWaits = nil }
            return (.bytes(count), state.producerWaits)
        }
        wake?.resume()
        return outcome
    }
}

import Foundation

/// A streamed body read line by line: newline-delimited JSON (NDJSON, JSON Lines), a log that
/// never ends, a watch API's one change per line.
///
/// ```swift
/// func follow() async throws {
///     let log = try await repository.performRequest(Endpoint<ResponseChunks>(.get, "logs/live", timeout: .infinity)).get()
///     for try await line in log.lines { print(line) }
/// }
/// ```
///
/// A line ends at LF or CRLF (neither is part of it); the text after the last one, if any, is the
/// last line (without a CR that ends the body). A blank line is an empty string: skip it
/// (`for try await line in chunks.lines where !line.isEmpty`) where a format allows them as
/// keep-alives. Lines are read as UTF-8, an invalid sequence becoming U+FFFD. A line longer than
/// its maximum (1 MiB by default) ends the sequence with
/// ``RepositoryError/invalidResponse(reason:context:)`` and cancels the transfer, so a body with
/// no line breaks cannot fill memory. It reads the same ``ResponseChunks``, so it can be iterated
/// once, by one task at a time, and ends or fails as the chunks do.
public struct ResponseLines: AsyncSequence, Sendable {
    public typealias Element = String
    public typealias Failure = RepositoryError

    /// The longest line, in bytes, unless told otherwise: 1 MiB.
    public static let defaultMaximumLength = 1024 * 1024

    let chunks: ResponseChunks
    let maximumLength: Int

    public func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks, maximumLength: maximumLength) }

    /// Reads the lines in order.
    public struct Iterator: AsyncIteratorProtocol {
        let chunks: ResponseChunks
        let maximumLength: Int
        private var reader: ResponseChunks.Iterator
        /// The bytes read and not yet returned are `pending[start...]`; those before `scanned`
        /// hold no line feed.
        private var pending: [UInt8] = []
        private var start = 0
        private var scanned = 0
        private var ended = false

        init(chunks: ResponseChunks, maximumLength: Int) {
            self.chunks = chunks
            self.maximumLength = Swift.max(1, maximumLength)
            reader = chunks.makeAsyncIterator()
        }

        public mutating func next() async throws(RepositoryError) -> String? {
            // A cancelled reader gets no more of the lines already read: the body ends now.
            if Task.isCancelled, !ended || start < pending.count {
                throw finish(with: .cancelled(ErrorContext(request: chunks.sink.requestSummary)))
            }
            while true {
                // A line ends at its line feed, or the last one at the end of the body.
                let feed = pending[scanned...].firstIndex(of: UInt8(ascii: "\n"))
                if feed != nil || (ended && start < pending.count) {
                    let stop = feed ?? pending.count
                    let end = stop > start && pending[stop - 1] == UInt8(ascii: "\r") ? stop - 1 : stop
                    guard end - start <= maximumLength else { throw tooLong() }
                    return take(upTo: end, next: feed.map { $0 + 1 } ?? stop)
                }
                if ended { return nil }
                scanned = pending.count
                // One byte more than the line may hold: a CR that the next piece's LF ends it with.
                guard pending.count - start - 1 <= maximumLength else { throw tooLong() }
                guard let chunk = try await reader.next() else {
                    ended = true
                    continue
                }
                pending.append(contentsOf: chunk)
            }
        }

        /// Ends the sequence, and the transfer, on a line longer than ``maximumLength``.
        private mutating func tooLong() -> RepositoryError {
            finish(
                with: .invalidResponse(
                    reason: "a line of the streamed body is longer than \(maximumLength) bytes",
                    context: ErrorContext(request: chunks.sink.requestSummary)))
        }

        /// Ends the sequence and the transfer with `error`, dropping what was read and not returned.
        private mutating func finish(with error: RepositoryError) -> RepositoryError {
            chunks.cancel(waking: error)
            pending = []
            (start, scanned, ended) = (0, 0, true)
            return error
        }

        /// The line `pending[start..<end]`; the next one starts at `next`.
        private mutating func take(upTo end: Int, next: Int) -> String {
            let line = String(decoding: pending[start..<end], as: UTF8.self)
            start = next
            scanned = next
            // Drops what was read once it is most of the buffer: each byte moves about once.
            if start > 4096, start * 2 > pending.count {
                pending.removeSubrange(0..<start)
                (start, scanned) = (0, 0)
            }
            return line
        }
    }
}

extension ResponseChunks {
    /// The body line by line (see ``ResponseLines``), each at most 1 MiB.
    public var lines: ResponseLines { ResponseLines(chunks: self, maximumLength: ResponseLines.defaultMaximumLength) }

    /// The body line by line (see ``ResponseLines``), each at most `maximumLength` bytes.
    public func lines(maximumLength: Int) -> ResponseLines { ResponseLines(chunks: self, maximumLength: maximumLength) }
}

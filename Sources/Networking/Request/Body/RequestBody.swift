import Foundation
import Synchronization

/// What a request sends as its body: bytes in memory, a file (or part of one), a multipart form,
/// or an asynchronous sequence of chunks — optionally gzip-compressed on the way out. Transports
/// stream files and chunks, so a 1 GiB upload never sits in memory.
///
/// ```swift
/// let photo = RequestBody.file(URL(fileURLWithPath: "/tmp/photo.jpg"))
/// let report = RequestBody.data(json).gzipped()
/// let live = RequestBody.stream(chunks, length: nil)   // sent with chunked transfer encoding
/// ```
///
/// A body of data, files and forms can be sent again (redirects that keep the body, retries) and
/// persisted (it is `Codable`); a streamed body can be sent once and is refused by `Codable`.
public struct RequestBody: Sendable, Hashable, Codable, CustomStringConvertible {
    enum Source: Sendable, Hashable {
        case segments([BodySegment])
        case stream(BodyStream)
    }

    let source: Source
    /// Whether the body is compressed with gzip as it is sent (`Content-Encoding: gzip`).
    public let isGzipped: Bool
    /// The media type the body says it is (a form's, with its boundary), when it knows.
    let mediaType: String?

    init(source: Source, isGzipped: Bool = false, mediaType: String? = nil) {
        self.source = source
        self.isGzipped = isGzipped
        self.mediaType = mediaType
    }

    /// Bytes in memory.
    public static func data(_ data: Data) -> RequestBody {
        RequestBody(source: .segments([.data(data)]))
    }

    /// A file, or `length` bytes of it from `offset` (the rest of the file when `length` is `nil`
    /// or negative; a negative `offset` means 0, as in a stored body), read as it is sent. The
    /// file must be a regular file (not a pipe or a device) and hold those bytes when the request
    /// is sent, or the request fails with ``TransportError/invalidRequest(_:)``.
    public static func file(_ url: URL, offset: Int64 = 0, length: Int64? = nil) -> RequestBody {
        RequestBody(source: .segments([.file(url, offset: max(0, offset), length: length.map { $0 < 0 ? -1 : $0 } ?? -1)]))
    }

    /// A `multipart/form-data` form, always sent with its ``MultipartFormData/contentType``,
    /// which names its boundary.
    public static func multipart(_ form: MultipartFormData) -> RequestBody {
        RequestBody(source: .segments(form.segments()), mediaType: form.contentType)
    }

    /// Chunks from an asynchronous sequence, read as they are sent; `length` is the total when
    /// known (sent as `Content-Length`), else the body goes with chunked transfer encoding.
    /// The sequence is read once: a request with this body cannot be sent again (a 307 or 308
    /// is then the call's answer, not followed).
    public static func stream<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, length: Int64? = nil) -> RequestBody
    where Chunks.Element == Data {
        RequestBody(source: .stream(BodyStream(chunks, length: length)))
    }

    /// Whether the body is a stream, which can be sent once only.
    var isStreamed: Bool {
        if case .stream = source { return true }
        return false
    }

    /// Whether the body is read from a file or a stream as it is sent: a transfer whose length
    /// the configuration's timeout was not meant for.
    var isReadAsSent: Bool {
        switch source {
        case .stream: return true
        case .segments(let segments): return segments.contains { if case .file = $0 { true } else { false } }
        }
    }

    /// The same body, compressed with gzip as it is sent (its length becomes unknown).
    public func gzipped() -> RequestBody {
        RequestBody(source: source, isGzipped: true, mediaType: mediaType)
    }

    /// The number of bytes sent, when known ahead: not for compressed bodies, nor streams without
    /// a length. Files are measured now.
    public var length: Int64? {
        guard !isGzipped else { return nil }
        switch source {
        case .stream(let stream): return stream.length
        case .segments(let segments):
            var total: Int64 = 0
            for segment in segments {
                guard let length = segment.resolvedLength else { return nil }
                let (sum, overflow) = total.addingReportingOverflow(length)
                guard !overflow else { return nil }
                total = sum
            }
            return total
        }
    }

    /// The bytes, when the body is uncompressed data in memory.
    public var inMemoryData: Data? {
        guard !isGzipped, case .segments(let segments) = source, segments.count <= 1 else { return nil }
        guard let first = segments.first else { return Data() }
        if case .data(let data) = first { return data }
        return nil
    }

    /// The file, when the body is one whole uncompressed file: sent to its end, or to a length
    /// it still has (pinned when its digests were computed, `pinningFileLengths()`).
    var wholeFile: URL? {
        guard !isGzipped, case .segments(let segments) = source, segments.count == 1,
            case .file(let url, offset: 0, let length, _)? = segments.first,
            length < 0 || (try? BodySegment.file(url, offset: 0, length: -1).measuredLength()) == length
        else { return nil }
        return url
    }

    /// The media type a body sent as it is gets when none is given: a single file's from its
    /// extension, else `application/octet-stream` (a form's is its ``mediaType``).
    var guessedContentType: String {
        if case .segments(let segments) = source, segments.count == 1, case .file(let url, _, _, _)? = segments.first {
            return MIMETypes.type(forPathExtension: url.pathExtension)
        }
        return MIMETypes.fallback
    }

    /// Whether the body can be sent again (not a stream).
    public var isRepeatable: Bool {
        if case .stream = source { return false }
        return true
    }

    public var description: String {
        let what: String
        switch source {
        case .stream(let stream): what = "a stream of \(stream.length.map { "\($0) bytes" } ?? "unknown length")"
        case .segments(let segments):
            let files = segments.filter { if case .file = $0 { true } else { false } }.count
            what = files == 0 ? "\(length ?? 0) bytes in memory" : "\(length.map { "\($0) bytes" } ?? "bytes") from \(files) file(s)"
        }
        return isGzipped ? "\(what), gzip-compressed" : what
    }

    // MARK: Codable

    private enum CodingKeys: String, CodingKey { case segments, gzip, type }
    private enum SegmentKeys: String, CodingKey { case data, file, offset, length, whole }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var list = try container.nestedUnkeyedContainer(forKey: .segments)
        var segments: [BodySegment] = []
        while !list.isAtEnd {
            let segment = try list.nestedContainer(keyedBy: SegmentKeys.self)
            if let data = try segment.decodeIfPresent(Data.self, forKey: .data) {
                segments.append(.data(data))
            } else {
                // A negative offset means 0 and a negative length "to the end" (written as -1), so
                // that a stored body never holds what cannot be sent; a range past any file fails
                // when the body is sent.
                let offset = try segment.decode(Int64.self, forKey: .offset)
                let length = try segment.decode(Int64.self, forKey: .length)
                segments.append(
                    .file(
                        try segment.decode(URL.self, forKey: .file), offset: max(0, offset), length: length < 0 ? -1 : length,
                        isWhole: try segment.decodeIfPresent(Bool.self, forKey: .whole) ?? false))
            }
        }
        self.init(
            source: .segments(segments), isGzipped: try container.decode(Bool.self, forKey: .gzip),
            mediaType: try container.decodeIfPresent(String.self, forKey: .type))
    }

    /// Encodes data and file bodies (files by reference).
    ///
    /// - Throws: `EncodingError.invalidValue` for a streamed body, which cannot be kept.
    public func encode(to encoder: any Encoder) throws {
        guard case .segments(let segments) = source else {
            throw EncodingError.invalidValue(
                self, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "a streamed body cannot be persisted"))
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        var list = container.nestedUnkeyedContainer(forKey: .segments)
        for segment in segments {
            var entry = list.nestedContainer(keyedBy: SegmentKeys.self)
            switch segment {
            case .data(let data): try entry.encode(data, forKey: .data)
            case .file(let url, let offset, let length, let isWhole):
                try entry.encode(url, forKey: .file)
                try entry.encode(offset, forKey: .offset)
                try entry.encode(length, forKey: .length)
                if isWhole { try entry.encode(true, forKey: .whole) }
            }
        }
        try container.encode(isGzipped, forKey: .gzip)
        try container.encodeIfPresent(mediaType, forKey: .type)
    }
}

extension RequestBody {
    /// The body with each file segment sent "to the end" given the length it has now.
    ///
    /// - Throws: as ``BodySegment/measuredLength()``.
    func pinningFileLengths() throws(TransportError) -> RequestBody {
        guard case .segments(let segments) = source else { return self }
        var pinned: [BodySegment] = []
        for segment in segments {
            guard case .file(let url, let offset, let length, let isWhole) = segment, length < 0 else {
                pinned.append(segment)
                continue
            }
            pinned.append(.file(url, offset: offset, length: try segment.measuredLength(), isWhole: isWhole))
        }
        return RequestBody(source: .segments(pinned), isGzipped: isGzipped, mediaType: mediaType)
    }
}

extension BodySegment {
    /// The segment's length; for a file whose length is "to the end" (negative), measured now;
    /// `nil` when that cannot be known (see ``measuredLength()``).
    var resolvedLength: Int64? { try? measuredLength() }

    /// The segment's length; for a file whose length is "to the end" (negative), measured now,
    /// through symbolic links.
    ///
    /// - Throws: ``TransportError/invalidRequest(_:)`` for a URL that is not a file URL, a file
    ///   that cannot be read or is not a regular file (its size says nothing), or an offset past
    ///   the end of the file.
    func measuredLength() throws(TransportError) -> Int64 {
        switch self {
        case .data(let data): return Int64(data.count)
        case .file(let url, let offset, let length, _):
            guard url.isFileURL else {
                throw .invalidRequest("the body file \(Redaction.standard.urlText(url.absoluteString)) is not a file URL")
            }
            if length >= 0 {
                // A regular file must hold the part declared: announced longer, the upload would
                // stop short and fail as a file that changed while it was sent. (A device or a
                // pipe with a length given is read for that many bytes.)
                if case .regular(let size) = POSIX.kind(ofFileAt: url.path), offset > size || length > size - offset {
                    guard offset <= size else {
                        throw .invalidRequest("the body file \(url.path) holds \(size) bytes, fewer than its offset \(offset)")
                    }
                    throw .invalidRequest(
                        "the body file \(url.path) holds \(size) bytes, fewer than the \(length) from offset \(offset) it is to send")
                }
                return length
            }
            switch POSIX.kind(ofFileAt: url.path) {
            case .unreadable(let reason): throw .invalidRequest("the body file \(url.path) cannot be read: \(reason)")
            case .other: throw .invalidRequest("the body file \(url.path) is not a regular file, so its length is unknown")
            case .regular(let size):
                guard offset <= size else {
                    throw .invalidRequest("the body file \(url.path) holds \(size) bytes, fewer than its offset \(offset)")
                }
                return size - offset
            }
        }
    }
}

/// An asynchronous sequence of chunks that a body reads once.
final class BodyStream: Sendable, Hashable {
    let length: Int64?
    private let chunks: Mutex<(any AsyncSequence<Data, any Error> & Sendable)?>

    init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, length: Int64?) where Chunks.Element == Data {
        self.length = length.map { max(0, $0) }
        self.chunks = Mutex(AnySendableChunks(chunks))
    }

    /// The sequence, the first time; `nil` afterwards (a stream is read once).
    func take() -> (any AsyncSequence<Data, any Error> & Sendable)? {
        chunks.withLock { chunks in
            defer { chunks = nil }
            return chunks
        }
    }

    static func == (lhs: BodyStream, rhs: BodyStream) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Any `Sendable` sequence of `Data`, with its failure type erased to `any Error`.
private struct AnySendableChunks<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == Data {
    typealias Element = Data
    typealias Failure = any Error
    let base: Base

    init(_ base: Base) { self.base = base }

    struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        mutating func next() async throws -> Data? { try await base.next() }
    }

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator()) }
}

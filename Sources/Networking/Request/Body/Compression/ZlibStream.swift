import CZlib

/// One zlib `z_stream` on the heap, with the scratch buffer its output goes through, freed exactly
/// once when the last reference goes away.
///
/// zlib's internal state points back at its `z_stream` and refuses to work if the struct moves, so
/// the struct lives at a fixed heap address rather than inside a Swift value. The gzip compressor
/// and decompressor are structs around this class: copying them copies the reference, and they
/// call ``copy()`` before mutating a shared stream (copy-on-write), so copies behave as
/// independent values and the stream cannot be freed twice.
///
/// Not `Sendable`: zlib state is mutable and unsynchronized.
final class ZlibStream {
    /// Which side of zlib owns the stream; decides the copy and end functions.
    enum Direction {
        case deflate
        case inflate
    }

    /// The output buffer size: large enough that zlib rarely stops mid-block, small enough to keep
    /// memory flat however big the input.
    static let scratchSize = 64 * 1024

    /// Whether this stream compresses or decompresses.
    let direction: Direction
    /// The zlib state, at a fixed address for the stream's whole life.
    let stream: UnsafeMutablePointer<z_stream>
    /// Where zlib writes output before it is appended to the caller's `Data`.
    let scratch: UnsafeMutablePointer<UInt8>

    /// A gzip compressor stream: deflate with a gzip wrapper (window bits 15 + 16), memory level 8,
    /// default strategy.
    ///
    /// - Throws: ``CompressionError/invalidLevel(_:)`` outside 0…9, or the initialisation failure.
    static func gzipDeflating(level: Int) throws(CompressionError) -> ZlibStream {
        guard (0...9).contains(level) else { throw .invalidLevel(level) }
        return try ZlibStream(direction: .deflate) { stream in
            networking_deflateInit2(stream, Int32(level), Z_DEFLATED, MAX_WBITS + 16, 8, Z_DEFAULT_STRATEGY)
        }
    }

    /// A gzip-only decompressor stream (window bits 15 + 16: a zlib or raw deflate stream is refused).
    static func gzipInflating() throws(CompressionError) -> ZlibStream {
        try ZlibStream(direction: .inflate) { stream in networking_inflateInit2(stream, MAX_WBITS + 16) }
    }

    /// Allocates a zeroed `z_stream` (default allocators) and initialises it with `initialize`,
    /// freeing it again if that fails.
    private init(direction: Direction, initialize: (UnsafeMutablePointer<z_stream>) -> Int32) throws(CompressionError) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = initialize(stream)
        guard code == Z_OK else {
            let error = Self.error(code: code, stream: stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw error
        }
        self.direction = direction
        self.stream = stream
        scratch = .allocate(capacity: Self.scratchSize)
    }

    /// Wraps a stream that `deflateCopy` or `inflateCopy` initialised.
    private init(direction: Direction, initializedStream: UnsafeMutablePointer<z_stream>) {
        self.direction = direction
        stream = initializedStream
        scratch = .allocate(capacity: Self.scratchSize)
    }

    /// An independent stream in the same state (`deflateCopy` / `inflateCopy`), for copy-on-write.
    func copy() throws(CompressionError) -> ZlibStream {
        let destination = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        destination.initialize(to: z_stream())
        let code =
            switch direction {
            case .deflate: deflateCopy(destination, stream)
            case .inflate: inflateCopy(destination, stream)
            }
        guard code == Z_OK else {
            destination.deinitialize(count: 1)
            destination.deallocate()
            throw Self.error(code: code, stream: stream)
        }
        return ZlibStream(direction: direction, initializedStream: destination)
    }

    deinit {
        switch direction {
        case .deflate: _ = deflateEnd(stream)
        case .inflate: _ = inflateEnd(stream)
        }
        stream.deinitialize(count: 1)
        stream.deallocate()
        scratch.deallocate()
    }

    /// The error for a zlib failure `code`, with zlib's message when it left one.
    static func error(code: Int32, stream: UnsafeMutablePointer<z_stream>) -> CompressionError {
        let message = stream.pointee.msg.map { String(cString: $0) } ?? "no message"
        switch code {
        case Z_MEM_ERROR: return .outOfMemory
        case Z_DATA_ERROR: return .corruptData(reason: message)
        case Z_NEED_DICT: return .corruptData(reason: "a preset dictionary is required")
        default: return .zlib(code: code, message: message)
        }
    }
}

import CZlib
import Foundation

/// Streaming gzip decompression (RFC 1952) with a cap on the output, the counterpart of
/// ``GzipCompressor``.
///
/// A few kilobytes of gzip can expand to gigabytes (a "gzip bomb"), so the total output is capped:
/// the decompressor throws as soon as it would exceed `maximumOutputSize`, holding at most that much
/// plus one 64 KiB buffer. Only the gzip format is accepted (zlib window bits 15 + 16): raw deflate
/// and zlib-wrapped data are refused. Concatenated gzip members, which RFC 1952 §2.2 allows, are
/// decompressed one after the other; bytes after a member that do not start another are corrupt data.
///
/// A value type with copy-on-write, like ``GzipCompressor``; not `Sendable`.
struct GzipDecompressor {
    /// The largest slice handed to zlib at once, whose counters are 32-bit.
    private static let maximumSlice = 1 << 30

    private var zlib: ZlibStream
    /// The most bytes this decompressor will produce in total.
    let maximumOutputSize: Int
    private var producedCount = 0
    /// Whether the last input ended exactly at the end of a gzip member.
    private var memberEnded = false
    /// Set by `finish()` or by an error; every later call throws it.
    private var failure: CompressionError?

    /// A decompressor that refuses to produce more than `maximumOutputSize` bytes.
    ///
    /// - Throws: ``CompressionError/outOfMemory`` when zlib cannot allocate its state.
    init(maximumOutputSize: Int) throws(CompressionError) {
        zlib = try .gzipInflating()
        self.maximumOutputSize = maximumOutputSize
    }

    /// Decompresses a whole gzip stream held in memory.
    ///
    /// - Throws: ``CompressionError/outputLimitExceeded(limit:)``, ``CompressionError/corruptData(reason:)``,
    ///   ``CompressionError/truncated`` (including for empty input).
    static func decompress(_ data: Data, maximumOutputSize: Int) throws(CompressionError) -> Data {
        var decompressor = try GzipDecompressor(maximumOutputSize: maximumOutputSize)
        let outcome = data.withUnsafeBytes { buffer in
            Result { () throws(CompressionError) in try decompressor.decompress(buffer) }
        }
        let output = try outcome.get()
        try decompressor.finish()
        return output
    }

    /// Adds compressed `input` and returns the decompressed bytes it completes.
    ///
    /// - Throws: ``CompressionError/outputLimitExceeded(limit:)`` when the total output would exceed
    ///   the limit; ``CompressionError/corruptData(reason:)`` for invalid data;
    ///   ``CompressionError/alreadyFinished`` after ``finish()``. The decompressor is unusable afterwards.
    mutating func decompress(_ input: UnsafeRawBufferPointer) throws(CompressionError) -> Data {
        if let failure { throw failure }
        var output = Data()
        guard let base = input.baseAddress, !input.isEmpty else { return output }
        do throws(CompressionError) {
            let zlib = try uniqueStream()
            var offset = 0
            while offset < input.count {
                let sliceCount = min(input.count - offset, Self.maximumSlice)
                zlib.stream.pointee.next_in = UnsafeMutablePointer(mutating: (base + offset).assumingMemoryBound(to: Bytef.self))
                zlib.stream.pointee.avail_in = uInt(sliceCount)
                defer {
                    zlib.stream.pointee.next_in = nil
                    zlib.stream.pointee.avail_in = 0
                }
                try inflateSlice(zlib, into: &output)
                offset += sliceCount
            }
        } catch {
            failure = error
            throw error
        }
        return output
    }

    /// Checks that the input ended at the end of a gzip member.
    ///
    /// - Throws: ``CompressionError/truncated`` when the input stopped inside a member or held none.
    mutating func finish() throws(CompressionError) {
        if let failure { throw failure }
        failure = memberEnded ? .alreadyFinished : .truncated
        guard memberEnded else { throw .truncated }
    }

    /// Inflates until the slice in `zlib.stream` is consumed and no output is pending.
    private mutating func inflateSlice(_ zlib: ZlibStream, into output: inout Data) throws(CompressionError) {
        while true {
            if memberEnded {
                // More input after a complete member: it must be another member.
                guard inflateReset(zlib.stream) == Z_OK else { throw ZlibStream.error(code: Z_STREAM_ERROR, stream: zlib.stream) }
                memberEnded = false
            }
            zlib.stream.pointee.next_out = zlib.scratch
            zlib.stream.pointee.avail_out = uInt(ZlibStream.scratchSize)
            let code = inflate(zlib.stream, Z_NO_FLUSH)
            let produced = ZlibStream.scratchSize - Int(zlib.stream.pointee.avail_out)
            zlib.stream.pointee.next_out = nil
            guard produced <= maximumOutputSize - producedCount else { throw .outputLimitExceeded(limit: maximumOutputSize) }
            producedCount += produced
            output.append(zlib.scratch, count: produced)
            let hasInput = zlib.stream.pointee.avail_in > 0
            let outputFull = zlib.stream.pointee.avail_out == 0
            switch code {
            case Z_STREAM_END:
                memberEnded = true
                if !hasInput { return }
            case Z_OK:
                if !hasInput && !outputFull { return }
            case Z_BUF_ERROR where !hasInput:
                // No progress possible: all input is used and nothing is pending.
                return
            default:
                throw ZlibStream.error(code: code, stream: zlib.stream)
            }
        }
    }

    /// The stream, duplicated first if a copy of this decompressor shares it.
    private mutating func uniqueStream() throws(CompressionError) -> ZlibStream {
        if !isKnownUniquelyReferenced(&zlib) { zlib = try zlib.copy() }
        return zlib
    }
}

@available(*, unavailable, message: "a decompressor belongs to one task; transfer it with `sending`")
extension GzipDecompressor: Sendable {}

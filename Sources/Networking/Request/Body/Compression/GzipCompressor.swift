import CZlib
import Foundation

/// Streaming gzip compression (RFC 1952) over the system zlib, for `Content-Encoding: gzip`
/// request bodies that are compressed while they are sent.
///
/// Feed the body in pieces of any size with ``compress(_:)``, send whatever each call returns, then
/// send what ``finish()`` returns: the last compressed block and the gzip trailer (CRC-32 and
/// length). Memory stays flat whatever the body's size: zlib keeps about 256 KiB of state and each
/// call returns only the output that is ready. For a body already in memory, use
/// ``compress(_:level:)``.
///
/// Settings are zlib's defaults for gzip: window bits 15 + 16 (a 32 KiB window with a gzip header
/// and trailer), memory level 8, default strategy, and level 6 unless told otherwise. The header
/// carries no file name and no time stamp, so the same input always gives the same bytes.
///
/// A value type with copy-on-write: copying a compressor and using both copies works (the zlib
/// state is duplicated on the first mutation of a shared copy). Not `Sendable`: a compressor
/// belongs to the one task that streams the body; hand it over with `sending` if needed.
struct GzipCompressor {
    /// The largest slice handed to zlib at once, whose counters are 32-bit.
    private static let maximumSlice = 1 << 30

    private var zlib: ZlibStream
    /// Set by `finish()` or by an error; every later call throws it.
    private var failure: CompressionError?

    /// A compressor at `level`, from 0 (store only) to 9 (smallest output, slowest); 6 by default,
    /// zlib's balance of speed and size.
    ///
    /// - Throws: ``CompressionError/invalidLevel(_:)`` outside 0…9;
    ///   ``CompressionError/outOfMemory`` when zlib cannot allocate its state.
    init(level: Int = 6) throws(CompressionError) {
        zlib = try .gzipDeflating(level: level)
    }

    /// Compresses the whole of `data` into one gzip stream.
    ///
    /// - Throws: ``CompressionError/invalidLevel(_:)`` or ``CompressionError/outOfMemory``.
    static func compress(_ data: Data, level: Int = 6) throws(CompressionError) -> Data {
        var compressor = try GzipCompressor(level: level)
        let outcome = data.withUnsafeBytes { buffer in
            Result { () throws(CompressionError) in try compressor.compress(buffer) }
        }
        var output = try outcome.get()
        output.append(try compressor.finish())
        return output
    }

    /// Adds `input` to the stream and returns the compressed bytes that are ready, often none: zlib
    /// holds input back until it has enough for a block. The input is not retained after the call.
    ///
    /// - Throws: ``CompressionError/alreadyFinished`` after ``finish()``; a ``CompressionError`` if
    ///   zlib fails, after which the compressor is unusable.
    mutating func compress(_ input: UnsafeRawBufferPointer) throws(CompressionError) -> Data {
        try checkUsable()
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
                // With room left in the output buffer after a call, deflate has consumed all input.
                repeat {
                    let code = Self.deflateIntoScratch(zlib, flush: Z_NO_FLUSH, output: &output)
                    guard code == Z_OK || code == Z_BUF_ERROR else { throw ZlibStream.error(code: code, stream: zlib.stream) }
                } while zlib.stream.pointee.avail_out == 0 || zlib.stream.pointee.avail_in > 0
                offset += sliceCount
            }
        } catch {
            failure = error
            throw error
        }
        return output
    }

    /// Returns every compressed byte of the input so far (a sync flush), so that a receiver can
    /// decompress all of it now: for a stream that pauses, whose last input would otherwise wait
    /// in zlib until enough follows for a block. Costs a few bytes of compression each time.
    ///
    /// - Throws: ``CompressionError/alreadyFinished`` after ``finish()``; a ``CompressionError`` if
    ///   zlib fails, after which the compressor is unusable.
    mutating func flush() throws(CompressionError) -> Data {
        try checkUsable()
        var output = Data()
        do throws(CompressionError) {
            let zlib = try uniqueStream()
            // A full output buffer means more is waiting; Z_BUF_ERROR: nothing left to flush.
            repeat {
                let code = Self.deflateIntoScratch(zlib, flush: Z_SYNC_FLUSH, output: &output)
                guard code == Z_OK || code == Z_BUF_ERROR else { throw ZlibStream.error(code: code, stream: zlib.stream) }
            } while zlib.stream.pointee.avail_out == 0
        } catch {
            failure = error
            throw error
        }
        return output
    }

    /// Ends the stream and returns its last bytes: the final compressed block and the gzip trailer.
    /// A stream with no input at all is a valid 20-byte gzip file of empty content.
    ///
    /// - Throws: ``CompressionError/alreadyFinished`` when called twice; a ``CompressionError`` if
    ///   zlib fails.
    mutating func finish() throws(CompressionError) -> Data {
        try checkUsable()
        var output = Data()
        do throws(CompressionError) {
            let zlib = try uniqueStream()
            while true {
                let code = Self.deflateIntoScratch(zlib, flush: Z_FINISH, output: &output)
                if code == Z_STREAM_END { break }
                // Z_OK, or Z_BUF_ERROR with a full buffer: more output is waiting; call again.
                guard code == Z_OK || (code == Z_BUF_ERROR && zlib.stream.pointee.avail_out == 0) else {
                    throw ZlibStream.error(code: code, stream: zlib.stream)
                }
            }
        } catch {
            failure = error
            throw error
        }
        failure = .alreadyFinished
        return output
    }

    private func checkUsable() throws(CompressionError) {
        if let failure { throw failure }
    }

    /// The stream, duplicated first if a copy of this compressor shares it.
    private mutating func uniqueStream() throws(CompressionError) -> ZlibStream {
        if !isKnownUniquelyReferenced(&zlib) { zlib = try zlib.copy() }
        return zlib
    }

    /// One `deflate` call into the scratch buffer; appends what it produced to `output`.
    private static func deflateIntoScratch(_ zlib: ZlibStream, flush: Int32, output: inout Data) -> Int32 {
        zlib.stream.pointee.next_out = zlib.scratch
        zlib.stream.pointee.avail_out = uInt(ZlibStream.scratchSize)
        let code = deflate(zlib.stream, flush)
        let produced = ZlibStream.scratchSize - Int(zlib.stream.pointee.avail_out)
        output.append(zlib.scratch, count: produced)
        zlib.stream.pointee.next_out = nil
        return code
    }
}

@available(*, unavailable, message: "a compressor belongs to one task; transfer it with `sending`")
extension GzipCompressor: Sendable {}

/// Why gzip compression or decompression failed.
///
/// After any error the compressor or decompressor that threw is unusable and throws the same error
/// again; start a new one.
enum CompressionError: Error, Sendable, Hashable {
    /// The compression level is outside 0 (store) … 9 (smallest).
    case invalidLevel(Int)
    /// zlib could not allocate its state.
    case outOfMemory
    /// `compress`, `decompress` or `finish` was called after `finish`.
    case alreadyFinished
    /// The input is not a valid gzip stream (bad header, bad block, CRC or length mismatch);
    /// `reason` is zlib's message.
    case corruptData(reason: String)
    /// The input ended in the middle of a gzip stream, or held none.
    case truncated
    /// The decompressed output would exceed the caller's limit, as a decompression bomb would.
    case outputLimitExceeded(limit: Int)
    /// zlib returned a code the library does not expect, with its message.
    case zlib(code: Int32, message: String)
}

extension CompressionError: CustomStringConvertible {
    var description: String {
        switch self {
        case .invalidLevel(let level): "invalid gzip compression level \(level) (expected 0 to 9)"
        case .outOfMemory: "zlib could not allocate memory"
        case .alreadyFinished: "the gzip stream is already finished"
        case .corruptData(let reason): "invalid gzip data: \(reason)"
        case .truncated: "the gzip data ended before the end of the stream"
        case .outputLimitExceeded(let limit): "the decompressed data exceeds the limit of \(limit) bytes"
        case .zlib(let code, let message): "zlib failed with code \(code): \(message)"
        }
    }
}

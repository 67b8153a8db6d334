import Foundation

/// Why a ``MultipartFormData`` body could not be built or encoded.
public enum MultipartError: Error, Sendable, Hashable {
    /// The boundary given to ``MultipartFormData/init(boundary:)`` breaks RFC 2046 §5.1.1: it must be
    /// 1 to 70 characters among letters, digits and `'()+_,-./:=?` or space, and must not end in a space.
    case invalidBoundary(String, reason: String)
    /// The URL given to ``MultipartFormData/append(fileAt:name:fileName:contentType:)`` is not a `file:` URL.
    case notAFileURL(URL)
    /// Nothing exists at the file's path.
    case fileNotFound(URL)
    /// The path names a directory, socket or other non-regular file, whose size cannot be known in advance.
    case notARegularFile(URL)
    /// The file exists but cannot be read (permissions, I/O error); `reason` is the system's explanation.
    case fileUnreadable(URL, reason: String)
    /// The file's size changed between `append(fileAt:…)` and encoding, so the body would not match
    /// the `Content-Length` already computed.
    case fileChanged(URL, expectedSize: Int64, actualSize: Int64)
    /// The body is larger than the caller accepts in memory (``MultipartFormData/encodedData(maximumSize:)``)
    /// or than a body can be (`Int64.max` bytes, reported as `size`); nothing was read.
    case bodyTooLarge(size: Int64, limit: Int64)
}

extension MultipartError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidBoundary(let boundary, let reason): "invalid multipart boundary \"\(boundary)\": \(reason)"
        // A presigned URL given by mistake carries its signature in the query.
        case .notAFileURL(let url): "not a file URL: \(Redaction.standard.url(url))"
        case .fileNotFound(let url): "no file at \(url.path)"
        case .notARegularFile(let url): "not a regular file: \(url.path)"
        case .fileUnreadable(let url, let reason): "cannot read \(url.path): \(reason)"
        case .fileChanged(let url, let expected, let actual):
            "\(url.path) changed size since it was added to the form (\(expected) bytes, now \(actual))"
        case .bodyTooLarge(let size, let limit): "the multipart body is \(size) bytes, above the limit of \(limit)"
        }
    }
}

import Foundation

/// One piece of a request body that is assembled from memory and files, so a transport can stream
/// it in order without loading the files.
///
/// A body is an ordered list of segments (see ``MultipartFormData/segments()``); sending it means
/// sending each segment's bytes in turn. The file ranges were measured when the body was built: a
/// transport must send exactly `length` bytes from `offset` and fail the request if the file no
/// longer has them, because the body's `Content-Length` was computed from those sizes.
enum BodySegment: Sendable, Hashable {
    /// Bytes held in memory.
    case data(Data)
    /// `length` bytes of the file at a `file:` URL, starting `offset` bytes in; `length` may be 0.
    /// Every maker gives an `offset` of 0 or more (``RequestBody/file(_:offset:length:)`` and the
    /// decoder clamp it), so the arithmetic on it only has to watch the top of `Int64`.
    /// `isWhole` marks a whole file measured when the body was built (a form's file): it must
    /// still end where the range ends when sent, else a file that grew since would go cut short.
    case file(URL, offset: Int64, length: Int64, isWhole: Bool = false)

    /// The number of bytes this segment contributes to the body.
    var length: Int64 {
        switch self {
        case .data(let data): Int64(data.count)
        case .file(_, _, let length, _): length
        }
    }
}

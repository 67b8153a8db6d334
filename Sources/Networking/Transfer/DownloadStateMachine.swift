import Foundation

/// The decisions of a download to a file, as pure functions tested without I/O: whether to resume
/// a partial file (RFC 9110 §14: `Range` with `If-Range`), and what to do with each response head.
///
/// - A partial file is resumed only when it was kept for the same URL, with a validator: a strong
///   `ETag`, else `Last-Modified` (weak ETags cannot be used in `If-Range`).
/// - `206` starting exactly where the partial file ends: append. Any other `206`: start over.
/// - `200` (the server ignored the range, or `If-Range` found the file changed): write from the start.
/// - `416` with `Content-Range: bytes */N` where `N` is the partial file's size: the file is
///   already complete. Any other `416` while resuming: start over.
/// - Any other status is not a download: its body is kept for the error.
enum DownloadStateMachine {
    /// What is kept beside a partial file so that it can be resumed.
    struct Resumption: Codable, Hashable, Sendable {
        /// The URL the bytes came from.
        let url: String
        /// The `If-Range` value: a strong ETag or a Last-Modified date.
        let validator: String
        /// The file's full size, when the server said.
        let total: Int64?
    }

    /// How a download starts.
    enum Start: Hashable, Sendable {
        case fresh
        case resume(from: Int64, validator: String)
    }

    /// What to do with a response head.
    enum Decision: Hashable, Sendable {
        /// Write the body from the first byte (truncating any partial file).
        case writeFromStart(total: Int64?)
        /// Append the body after the partial file's `offset` bytes.
        case append(at: Int64, total: Int64?)
        /// The partial file is the whole file already (`total` bytes).
        case alreadyComplete(total: Int64)
        /// The answer does not fit the partial file: drop it and download again from the start.
        case restart(reason: String)
        /// Not a download (an error status): the body is collected for the error.
        case notADownload
    }

    /// Whether to resume: only a non-empty partial file kept for this URL with a validator.
    static func start(partialSize: Int64?, resumption: Resumption?, url: URL) -> Start {
        guard let partialSize, partialSize > 0, let resumption, resumption.url == url.absoluteString,
            !resumption.validator.isEmpty
        else { return .fresh }
        if let total = resumption.total, partialSize > total { return .fresh }
        return .resume(from: partialSize, validator: resumption.validator)
    }

    /// The header fields a start adds to the request.
    static func headers(for start: Start) -> HTTPHeaders {
        guard case .resume(let from, let validator) = start else { return [:] }
        return ["Range": "bytes=\(from)-", "If-Range": validator]
    }

    /// What to do with a response head, given how the download started.
    static func decide(status: Int, headers: HTTPHeaders, start: Start) -> Decision {
        let length = headers["Content-Length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        switch status {
        case 206:
            guard let range = headers["Content-Range"].flatMap(contentRange) else {
                return .restart(reason: "the server answered 206 without a readable Content-Range")
            }
            if case .resume(let from, _) = start, range.first == from { return .append(at: from, total: range.total) }
            if case .fresh = start, range.first == 0 { return .writeFromStart(total: range.total) }
            return .restart(reason: "the server sent bytes from \(range.first), not from where the partial file ends")
        case 416:
            guard case .resume(let from, _) = start else { return .notADownload }
            if let total = headers["Content-Range"].flatMap(unsatisfiedTotal), total == from { return .alreadyComplete(total: total) }
            return .restart(reason: "the server cannot serve the rest of the partial file (416)")
        case 200..<300:
            return .writeFromStart(total: length)
        default:
            return .notADownload
        }
    }

    /// The value to resume with later: a strong ETag, else Last-Modified.
    static func validator(in headers: HTTPHeaders) -> String? {
        if let etag = headers["ETag"]?.trimmingCharacters(in: .whitespaces), etag.hasPrefix("\""), etag.count >= 2 { return etag }
        return headers["Last-Modified"]?.trimmingCharacters(in: .whitespaces)
    }

    /// `bytes first-last/total` (total `*` when unknown).
    static func contentRange(_ value: String) -> (first: Int64, last: Int64, total: Int64?)? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst(6).split(separator: "/", maxSplits: 1)
        let bounds = parts.first?.split(separator: "-", maxSplits: 1) ?? []
        guard parts.count == 2, bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last
        else { return nil }
        let total = Int64(parts[1])
        if parts[1] != "*", total == nil { return nil }
        return (first, last, total)
    }

    /// The total of `bytes */total`, as a 416 carries it.
    static func unsatisfiedTotal(_ value: String) -> Int64? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes */") else { return nil }
        return Int64(text.dropFirst(8))
    }
}

import Foundation

/// The decisions of a download to a file, as pure functions tested without I/O: whether to resume
/// a partial file (RFC 9110 §14: `Range` with `If-Range`), and what to do with each response head.
///
/// - A partial file is resumed only when it was kept for the same URL, with a validator: a strong
///   `ETag`, else a strong `Last-Modified` (RFC 9110 §13.1.5: never a date when the answer had an
///   ETag, weak ones included, and only a date at least 60 s before the answer's `Date`).
/// - An answer with a `Content-Encoding` is written as the transport decodes it, so its length
///   says nothing of the file: it has no known total and is never resumed (ranges count encoded bytes).
/// - `206` starting exactly where the partial file ends, with the validator the request sent
///   (or none) and the total recorded with the partial file (or none): append. When it stops
///   short of the file's end (a server that caps the size of a range), append that part, then
///   ask for the rest with the same validator (``continuation(after:written:validator:)``). Any
///   other `206`: start over (a server that ignores `If-Range` would otherwise join an old file's
///   start to a new file's end).
/// - `200` (the server ignored the range, or `If-Range` found the file changed), or another 2xx:
///   write from the start. But `202` (accepted, not ready) is not the file, nor is `204` or `205`
///   (no content): the kept bytes, and a file already at the destination, stay.
/// - `416` with `Content-Range: bytes */N` where `N` is the partial file's size (and the recorded
///   total), and no other validator than the one sent: the file is already complete. Any other
///   `416` while resuming: start over.
/// - Any other status is not a download: its body is kept for the error.
enum DownloadStateMachine {
    /// What is kept beside a partial file so that it can be resumed.
    struct Resumption: Codable, Hashable, Sendable {
        /// The SHA-256 of the URL the bytes came from (``digest(of:)``): the URL itself may carry a
        /// presigned query's signature or a token, which must not stay on disk.
        let url: String
        /// The `If-Range` value: a strong ETag or a Last-Modified date.
        let validator: String
        /// The file's full size, when the server said.
        let total: Int64?

        /// A record of bytes that came from `url`.
        init(url: String, validator: String, total: Int64?) {
            self.url = Self.digest(of: url)
            self.validator = validator
            self.total = total
        }

        /// How a record names a URL.
        static func digest(of url: String) -> String {
            "sha-256:" + Data(SHA256.hash(url.utf8)).base64EncodedString()
        }
    }

    /// How a download starts.
    enum Start: Hashable, Sendable {
        case fresh
        /// Ask for the bytes after `from`, if the file is still the one `validator` names; its
        /// size was `total` when the partial file was written, if the server said.
        case resume(from: Int64, validator: String, total: Int64? = nil)
    }

    /// What to do with a response head.
    enum Decision: Hashable, Sendable {
        /// Write the body from the first byte (truncating any partial file).
        case writeFromStart(total: Int64?)
        /// Append the body after the partial file's `offset` bytes.
        case append(at: Int64, total: Int64?)
        /// Append the body, the bytes from `offset` up to `end`, of a file of `total` bytes; then
        /// ask for the rest.
        case appendPart(at: Int64, end: Int64, total: Int64)
        /// The partial file is the whole file already (`total` bytes).
        case alreadyComplete(total: Int64)
        /// The answer does not fit the partial file: drop it and download again from the start.
        case restart(reason: String)
        /// Not a download (an error status): the body is collected for the error.
        case notADownload

        /// Where the body goes after the partial file's bytes, and the file's size once written;
        /// `nil` when it does not append.
        var appending: (offset: Int64, total: Int64?)? {
            switch self {
            case .append(let offset, let total): (offset, total)
            case .appendPart(let offset, _, let total): (offset, total)
            default: nil
            }
        }
    }

    /// Whether to resume: only a non-empty partial file kept for this URL with a validator.
    static func start(partialSize: Int64?, resumption: Resumption?, url: URL) -> Start {
        // A record written before records named URLs by their digest names its URL as it is.
        guard let partialSize, partialSize > 0, let resumption,
            resumption.url == Resumption.digest(of: url.absoluteString) || resumption.url == url.absoluteString,
            isSendable(resumption.validator)
        else { return .fresh }
        if let total = resumption.total, partialSize > total { return .fresh }
        return .resume(from: partialSize, validator: resumption.validator, total: resumption.total)
    }

    /// Whether a validator can be sent as `If-Range`: not empty, and no control character (a record
    /// written by hand would have every later call refused before it is sent, the partial file
    /// kept for good).
    static func isSendable(_ validator: String) -> Bool {
        !validator.isEmpty && HTTPHeaders.isSendableFieldValue(validator)
    }

    /// The header fields a start adds to the request.
    static func headers(for start: Start) -> HTTPHeaders {
        guard case .resume(let from, let validator, _) = start else { return [:] }
        return ["Range": "bytes=\(from)-", "If-Range": validator]
    }

    /// How to go on once a part (``Decision/appendPart(at:end:total:)``) is written: ask for the
    /// bytes after it, if it came whole and the file can still be named (`validator`), else
    /// `nil` (the file is incomplete).
    static func continuation(after decision: Decision?, written: Int64, validator: String?) -> Start? {
        guard case .appendPart(_, let end, let total)? = decision, written == end, let validator, !validator.isEmpty else {
            return nil
        }
        return .resume(from: end, validator: validator, total: total)
    }

    /// What to do with a response head, given how the download started.
    static func decide(status: Int, headers: HTTPHeaders, start: Start) -> Decision {
        let encoded = isEncoded(headers)
        let length = encoded ? nil : headers["Content-Length"].flatMap { number($0.trimmingCharacters(in: .whitespaces)[...]) }
        switch status {
        case 206:
            guard let range = headers["Content-Range"].flatMap(contentRange) else {
                return .restart(reason: "the server answered 206 without a readable Content-Range")
            }
            if case .resume(let from, let validator, let recorded) = start, range.first == from {
                guard !encoded else { return .restart(reason: "the server sent the rest of the file compressed") }
                guard matches(validator, headers), recorded == nil || range.total == nil || range.total == recorded else {
                    return .restart(reason: "the file changed since the partial file was written")
                }
                // A range with no total (`/*`) is still a part of the size recorded, if one was.
                guard let total = range.total ?? recorded else { return .append(at: from, total: end(of: range)) }
                guard range.last < total else { return .restart(reason: "the server sent bytes past the file's recorded end") }
                if range.last < total - 1 { return .appendPart(at: from, end: range.last + 1, total: total) }
                return .append(at: from, total: total)
            }
            if case .fresh = start, range.first == 0 { return .writeFromStart(total: encoded ? nil : end(of: range)) }
            return .restart(reason: "the server sent bytes from \(range.first), not from where the partial file ends")
        case 416:
            guard case .resume(let from, let validator, let recorded) = start else { return .notADownload }
            if let total = headers["Content-Range"].flatMap(unsatisfiedTotal), total == from, recorded == nil || recorded == total,
                matches(validator, headers)
            {
                return .alreadyComplete(total: total)
            }
            return .restart(reason: "the server cannot serve the rest of the partial file (416)")
        case 202, 204, 205:
            return .notADownload
        case 200..<300:
            return .writeFromStart(total: length)
        default:
            return .notADownload
        }
    }

    /// The value to resume with later: a strong ETag, else a strong Last-Modified; `nil` for an
    /// encoded answer, or one with a weak ETag only.
    static func validator(in headers: HTTPHeaders) -> String? {
        guard !isEncoded(headers) else { return nil }
        if let etag = headers["ETag"]?.trimmingCharacters(in: .whitespaces), !etag.isEmpty {
            return etag.hasPrefix("\"") && etag.count >= 2 && isSendable(etag) ? etag : nil
        }
        guard let text = headers["Last-Modified"]?.trimmingCharacters(in: .whitespaces), let modified = HTTPDate.date(from: text)
        else { return nil }
        // A date is a strong validator only when the file was not changed within a second of
        // being sent: RFC 9110 §8.8.2.2 asks for 60 s between it and the answer's Date.
        guard let sent = headers["Date"].flatMap({ HTTPDate.date(from: $0) }), sent.timeIntervalSince(modified) >= 60 else { return nil }
        return text
    }

    /// Whether a 206's validators agree with the `If-Range` value sent: an ETag must equal it, a
    /// Last-Modified must name the same instant; an answer without one of that kind is taken as is.
    static func matches(_ sent: String, _ headers: HTTPHeaders) -> Bool {
        if sent.hasPrefix("\"") {
            guard let etag = headers["ETag"]?.trimmingCharacters(in: .whitespaces) else { return true }
            return etag == sent
        }
        guard let text = headers["Last-Modified"] else { return true }
        return HTTPDate.date(from: text.trimmingCharacters(in: .whitespaces)) == HTTPDate.date(from: sent)
    }

    /// Whether the body has a content coding (gzip, say) that the transport undoes.
    static func isEncoded(_ headers: HTTPHeaders) -> Bool {
        guard let coding = headers["Content-Encoding"]?.trimmingCharacters(in: .whitespaces) else { return false }
        return !coding.isEmpty && coding.lowercased() != "identity"
    }

    /// `bytes first-last/total` (total `*` when unknown), digits only, with the range inside the
    /// total (RFC 9110 §14.4).
    static func contentRange(_ value: String) -> (first: Int64, last: Int64, total: Int64?)? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst(6).split(separator: "/", maxSplits: 1)
        let bounds = parts.first?.split(separator: "-", maxSplits: 1) ?? []
        guard parts.count == 2, bounds.count == 2, let first = number(bounds[0]), let last = number(bounds[1]), first <= last
        else { return nil }
        if parts[1] == "*" { return (first, last, nil) }
        guard let total = number(parts[1]), last < total else { return nil }
        return (first, last, total)
    }

    /// The size the file has once the range is written: its total, or, when the total is not
    /// known (`bytes first-last/*`), the end of the range, so that a body cut short is still noticed.
    static func end(of range: (first: Int64, last: Int64, total: Int64?)) -> Int64? {
        range.total ?? afterLast(of: range)
    }

    /// The offset just past a range's last byte; `nil` when it would not fit an `Int64`.
    static func afterLast(of range: (first: Int64, last: Int64, total: Int64?)) -> Int64? {
        range.last < Int64.max ? range.last + 1 : nil
    }

    /// Where an answer's body ends in the file, as its head announces: a `206`'s range, whatever
    /// the file's total; another answer's `announced` size (its `Content-Length`). `nil` when the
    /// head does not say, or the body has a content coding (written decoded, so its head's sizes
    /// do not count what is written).
    static func bodyEnd(status: Int, headers: HTTPHeaders, announced: Int64?) -> Int64? {
        guard !isEncoded(headers) else { return nil }
        guard status == 206 else { return announced }
        return headers["Content-Range"].flatMap(contentRange).flatMap(afterLast)
    }

    /// The total of `bytes */total`, as a 416 carries it.
    static func unsatisfiedTotal(_ value: String) -> Int64? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes */") else { return nil }
        return number(text.dropFirst(8))
    }

    /// A size or offset of a head: digits only (`Int64` alone would take `-5` and `+5`); `nil`
    /// for anything else, or one too large.
    static func number(_ digits: Substring) -> Int64? {
        !digits.isEmpty && digits.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ? Int64(digits) : nil
    }
}

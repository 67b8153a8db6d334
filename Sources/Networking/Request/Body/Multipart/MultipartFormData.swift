import Foundation

/// A `multipart/form-data` request body (RFC 7578): text fields, in-memory files and files on disk,
/// in order, framed as RFC 2046 §5.1.1 says.
///
/// The form is a plain value: appending records the parts and measures files, but does not read
/// them. A transport streams the body from its segments without loading the files, and sends
/// ``contentType`` and ``contentLength`` as the `Content-Type` and `Content-Length` headers; small
/// forms can be turned into bytes with ``encodedData(maximumSize:)``.
///
/// Each part is written as `--boundary CRLF`, a `Content-Disposition: form-data; name="…"` header
/// (with `; filename="…"` for files), a `Content-Type` header for file parts, an empty line, the
/// content and `CRLF`; the body ends with `--boundary-- CRLF`. Names and file names follow the
/// WHATWG HTML "multipart/form-data encoding algorithm", which browsers and servers implement:
/// they are sent as UTF-8 between quotes with `"`, CR and LF replaced by `%22`, `%0D` and `%0A`
/// (RFC 7578 §4.2 forbids the `filename*` form). A backslash is sent as it is, as browsers and
/// curl send it: servers that read RFC 9110 quoted-string escapes (Werkzeug, Go's
/// `mime/multipart`) drop it (`a\b.txt` arrives as `ab.txt`), so keep backslashes out of names
/// and file names. Text fields get no `Content-Type`, which means
/// `text/plain` (RFC 7578 §4.4); data and file parts get `application/octet-stream` unless told
/// otherwise.
///
/// ## The boundary
/// The default boundary is `"Networking-"` followed by 32 random letters and digits from the
/// system's secure random generator: 62³² ≈ 2¹⁹⁰ possibilities, drawn afresh for every form. The
/// boundary must not occur in any part. In-memory parts are checked: when one contains the
/// boundary, the form draws a new one (and checks every in-memory part again), so read
/// ``boundary`` and ``contentType`` after the last `append`. File contents are not scanned, because
/// that would mean reading every file twice; the chance that a file not crafted against this very
/// boundary contains it is at most its size in bytes × 62⁻³² ≈ size × 4.4 × 10⁻⁵⁸, about 5 × 10⁻⁴⁶
/// for a 1 TiB file. A boundary given to ``init(boundary:)`` is the caller's choice and is never
/// replaced: the caller is responsible for it not occurring in the content.
///
/// - Note: A plain value: copies are independent, and it is `Sendable`, so a form built in one task
///   can be sent from another.
public struct MultipartFormData: Sendable {
    /// One part, with its header lines already formatted.
    private struct Part: Sendable {
        /// The part's header lines, each ending in CRLF, without the delimiter line before them
        /// or the empty line after them.
        var headers: Data
        /// What follows the empty line after the headers.
        var content: Content
    }

    /// A part's content.
    private enum Content: Sendable {
        case data(Data)
        /// A whole file whose size was `length` bytes when it was appended.
        case file(URL, length: Int64)

        var length: Int64 {
            switch self {
            case .data(let data): Int64(data.count)
            case .file(_, let length): length
            }
        }
    }

    /// The characters after `"Networking-"` in a generated boundary.
    static let boundaryAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
    /// The line break of every MIME structure (RFC 2046 §5.1.1).
    private static let crlf = Data("\r\n".utf8)

    /// The string that separates the parts, without the leading `--`.
    public internal(set) var boundary: String
    /// Whether the caller chose the boundary, in which case it is never replaced.
    let isBoundaryFixed: Bool
    /// The parts, in the order they were appended.
    private var parts: [Part] = []
    /// The bytes of every part with its delimiter line and final CRLF, without the close delimiter.
    /// Saturates at `Int64.max`; `append(fileAt:…)` refuses a file that would overflow it.
    private var partsLength: Int64 = 0

    /// An empty form with a random boundary (see the type's discussion).
    public init() {
        boundary = Self.randomBoundary()
        isBoundaryFixed = false
    }

    /// An empty form with a boundary of the caller's choice, for example to compare bodies in tests.
    ///
    /// The boundary is used as given and never replaced, so it must not occur in any part.
    /// - Throws: ``MultipartError/invalidBoundary(_:reason:)`` unless it has 1 to 70 characters
    ///   among letters, digits and `'()+_,-./:=?` or space, and does not end in a space (RFC 2046 §5.1.1).
    public init(boundary: String) throws(MultipartError) {
        if let reason = Self.boundaryProblem(boundary) { throw .invalidBoundary(boundary, reason: reason) }
        self.boundary = boundary
        isBoundaryFixed = true
    }

    /// The value of the request's `Content-Type` header, `multipart/form-data; boundary=…`, with the
    /// boundary quoted when it contains characters a bare MIME parameter value cannot (RFC 2045 §5.1).
    public var contentType: String {
        let needsQuotes = boundary.unicodeScalars.contains { "()<>@,;:\\\"/[]?= ".unicodeScalars.contains($0) }
        return "multipart/form-data; boundary=" + (needsQuotes ? "\"\(boundary)\"" : boundary)
    }

    /// The exact length of the body in bytes, files included at the sizes they had when appended.
    public var contentLength: Int64 { Self.adding(partsLength, closeDelimiterLength) }

    /// Appends a text field, sent as its UTF-8 bytes without a `Content-Type` (meaning `text/plain`).
    public mutating func append(_ value: String, name: String) {
        append(Data(value.utf8), headers: Self.headers(name: name, fileName: nil, contentType: nil))
    }

    /// Appends bytes held in memory, as a file when `fileName` is given.
    ///
    /// - Parameters:
    ///   - data: the part's content.
    ///   - name: the field's `name` parameter.
    ///   - fileName: the `filename` parameter; without one the part is a plain field.
    ///   - contentType: the part's `Content-Type`; `application/octet-stream` when `nil`. Control
    ///     characters (CR, LF…) are removed so the value cannot add header lines.
    public mutating func append(_ data: Data, name: String, fileName: String? = nil, contentType: String? = nil) {
        let headers = Self.headers(name: name, fileName: fileName, contentType: contentType ?? MIMETypes.fallback)
        append(data, headers: headers)
    }

    /// Appends a file on disk, measured now and read only when the body is sent or encoded.
    ///
    /// - Parameters:
    ///   - url: the file, a `file://` URL.
    ///   - name: the field's `name` parameter.
    ///   - fileName: the `filename` parameter; the URL's last path component when `nil`.
    ///   - contentType: the part's `Content-Type`; when `nil`, guessed by the library's table of
    ///     media types from the extension of the file name (or of the URL when the file name has
    ///     none). Control characters are removed so the value cannot add header lines.
    /// - Throws: ``MultipartError/notAFileURL(_:)``, ``MultipartError/fileNotFound(_:)``,
    ///   ``MultipartError/notARegularFile(_:)`` or ``MultipartError/fileUnreadable(_:reason:)`` when
    ///   the file cannot be measured and read; ``MultipartError/bodyTooLarge(size:limit:)`` when the
    ///   body would exceed `Int64.max` bytes.
    public mutating func append(
        fileAt url: URL, name: String, fileName: String? = nil, contentType: String? = nil
    ) throws(MultipartError) {
        let size = try Self.regularFileSize(at: url)
        let effectiveName = fileName ?? url.lastPathComponent
        let guessedType: String
        if let contentType {
            guessedType = contentType
        } else {
            let nameExtension = Self.pathExtension(of: effectiveName)
            guessedType = MIMETypes.type(forPathExtension: nameExtension.isEmpty ? url.pathExtension : nameExtension)
        }
        let part = Part(
            headers: Self.headers(name: name, fileName: effectiveName, contentType: guessedType),
            content: .file(url, length: size))
        let (newLength, overflow) = partsLength.addingReportingOverflow(partLength(part))
        guard !overflow, !newLength.addingReportingOverflow(closeDelimiterLength).overflow else {
            throw .bodyTooLarge(size: Int64.max, limit: Int64.max)
        }
        parts.append(part)
        partsLength = newLength
    }

    /// The body as ordered segments — bytes in memory and ranges of files — so a transport can
    /// stream it without loading the files. Content held in memory is shared, not copied; the
    /// framing between parts is merged into as few segments as possible. The segments' lengths add
    /// up to ``contentLength``.
    func segments() -> [BodySegment] {
        var segments: [BodySegment] = []
        var framing = Data()
        for part in parts {
            framing.append(delimiterLine)
            framing.append(part.headers)
            framing.append(Self.crlf)
            switch part.content {
            case .data(let data):
                if !data.isEmpty {
                    segments.append(.data(framing))
                    segments.append(.data(data))
                    framing = Data()
                }
            case .file(let url, let length):
                segments.append(.data(framing))
                segments.append(.file(url, offset: 0, length: length, isWhole: true))
                framing = Data()
            }
            framing.append(Self.crlf)
        }
        framing.append(Data("--\(boundary)--\r\n".utf8))
        segments.append(.data(framing))
        return segments
    }

    /// The whole body in memory, reading the files now.
    ///
    /// - Parameter maximumSize: the largest body accepted, in bytes; checked against
    ///   ``contentLength`` before anything is read.
    /// - Throws: ``MultipartError/bodyTooLarge(size:limit:)`` above `maximumSize`;
    ///   ``MultipartError/fileChanged(_:expectedSize:actualSize:)`` when a file's size is not the one
    ///   measured by `append(fileAt:…)`; the errors of `append(fileAt:…)` when a file can no longer be read.
    public func encodedData(maximumSize: Int) throws(MultipartError) -> Data {
        let length = contentLength
        guard length <= Int64(maximumSize), let capacity = Int(exactly: length) else {
            throw .bodyTooLarge(size: length, limit: Int64(maximumSize))
        }
        var body = Data()
        body.reserveCapacity(capacity)
        for segment in segments() {
            switch segment {
            case .data(let data): body.append(data)
            case .file(let url, let offset, let length, _): body.append(try Self.readFile(at: url, offset: offset, length: length))
            }
        }
        return body
    }

    /// The content of the parts held in memory, which must not contain the boundary.
    var inMemoryContents: [Data] {
        parts.compactMap { part in if case .data(let data) = part.content { data } else { nil } }
    }

    // MARK: - Framing

    /// `--boundary CRLF`, the line before each part.
    private var delimiterLine: Data { Data("--\(boundary)\r\n".utf8) }

    /// `--boundary-- CRLF`.
    private var closeDelimiterLength: Int64 { Int64(boundary.utf8.count) + 6 }

    /// The bytes `part` adds to the body: delimiter line, headers, empty line, content, CRLF.
    private func partLength(_ part: Part) -> Int64 {
        // "--" boundary CRLF, headers, CRLF, content, CRLF.
        let framing = Self.adding(Int64(boundary.utf8.count) + 8, Int64(part.headers.count))
        return Self.adding(framing, part.content.length)
    }

    /// Appends an in-memory part, replacing a random boundary that occurs in its content.
    private mutating func append(_ data: Data, headers: Data) {
        let part = Part(headers: headers, content: .data(data))
        replaceBoundaryIfFound(in: data)
        parts.append(part)
        partsLength = Self.adding(partsLength, partLength(part))
    }

    /// `Content-Disposition` and optional `Content-Type` lines, each ending in CRLF.
    private static func headers(name: String, fileName: String?, contentType: String?) -> Data {
        var text = "Content-Disposition: form-data; name=\"\(escaped(name))\""
        if let fileName { text += "; filename=\"\(escaped(fileName))\"" }
        text += "\r\n"
        if let contentType {
            let cleaned = String(String.UnicodeScalarView(contentType.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
            text += "Content-Type: \(cleaned)\r\n"
        }
        return Data(text.utf8)
    }

    /// A name or file name as the WHATWG algorithm escapes it inside quotes: `"` → `%22`, CR → `%0D`,
    /// LF → `%0A`, nothing else. Works on Unicode scalars because Swift treats CRLF as one character.
    static func escaped(_ value: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result.append(contentsOf: "%22".unicodeScalars)
            case "\r": result.append(contentsOf: "%0D".unicodeScalars)
            case "\n": result.append(contentsOf: "%0A".unicodeScalars)
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    /// What follows the last dot of a file name (`"tar.gz"` → `"gz"`), or `""` when there is none or
    /// the name starts with its only dot (`".profile"`).
    static func pathExtension(of fileName: String) -> String {
        let lastComponent = fileName.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = lastComponent.lastIndex(of: "."), dot != lastComponent.startIndex else { return "" }
        return String(lastComponent[lastComponent.index(after: dot)...])
    }

    /// `a + b`, or `Int64.max` when the sum does not fit.
    static func adding(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int64.max : sum
    }
}

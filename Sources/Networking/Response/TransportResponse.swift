import Foundation

/// A complete HTTP response as a plain value: status, headers and the whole body.
///
/// Errors carry it so that a failure can always be explained with what the server sent. It is
/// deliberately not `Decodable`: asking a repository for a `TransportResponse` returns it raw
/// (``AbstractRepository/performRequest(_:)-(Endpoint<TransportResponse>)``), it is never
/// decoded from the body by mistake.
public struct TransportResponse: Sendable, Hashable {
    /// The HTTP status code, for example `200`.
    public var statusCode: Int
    /// The response header fields.
    public var headers: HTTPHeaders
    /// The body bytes, already decompressed when the server used gzip or deflate.
    public var body: Data
    /// The URL that answered, after any redirects; `nil` when the transport does not know it.
    public var url: URL?
    /// Where the answer came from: ``ResponseSource/network`` unless an interceptor (a cache)
    /// answered from storage.
    public var source: ResponseSource
    /// The header fields of the request this answer came to, as the request left the last
    /// interceptor for the transport (fields the transport adds itself, such as libcurl's
    /// `Accept-Encoding`, are not among them, nor what a redirect the transport followed
    /// removed); `nil` for an answer no transport gave — one an interceptor made or a cache
    /// kept. An interceptor that makes a new response from one it got copies it over.
    ///
    /// What an interceptor early in the chain cannot see otherwise: the fields that steps after
    /// it added — the session's `Authorization`, cookies, a tenant or language field — which a
    /// response cache needs to honour `Vary`, and a batch needs to know which credential its
    /// items were refused. It is not part of the response's equality or hash.
    public var requestHeaders: HTTPHeaders?

    /// How many times the call was sent to get this answer, retries included: set when a call's
    /// exchange ends, so that an error found after it (decoding, a mapping step) counts them.
    /// Not part of the response's equality or hash.
    var attempts = 1

    /// Creates a response.
    public init(
        statusCode: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL? = nil,
        source: ResponseSource = .network
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.url = url
        self.source = source
    }

    /// Whether the answer came from the origin (scheme, host, port) of `url`, as far as the
    /// transport says: a redirect to another origin went there without the session's
    /// `Authorization`, so its 401 says nothing about the session.
    func isFromOrigin(of url: URL) -> Bool {
        self.url.map { RedirectPolicy.sameOrigin($0, url) } ?? true
    }

    /// Whether two responses are the same answer: status, header fields, body, URL and source
    /// (not ``requestHeaders``, which say what was asked).
    public static func == (lhs: TransportResponse, rhs: TransportResponse) -> Bool {
        lhs.statusCode == rhs.statusCode && lhs.headers == rhs.headers && lhs.body == rhs.body && lhs.url == rhs.url
            && lhs.source == rhs.source
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(statusCode)
        hasher.combine(headers)
        hasher.combine(body)
        hasher.combine(url)
        hasher.combine(source)
    }

    /// Whether the status is in `200..<300`.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }

    /// The body parsed as JSON, or `nil` when it is empty or not JSON.
    public var json: JSONValue? {
        body.isEmpty ? nil : try? JSONValue(parsing: body)
    }

    /// The body as text: in the charset `Content-Type` names (UTF-8, UTF-16, or ISO-8859-1,
    /// ASCII and windows-1252, read as windows-1252 as browsers do), else UTF-8. A byte order
    /// mark decides the encoding and is dropped; invalid bytes are replaced.
    public var text: String { TextCharset.decode(body, contentType: headers["Content-Type"]) }
}

/// The charsets ``TransportResponse/text`` reads, by their WHATWG labels.
enum TextCharset {
    case utf8
    case utf16(bigEndian: Bool)
    case windows1252

    static func decode(_ body: Data, contentType: String?) -> String {
        var bytes = body[...]
        var charset = contentType.map(Self.init(contentType:)) ?? .utf8
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            bytes = bytes.dropFirst(3)
            charset = .utf8
        } else if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            charset = .utf16(bigEndian: bytes.first == 0xFE)
            bytes = bytes.dropFirst(2)
        }
        switch charset {
        case .utf8:
            return String(decoding: bytes, as: UTF8.self)
        case .utf16(let bigEndian):
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var iterator = bytes.makeIterator()
            while let first = iterator.next() {
                // An odd byte at the end is no code unit: replaced.
                guard let second = iterator.next() else {
                    units.append(0xFFFD)
                    break
                }
                units.append(bigEndian ? UInt16(first) << 8 | UInt16(second) : UInt16(second) << 8 | UInt16(first))
            }
            return String(decoding: units, as: UTF16.self)
        case .windows1252:
            var text = String.UnicodeScalarView()
            for byte in bytes {
                // 0x80-0x9F are windows-1252's own; the five it leaves undefined stay Latin-1's (WHATWG).
                let value = (0x80..<0xA0).contains(byte) ? Self.windows1252High[Int(byte) - 0x80] : UInt32(byte)
                text.append(Unicode.Scalar(value) ?? "\u{FFFD}")
            }
            return String(text)
        }
    }

    /// The characters of windows-1252's bytes 0x80-0x9F (the WHATWG index).
    private static let windows1252High: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x192, 0x201E, 0x2026, 0x2020, 0x2021, 0x2C6, 0x2030, 0x160, 0x2039, 0x152, 0x8D, 0x17D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x2DC, 0x2122, 0x161, 0x203A, 0x153, 0x9D, 0x17E, 0x178,
    ]

    /// The charset of a `Content-Type` value's `charset` parameter; UTF-8 when it names none or
    /// one not read here.
    init(contentType: String) {
        self = .utf8
        for parameter in contentType.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else { continue }
            let label = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: " \t\"")).lowercased()
            switch label {
            case "utf-16be": self = .utf16(bigEndian: true)
            case "utf-16", "utf-16le": self = .utf16(bigEndian: false)
            case "iso-8859-1", "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "iso-ir-100", "csisolatin1", "latin1", "l1",
                "ibm819", "cp819", "us-ascii", "ascii", "ansi_x3.4-1968", "windows-1252", "cp1252", "x-cp1252":
                self = .windows1252
            default: self = .utf8
            }
            return
        }
    }
}

/// An HTTP request method such as `GET` or `POST`.
///
/// A struct rather than an enum so that any token a server understands can be expressed
/// (`HTTPMethod("PROPFIND")`), while the common verbs read as `.get`, `.post` and so on.
/// The raw value's ASCII letters are always upper-cased.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The method token as sent on the wire, for example `"GET"`.
    public let rawValue: String

    /// Creates a method from its token; its ASCII letters are upper-cased. Other characters are
    /// kept (and refused as not a token when the request is built): full Unicode case mapping
    /// would turn `"lıst"` into the different, valid token `"LIST"`.
    public init(rawValue: String) {
        func isLower(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
        guard rawValue.utf8.contains(where: isLower) else {
            self.rawValue = rawValue
            return
        }
        self.rawValue = String(decoding: rawValue.utf8.map { isLower($0) ? $0 - 32 : $0 }, as: UTF8.self)
    }

    /// Creates a method from its token; its ASCII letters are upper-cased.
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }

    /// Creates a method from a string literal such as `"GET"`.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    /// `GET`: read a resource.
    public static let get = HTTPMethod("GET")
    /// `HEAD`: like `GET` without a response body.
    public static let head = HTTPMethod("HEAD")
    /// `POST`: create a resource or run an action.
    public static let post = HTTPMethod("POST")
    /// `PUT`: replace a resource.
    public static let put = HTTPMethod("PUT")
    /// `PATCH`: update part of a resource.
    public static let patch = HTTPMethod("PATCH")
    /// `DELETE`: remove a resource.
    public static let delete = HTTPMethod("DELETE")
    /// `OPTIONS`: ask which methods a resource allows.
    public static let options = HTTPMethod("OPTIONS")
    /// `TRACE`: echo the request back (diagnostics).
    public static let trace = HTTPMethod("TRACE")
    /// `CONNECT`: open a tunnel.
    public static let connect = HTTPMethod("CONNECT")

    /// Whether the method is a valid token (RFC 9110 §5.6.2): not empty, no spaces, line breaks or
    /// separators, so that it cannot change the request line.
    public var isValidToken: Bool {
        HeaderValidation.isToken(rawValue)
    }

    /// Whether repeating the request has the same effect as sending it once (RFC 9110 §9.2.2).
    ///
    /// Retrying is only safe by default for idempotent methods.
    public var isIdempotent: Bool {
        switch self {
        case .get, .head, .put, .delete, .options, .trace: true
        default: false
        }
    }
}

/// How arrays and booleans are written in a query string or a form body — the choices of
/// Alamofire's `URLEncoding`, for APIs that expect another convention than the default.
///
/// The default (``default``) writes arrays as `ids[]=1&ids[]=2` and booleans as `true`/`false`.
/// Set it for every call with ``NetworkingConfiguration/queryEncodingStyle``, or for one call with
/// ``Endpoint/queryEncodingStyle``:
///
/// ```swift
/// configuration.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric)
/// // ["ids": [1, 2], "draft": true] → ids=1&ids=2&draft=1
/// ```
public struct QueryEncodingStyle: Sendable, Hashable {
    /// How an array is written.
    public enum ArrayEncoding: Sendable, Hashable {
        /// `ids[]=1&ids[]=2` (Rails, PHP; Alamofire's default).
        case brackets
        /// `ids=1&ids=2` (most Java and Go servers, OpenAPI's `form` style with `explode`).
        case noBrackets
        /// `ids[0]=1&ids[1]=2`.
        case indexInBrackets
    }

    /// How a boolean is written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `true` and `false`.
        case literal
        /// `1` and `0` (Alamofire's default).
        case numeric
    }

    /// How arrays are written. Default ``ArrayEncoding/brackets``.
    public var arrays: ArrayEncoding
    /// How booleans are written. Default ``BoolEncoding/literal``.
    public var booleans: BoolEncoding

    /// Creates a style; every argument has the documented default.
    public init(arrays: ArrayEncoding = .brackets, booleans: BoolEncoding = .literal) {
        self.arrays = arrays
        self.booleans = booleans
    }

    /// `ids[]=1&ids[]=2` and `true`/`false`.
    public static let `default` = QueryEncodingStyle()
}

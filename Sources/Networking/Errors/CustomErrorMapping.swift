import Foundation

/// Which custom errors a repository (or a single call) returns for which server answers.
///
/// Matching is exact: a rule applies when the status code is equal and, for a rule with an API
/// code, when the body's code (at ``apiCodeKeyPath``, `"code"` by default) is equal too.
/// Rules with an API code are tried before rules without one; otherwise rules are tried in the
/// order written. A rule that decodes the error body and fails to decode does not match (the
/// failure is reported to the decoding-failure hook): the next rules are tried — the call's,
/// then the repository's — and when none matches, the call fails as it would without custom
/// errors (``RepositoryError/requestError(_:)``, or ``RepositoryError/authenticationFailed(_:)``
/// for a 401).
///
/// ```swift
/// let errors: CustomErrorMapping = [
///     .status(404, BooksError.notFound),
///     .status(409, apiCode: "duplicate_isbn", BooksError.duplicate),
///     .status(422, decoding: ValidationBody.self) { BooksError.validation($0.fields) },
/// ]
/// ```
///
/// Rules apply to answers that are not successes: a 2xx answer is decoded as the call's type,
/// never mapped.
///
/// A 401 from the API on a request that needs a session is always
/// ``RepositoryError/unauthenticatedSession(_:)``; rules for 401 apply to requests that do not
/// need a session, such as a login, and to a 401 from another origin a redirect led to (which
/// got no credential, so it says nothing about the session).
public struct CustomErrorMapping: Sendable, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// One status (and optional API code) and the error it becomes.
    public struct Rule: Sendable {
        /// The status code the response must have.
        public let statusCode: Int
        /// The API code the body must carry, or `nil` to match on the status alone.
        public let apiCode: String?
        let makeError: @Sendable (TransportResponse, BodyDecoder) throws -> any CustomRepositoryErrorType
        let bodyTypeName: String?

        /// A response with this status becomes `error`.
        public static func status(_ statusCode: Int, _ error: any CustomRepositoryErrorType) -> Rule {
            Rule(statusCode: statusCode, apiCode: nil, makeError: { _, _ in error }, bodyTypeName: nil)
        }

        /// A response with this status whose body carries this API code becomes `error`.
        public static func status(
            _ statusCode: Int, apiCode: String, _ error: any CustomRepositoryErrorType
        ) -> Rule {
            Rule(statusCode: statusCode, apiCode: apiCode, makeError: { _, _ in error }, bodyTypeName: nil)
        }

        /// A response with this status (and API code, when given) has its body decoded as `Body`
        /// and turned into an error by `makeError`, for errors that carry details such as
        /// validation messages. An empty body is `nil` when `Body` is optional; when it is not, the
        /// rule does not match (and the decoding-failure hook hears of the empty body, except for
        /// a `HEAD` request, which never has one).
        public static func status<Body: Decodable & Sendable>(
            _ statusCode: Int, apiCode: String? = nil, decoding: Body.Type,
            _ makeError: @escaping @Sendable (Body) -> any CustomRepositoryErrorType
        ) -> Rule {
            Rule(
                statusCode: statusCode, apiCode: apiCode,
                makeError: { response, decoder in
                    // An empty body is `nil` to an optional type, as on the success path.
                    if response.body.isEmpty, let none = BodyDecoder.emptyBodyValue(of: Body.self) { return makeError(none) }
                    return makeError(try decoder.decode(Body.self, from: response.body, keyPath: nil))
                },
                bodyTypeName: String(describing: Body.self))
        }
    }

    /// The rules, in the order they were written.
    public var rules: [Rule]
    /// Where the API code sits in an error body, as a dotted key path (a number is an array
    /// index). Default `"code"`. A body over 4 MiB, or not JSON, has no code.
    public var apiCodeKeyPath: String

    /// Creates an empty mapping.
    public init() { self.init([]) }

    /// Creates a mapping from rules.
    public init(_ rules: [Rule], apiCodeKeyPath: String = "code") {
        self.rules = rules
        self.apiCodeKeyPath = apiCodeKeyPath
    }

    public init(arrayLiteral rules: Rule...) { self.init(rules) }

    /// Creates a mapping from status codes to errors, as the original `[Int: CustomRepositoryErrorType]`.
    public init(dictionaryLiteral elements: (Int, any CustomRepositoryErrorType)...) {
        self.init(elements.sorted { $0.0 < $1.0 }.map { Rule.status($0.0, $0.1) })
    }

    /// Whether there are no rules.
    public var isEmpty: Bool { rules.isEmpty }

    /// Whether a rule for this status needs the body's API code.
    func needsAPICode(for statusCode: Int) -> Bool {
        rules.contains { $0.statusCode == statusCode && $0.apiCode != nil }
    }

    /// The error for a response, trying API-code rules first; `nil` when no rule matches.
    /// `bodyCode` is the body's API code (``apiCode(in:)``), read once for every mapping a call has.
    func match(
        _ response: TransportResponse, bodyCode: String?, decoder: BodyDecoder, onBodyDecodingFailure: (Rule, any Error) -> Void
    ) -> (any CustomRepositoryErrorType)? {
        let candidates = rules.filter { $0.statusCode == response.statusCode }
        guard !candidates.isEmpty else { return nil }
        let ordered = candidates.filter { $0.apiCode != nil } + candidates.filter { $0.apiCode == nil }
        for rule in ordered where rule.apiCode == nil || rule.apiCode == bodyCode {
            do {
                return try rule.makeError(response, decoder)
            } catch {
                onBodyDecodingFailure(rule, error)
            }
        }
        return nil
    }

    /// The API code at ``apiCodeKeyPath`` in the response's body; `nil` when there is none, or the
    /// body is larger than an error body with a code would be (it is not built into a value,
    /// several times its size in memory).
    func apiCode(in response: TransportResponse) -> String? {
        guard response.body.count <= ResponseDecoder.inspectedBodyLimit else { return nil }
        return switch response.json?.value(atKeyPath: apiCodeKeyPath) {
        case .string(let code): code
        case .int(let code): String(code)
        // A whole number past a 32-bit `Int` (watchOS) is a `Double` there.
        case .double(let code): Int64(exactly: code).map { String($0) }
        default: nil
        }
    }
}

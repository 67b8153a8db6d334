import Foundation
import Synchronization

/// A report that a response could not be decoded into the model: what the decoding-failure
/// hook receives, and what ``RepositoryError/jsonError(_:)`` and ``RepositoryError/decodeError(_:)`` carry.
///
/// It says which model, which request, where in the JSON and why, so that a mismatch between an
/// API and its models can be reported to a crash or analytics service and fixed. The body
/// excerpt is bounded and has credentials redacted.
public struct DecodingFailure: Error, Sendable, CustomStringConvertible {
    /// Whether the body was not JSON at all, or JSON of another shape.
    public enum Kind: Sendable, Hashable {
        /// The body is not valid JSON (``RepositoryError/jsonError(_:)``).
        case malformedJSON
        /// The JSON does not match the model (``RepositoryError/decodeError(_:)``).
        case mismatch
    }

    /// Whether the body was not JSON at all, or JSON of another shape.
    public let kind: Kind
    /// The name of the type being decoded, for example `"BooksPage"`.
    public let entityType: String
    /// The request and the response whose body failed to decode.
    public internal(set) var context: ErrorContext
    /// Where in the JSON decoding failed, for example `"data[3].genre"`; empty at the top level.
    public let codingPath: String
    /// A sentence saying what was expected and what was found; an enum raw value the model does
    /// not know names the enum type and the value.
    public let reason: String
    /// The start of the body (at most ``excerptLimit`` bytes), credentials redacted.
    public let bodyExcerpt: String

    /// The most body bytes an excerpt shows.
    public static let excerptLimit = 1024

    /// Creates a report.
    public init(
        kind: Kind, entityType: String, context: ErrorContext, codingPath: String, reason: String,
        bodyExcerpt: String
    ) {
        self.kind = kind
        self.entityType = entityType
        self.context = context
        self.codingPath = codingPath
        self.reason = reason
        self.bodyExcerpt = bodyExcerpt
    }

    /// The status code of the response that failed to decode.
    public var statusCode: Int? { context.statusCode }

    public var description: String {
        let place = codingPath.isEmpty ? "" : " at \(codingPath)"
        let what = kind == .malformedJSON ? "could not be decoded" : "does not match \(entityType)\(place)"
        let status = context.statusCode.map { " (status \($0))" } ?? ""
        return "The response to \(context.request)\(status) \(what): \(reason.clause)."
    }
}

/// A function told about every decoding failure: the hook to report API/model mismatches.
///
/// It is called on the task that made the request, possibly from many tasks at once, and must
/// return quickly.
public typealias DecodingFailureHandler = @Sendable (DecodingFailure) -> Void

extension DecodingFailure {
    private static let processHandler = Mutex<DecodingFailureHandler?>(nil)

    /// The handler used by every configuration that sets none of its own; `nil` by default.
    ///
    /// Thread-safe: it may be read and replaced from any thread.
    public static var defaultHandler: DecodingFailureHandler? {
        get { processHandler.withLock { $0 } }
        set { processHandler.withLock { $0 = newValue } }
    }
}

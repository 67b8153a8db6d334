/// An error of an API's own vocabulary, such as `BooksError.notFound` or
/// `BooksError.validation(fields)`, that a repository returns instead of a generic
/// ``RepositoryError/requestError(_:)``.
///
/// Declare the enum, conform it, and map statuses to it with ``CustomErrorMapping``.
/// Enums with a raw value get ``name`` for free.
public protocol CustomRepositoryErrorType: Error, Sendable {
    /// A stable name for the error, for logs and analytics.
    var name: String { get }

    /// What ``RepositoryError``'s description says instead of "failed with the API error …", for
    /// errors that a step of the chain raises rather than the API answers (an offline queue's
    /// "queued to send later"). Default `nil`: the generic sentence, with the status and body.
    var explanation: String? { get }
}

extension CustomRepositoryErrorType {
    /// None: the generic sentence.
    public var explanation: String? { nil }
}

extension CustomRepositoryErrorType where Self: RawRepresentable {
    /// The raw value as text.
    public var name: String { String(describing: rawValue) }
}

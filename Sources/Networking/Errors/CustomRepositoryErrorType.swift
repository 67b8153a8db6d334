/// An error of an API's own vocabulary, such as `BooksError.notFound` or
/// `BooksError.validation(fields)`, that a repository returns instead of a generic
/// ``RepositoryError/requestError(_:)``.
///
/// Declare the enum, conform it, and map statuses to it with ``CustomErrorMapping``.
/// Enums with a raw value get ``name`` for free.
public protocol CustomRepositoryErrorType: Error, Sendable {
    /// A stable name for the error, for logs and analytics.
    var name: String { get }
}

extension CustomRepositoryErrorType where Self: RawRepresentable {
    /// The raw value as text.
    public var name: String { String(describing: rawValue) }
}

/// Settings of one endpoint that interceptors act on: a cache's time to live, an offline queue's
/// consent, anything a feature built on ``Interceptor`` needs to know per call.
///
/// The core does not know the features: each defines a key type, and reads its value from
/// ``RequestContext/options``:
///
/// ```swift
/// enum TraceSampling: RequestOptionKey {
///     static let defaultValue = false
/// }
///
/// let endpoint = Endpoint<Book>.get("books/1").with(TraceSampling.self, true)
/// // in an interceptor: if context.options[TraceSampling.self] { … }
/// ```
public struct RequestOptions: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// No option set: every key reads as its default.
    public init() {}

    /// The value set for `key`, or its ``RequestOptionKey/defaultValue``.
    public subscript<Key: RequestOptionKey>(_ key: Key.Type) -> Key.Value {
        get { values[ObjectIdentifier(key)] as? Key.Value ?? Key.defaultValue }
        set { values[ObjectIdentifier(key)] = newValue }
    }

    /// Whether a value was set for `key` (even one equal to the default).
    public func contains<Key: RequestOptionKey>(_ key: Key.Type) -> Bool {
        values[ObjectIdentifier(key)] != nil
    }

    /// Whether no option was set.
    public var isEmpty: Bool { values.isEmpty }
}

/// The type of one option in ``RequestOptions``, with the value it has when none is set.
public protocol RequestOptionKey {
    /// The option's value type.
    associatedtype Value: Sendable
    /// The value read when the option was not set.
    static var defaultValue: Value { get }
}

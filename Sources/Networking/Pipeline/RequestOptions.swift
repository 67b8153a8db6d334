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
///
/// A key whose ``RequestOptionKey/requiredHandler`` is set must be acted on: a call carrying it
/// through a chain where no interceptor lists the key in ``Interceptor/handledOptions`` fails
/// with ``RepositoryError/invalidRequest(reason:request:)`` before anything is sent — a route's
/// cache TTL or offline consent is never silently ignored.
public struct RequestOptions: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]
    private var required: [ObjectIdentifier: (name: String, handler: String)] = [:]

    /// No option set: every key reads as its default.
    public init() {}

    /// The value set for `key`, or its ``RequestOptionKey/defaultValue``.
    public subscript<Key: RequestOptionKey>(_ key: Key.Type) -> Key.Value {
        get { values[ObjectIdentifier(key)] as? Key.Value ?? Key.defaultValue }
        set {
            values[ObjectIdentifier(key)] = newValue
            if let handler = Key.requiredHandler { required[ObjectIdentifier(key)] = (String(describing: key), handler) }
        }
    }

    /// Sets `value` for `key`; with `required` false, a key that must be handled may go unheeded
    /// this once (a route's "not cached" means nothing without a cache).
    mutating func set<Key: RequestOptionKey>(_ key: Key.Type, _ value: Key.Value, required: Bool) {
        self[key] = value
        if !required { self.required[ObjectIdentifier(key)] = nil }
    }

    /// Takes the value set for `key` out: it reads as its default again.
    mutating func remove<Key: RequestOptionKey>(_ key: Key.Type) {
        values[ObjectIdentifier(key)] = nil
        required[ObjectIdentifier(key)] = nil
    }

    /// Whether a value was set for `key` (even one equal to the default).
    public func contains<Key: RequestOptionKey>(_ key: Key.Type) -> Bool {
        values[ObjectIdentifier(key)] != nil
    }

    /// Whether no option was set.
    public var isEmpty: Bool { values.isEmpty }

    /// The set options that must be handled, with what the user should add, in a stable order.
    var requiredKeys: [(id: ObjectIdentifier, name: String, handler: String)] {
        required.map { ($0.key, $0.value.name, $0.value.handler) }.sorted { $0.name < $1.name }
    }
}

/// The type of one option in ``RequestOptions``, with the value it has when none is set.
public protocol RequestOptionKey {
    /// The option's value type.
    associatedtype Value: Sendable
    /// The value read when the option was not set.
    static var defaultValue: Value { get }
    /// `nil` (the default) when the option may go unheeded; otherwise the option must be handled
    /// by an interceptor of the chain, and this says what to add when none does (for example
    /// "add a ResponseCache's interceptor to configuration.interceptors").
    static var requiredHandler: String? { get }
}

extension RequestOptionKey {
    /// Options may go unheeded unless they say otherwise.
    public static var requiredHandler: String? { nil }
}

import Foundation
import Networking
import NetworkingCache
import NetworkingTestSupport
import Synchronization

/// A session for tests: signs with `Bearer <user>` and names its user `user:<user>`; `nil` when
/// logged out. `identifies: false` plays a session that does not say whose it is, `namesSigner`
/// one that says so only in each authorization it signs with.
final class StubSession: SessionAuthorizing {
    private let user: Mutex<String?>
    private let identifies: Bool
    private let namesSigner: Bool

    init(user: String?, identifies: Bool = true, namesSigner: Bool = false) {
        self.user = Mutex(user)
        self.identifies = identifies
        self.namesSigner = namesSigner
    }

    func logIn(_ name: String?) { user.withLock { $0 = name } }

    func authorize() async throws(RepositoryError) -> SessionAuthorization? {
        user.withLock { $0 }.map {
            SessionAuthorization(headerValue: "Bearer \($0)", version: 1, sessionIdentity: namesSigner ? "user:\($0)" : nil)
        }
    }

    func authorizationRejected(_ authorization: SessionAuthorization) async throws(RepositoryError) -> SessionAuthorization? { nil }

    func replayRejected(_ authorization: SessionAuthorization) async {}

    var sessionIdentity: String? {
        guard identifies else { return nil }
        return user.withLock { $0 }.map { "user:\($0)" }
    }
}

/// A value closures can change and read from any task.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }

    var current: Value { value.withLock { $0 } }

    func set(_ newValue: Value) { value.withLock { $0 = newValue } }

    @discardableResult
    func update<T>(_ change: (inout Value) -> T) -> T { value.withLock { change(&$0) } }
}

/// A repository whose calls return the JSON body with its metadata. `@unchecked Sendable` as every
/// repository: it adds no stored state to `AbstractRepository`, whose state is immutable.
final class CacheRepository: AbstractRepository, @unchecked Sendable {
    func fetch(_ endpoint: Endpoint<RepositoryResponse<JSONValue>>) async -> Result<RepositoryResponse<JSONValue>, RepositoryError> {
        await performRequest(endpoint)
    }

    func send(_ endpoint: Endpoint<Void>) async -> Result<Void, RepositoryError> {
        await performRequest(endpoint)
    }
}

enum CacheHarness {
    /// A configuration for `api.example.com` that uses `cache`.
    static func configuration(cache: ResponseCache, routes: RouteTable? = nil) throws -> NetworkingConfiguration {
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.interceptors.append(cache)
        if let routes { configuration.routes = routes }
        return configuration
    }

    /// A route answering 200 with `{"n": <count>}` and `headers`, counting its calls in `count`.
    static func counting(
        _ path: String, count: Shared<Int>, headers: @escaping @Sendable (TransportRequest) -> HTTPHeaders = { _ in [:] }
    ) -> StubTransport.Route {
        StubTransport.Route(.get, path) { request throws(TransportError) in
            let n = count.update { value -> Int in
                value += 1
                return value
            }
            var all = headers(request)
            all["Content-Type"] = "application/json"
            return TransportResponse(statusCode: 200, headers: all, body: Data("{\"n\":\(n)}".utf8), url: request.url)
        }
    }
}

extension Result {
    /// The success value, or `nil`.
    var value: Success? { try? get() }
    /// The failure, or `nil`.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension JSONValue {
    /// The string at `key` of an object.
    subscript(string key: String) -> String? {
        if case .object(let fields) = self, case .string(let text)? = fields[key] { return text }
        return nil
    }

    /// The integer at `key` of an object.
    subscript(int key: String) -> Int? {
        if case .object(let fields) = self, case .int(let number)? = fields[key] { return number }
        return nil
    }
}

extension RepositoryResponse where Value == JSONValue {
    /// The `n` counter of a ``CacheHarness/counting(_:count:headers:)`` answer.
    var n: Int? {
        if case .object(let fields) = value, case .int(let number)? = fields["n"] { return number }
        return nil
    }
}

import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

// Shared models, repositories and test doubles. Everything here uses the public API only.

enum Genre: String, Codable, Sendable, Hashable {
    case fiction, science, history
}

struct Book: Codable, Sendable, Hashable {
    var id: Int
    var title: String
    var genre: Genre
}

struct NewBook: Codable, Sendable, Hashable {
    var title: String
    var genre: Genre
}

struct BooksPage: Codable, Sendable, Hashable {
    struct Page: Codable, Sendable, Hashable {
        var current: Int
        var total: Int
    }

    var data: [Book]
    var page: Page
}

struct User: Codable, Sendable, Hashable {
    var id: Int
    var name: String
}

struct LoginResponse: Codable, Sendable, Hashable {
    var token: String
    var user: User
}

struct ValidationBody: Codable, Sendable, Hashable {
    var fields: [String: String]
}

enum BooksError: CustomRepositoryErrorType, Hashable {
    case badRequest, notFound, duplicate, conflict, gone, wrongCredentials
    case validation([String: String])

    var name: String {
        switch self {
        case .badRequest: "bad_request"
        case .notFound: "not_found"
        case .duplicate: "duplicate"
        case .conflict: "conflict"
        case .gone: "gone"
        case .wrongCredentials: "wrong_credentials"
        case .validation: "validation"
        }
    }
}

/// A repository with no methods of its own: tests call the `perform…` methods directly.
final class TestRepository: AbstractRepository, @unchecked Sendable {}

/// A repository that fetches the current user, for `SessionManager.bootstrap`.
final class UsersRepository: AbstractRepository, CurrentUserFetcher, @unchecked Sendable {
    func fetchCurrentUser() async -> Result<User, RepositoryError> {
        await performRequest(.get("users/me"))
    }
}

/// `http://api.test/api/v1` unless told otherwise.
func makeConfiguration(
    domain: String = "api.test", secondsBetweenPolls: TimeInterval = 0.01, maximumPollingRetries: Int? = nil,
    defaultHeaders: HTTPHeaders = [:], decodingFailureHandler: DecodingFailureHandler? = nil
) throws -> NetworkingConfiguration {
    try NetworkingConfiguration(
        useSecureConnection: false, domainURL: domain, subdomainURL: "/api/v1",
        secondsBetweenPolls: secondsBetweenPolls, maximumPollingRetries: maximumPollingRetries,
        defaultHeaders: defaultHeaders, decodingFailureHandler: decodingFailureHandler)
}

/// Collects values handed to it from any task, such as decoding failures told to a hook.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func record(_ value: Value) { values.withLock { $0.append(value) } }

    var all: [Value] { values.withLock { $0 } }
}

extension Result {
    /// The error of a failure, or `nil` for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// The JSON body of a request, parsed.
func jsonBody(of request: TransportRequest) throws -> JSONValue {
    try JSONValue(parsing: try #require(request.body?.inMemoryData))
}

/// A route that answers with each status in turn (repeating the last), counting its calls.
final class SequenceRoute: Sendable {
    private let statuses: [Int]
    private let body: String
    private let calls = Mutex(0)

    init(statuses: [Int], body: String = #"{"id": 1, "title": "Dune", "genre": "fiction"}"#) {
        self.statuses = statuses
        self.body = body
    }

    var count: Int { calls.withLock { $0 } }

    func route(_ method: HTTPMethod, _ path: String) -> StubTransport.Route {
        StubTransport.Route(method, path) { request throws(TransportError) in
            let index = self.calls.withLock { calls -> Int in
                calls += 1
                return calls - 1
            }
            let status = self.statuses[min(index, self.statuses.count - 1)]
            return TransportResponse(
                statusCode: status, headers: ["Content-Type": "application/json"],
                body: status == 202 ? Data() : Data(self.body.utf8), url: request.url)
        }
    }
}

/// A credential store that fails loudly: each operation either succeeds against memory or throws
/// the error it was told to throw.
final class ScriptedCredentialStore: CredentialStore {
    private struct State {
        var stored: PersistedSession?
        var loadError: CredentialStoreError?
        var saveError: CredentialStoreError?
        var deleteError: CredentialStoreError?
    }

    private let state: Mutex<State>

    init(
        _ stored: PersistedSession? = nil, loadError: CredentialStoreError? = nil,
        saveError: CredentialStoreError? = nil, deleteError: CredentialStoreError? = nil
    ) {
        state = Mutex(State(stored: stored, loadError: loadError, saveError: saveError, deleteError: deleteError))
    }

    var stored: PersistedSession? { state.withLock { $0.stored } }

    func failLoads(with error: CredentialStoreError?) { state.withLock { $0.loadError = error } }
    func failSaves(with error: CredentialStoreError?) { state.withLock { $0.saveError = error } }
    func failDeletes(with error: CredentialStoreError?) { state.withLock { $0.deleteError = error } }

    func load() throws(CredentialStoreError) -> PersistedSession? {
        try state.withLock { state throws(CredentialStoreError) in
            if let error = state.loadError { throw error }
            return state.stored
        }
    }

    func save(_ session: PersistedSession) throws(CredentialStoreError) {
        try state.withLock { state throws(CredentialStoreError) in
            if let error = state.saveError { throw error }
            state.stored = session
        }
    }

    func delete() throws(CredentialStoreError) {
        try state.withLock { state throws(CredentialStoreError) in
            if let error = state.deleteError { throw error }
            state.stored = nil
        }
    }
}

/// A folder of its own under the system's temporary folder, removed by `remove()`.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("NetworkingTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A self-signed certificate (an EC key, `CN=networking-test-ca`, valid until 2126), for tests
/// that need a well-formed certificate authority file without the test servers.
let testAuthorityPEM = """
    -----BEGIN CERTIFICATE-----
    MIIBkTCCATegAwIBAgIUMhPzIGmSDo7g4q7ZjdJwcwWy9AswCgYIKoZIzj0EAwIw
    HTEbMBkGA1UEAwwSbmV0d29ya2luZy10ZXN0LWNhMCAXDTI2MTEyNDA3MzEyNVoY
    DzIxMjYxMDMxMDczMTI1WjAdMRswGQYDVQQDDBJuZXR3b3JraW5nLXRlc3QtY2Ew
    WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARuikFXHBiXPr4QWPIgsLss+yxdXd8S
    1qT3CQkZBVoIbN6Nr9daamy2j54gGbQ1Vyrs+jZYO/uspZduUaM/OnvXo1MwUTAd
    BgNVHQ4EFgQUSfRDSgPYmvyBvdJEhAv/hwoRD6swHwYDVR0jBBgwFoAUSfRDSgPY
    mvyBvdJEhAv/hwoRD6swDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBF
    AiAZm+UCa4UWSrBNQc9v1pM/XCWxy3i7hOKMr2YkzGBqxAIhANI1Uz72DrGmSAd1
    zG3EK3UFNsB/57t4IFidH7ORe2Ni
    -----END CERTIFICATE-----
    """

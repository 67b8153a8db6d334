import Foundation
import Networking
import Testing

// Helpers shared by the session suites.

let ann = User(id: 1, name: "Ann")
let bob = User(id: 2, name: "Bob")

/// A short, comparable name for an event.
func label(_ event: SessionEvent<User>) -> String {
    switch event {
    case .loggedIn(let user): "loggedIn(\(user.name))"
    case .restored: "restored"
    case .userUpdated(let user): "userUpdated(\(user.name))"
    case .credentialUpdated: "credentialUpdated"
    case .loggedOut: "loggedOut"
    case .expired: "expired"
    case .storeFailed: "storeFailed"
    }
}

/// Runs `actions` on a new manager, then releases it — which ends its event streams — and
/// returns every event it delivered, in order.
///
/// `actions` must not keep the manager alive after it returns, or the stream would not end.
func recordEvents(
    store: any CredentialStore = InMemoryCredentialStore(), scheme: AuthorizationScheme = .bearer,
    _ actions: (SessionManager<User>) async throws -> Void
) async throws -> [String] {
    var manager: SessionManager<User>? = SessionManager<User>(store: store, authorizationScheme: scheme)
    let stream = try #require(manager).events()
    try await actions(try #require(manager))
    manager = nil
    var labels: [String] = []
    for await event in stream {
        labels.append(label(event))
        if labels.count > 1000 { break }
    }
    return labels
}

/// A user fetcher answering with a fixed result, for `bootstrap`.
struct FixedUserFetcher: CurrentUserFetcher {
    let result: Result<User, RepositoryError>
    func fetchCurrentUser() async -> Result<User, RepositoryError> { result }
}

/// A `CredentialStoreError` for test doubles.
let storeFailure = CredentialStoreError.writeFailed(path: "/test/session.json", reason: "disk full")

/// `authorize()`'s outcome as a value.
func authorizing(_ manager: SessionManager<User>) async -> Result<SessionAuthorization?, RepositoryError> {
    do throws(RepositoryError) {
        return .success(try await manager.authorize())
    } catch {
        return .failure(error)
    }
}

/// `authorizationRejected(_:)`'s outcome as a value.
func rejecting(
    _ authorization: SessionAuthorization, on manager: SessionManager<User>
) async -> Result<SessionAuthorization?, RepositoryError> {
    do throws(RepositoryError) {
        return .success(try await manager.authorizationRejected(authorization))
    } catch {
        return .failure(error)
    }
}

/// The context of a call to a refresh endpoint: answered with `status`, or not answered when `nil`.
func refreshContext(status: Int? = nil) -> ErrorContext {
    ErrorContext(
        request: RequestSummary(method: .post, url: URL(fileURLWithPath: "/auth/refresh")),
        response: status.map { TransportResponse(statusCode: $0) })
}

/// A refresher that answers with `answer` and records each call, to count the refreshes.
func countingRefresher(
    _ answer: @escaping @Sendable (Credential) -> Result<Credential, RepositoryError>
) -> (ClosureRefresher, Recorder<Int>) {
    let calls = Recorder<Int>()
    let refresher = ClosureRefresher { credential in
        calls.record(1)
        return answer(credential)
    }
    return (refresher, calls)
}

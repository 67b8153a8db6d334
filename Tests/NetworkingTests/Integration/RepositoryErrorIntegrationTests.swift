import Foundation
import Networking
import Synchronization
import Testing

/// Every `RepositoryError` case, produced by a real condition against the real servers.
@Suite("RepositoryError from real conditions")
struct RepositoryErrorIntegrationTests {
    @Test("a closed port is .noNetworkConnection(.connectionRefused) with the request")
    func closedPort() async throws {
        let repository = try TestAPI.anonymous("http://127.0.0.1:\(try unusedPort())/api/v1")
        let result = await repository.performRequest(Endpoint<Void>.get("health"))
        guard case .noNetworkConnection(.connectionRefused, let context)? = result.failure else {
            Issue.record("expected connection refused, got \(String(describing: result.failure))")
            return
        }
        #expect(context.request.method == .get)
        #expect(context.request.url.path == "/api/v1/health")
        #expect(context.response == nil)
    }

    @Test("an unknown host is .noNetworkConnection(.hostNotFound)")
    func unknownHost() async throws {
        let repository = try TestAPI.anonymous("http://does-not-exist.invalid/api/v1", timeout: 10)
        let result = await repository.performRequest(Endpoint<Void>.get("health"))
        guard case .noNetworkConnection(.hostNotFound, _)? = result.failure else {
            Issue.record("expected host not found, got \(String(describing: result.failure))")
            return
        }
    }

    @Test("a slow endpoint with a short timeout is .timeout without a response")
    func slowEndpoint() async throws {
        let repository = try TestAPI.anonymous(timeout: 0.5)
        let result = await repository.performRequest(Endpoint<Void>.get("slow", parameters: ["seconds": 5]))
        guard case .timeout(let context)? = result.failure else {
            Issue.record("expected .timeout, got \(String(describing: result.failure))")
            return
        }
        #expect(context.response == nil)
        #expect(result.failure?.isConnectivityFailure == true)
    }

    @Test("an endpoint timeout overrides the configuration's")
    func endpointTimeout() async throws {
        let repository = try TestAPI.anonymous(timeout: 30)
        let result = await repository.performRequest(Endpoint<Void>(.get, "slow", parameters: ["seconds": 5], timeout: 0.5))
        guard case .timeout? = result.failure else {
            Issue.record("expected .timeout, got \(String(describing: result.failure))")
            return
        }
    }

    @Test("a 401 is .unauthenticatedSession with the response, and expires the session")
    func unauthorized() async throws {
        let (repository, session, login) = try await TestAPI.loggedIn()
        _ = await repository.expire(token: login.token)
        let result = await repository.fetchCurrentUser()
        guard case .unauthenticatedSession(let context?)? = result.failure else {
            Issue.record("expected .unauthenticatedSession with a response, got \(String(describing: result.failure))")
            return
        }
        #expect(context.statusCode == 401)
        #expect(context.response?.json?["code"] == "token_expired")
        #expect(!session.isLoggedIn)
        #expect(!(result.failure?.localizedDescription.contains(login.token) ?? true))
    }

    @Test("nobody logged in: .unauthenticatedSession(nil) without touching the network")
    func noSession() async throws {
        let servers = try TestServers.require()
        let session = SessionManager<TestAPI.User>()
        let repository = TestAPI.Repository(
            configuration: try TestServers.configuration("http://127.0.0.1:\(try unusedPort())/api/v1"), sessionManager: session)
        // A closed port proves no request was attempted: it would be .noNetworkConnection otherwise.
        let result = await repository.fetchCurrentUser()
        guard case .unauthenticatedSession(nil)? = result.failure else {
            Issue.record("expected .unauthenticatedSession(nil), got \(String(describing: result.failure))")
            return
        }
        _ = servers
    }

    @Test("a 404 without a custom error is .requestError with status, headers and JSON body")
    func notFound() async throws {
        let repository = try TestAPI.anonymous()
        let result: Result<TestAPI.Book, RepositoryError> = await repository.performRequest(
            Endpoint<TestAPI.Book>.get("status/404").withoutSession())
        guard case .requestError(let context)? = result.failure else {
            Issue.record("expected .requestError, got \(String(describing: result.failure))")
            return
        }
        #expect(context.statusCode == 404)
        #expect(context.response?.headers["Content-Type"]?.contains("json") == true)
        #expect(context.response?.json?["code"] == "status_404")
        #expect(result.failure?.localizedDescription.contains("404") == true)
    }

    @Test("malformed JSON is .jsonError and the hook is told")
    func malformedJSON() async throws {
        let hook = HookRecorder()
        let repository = try hook.repository()
        let result: Result<TestAPI.Book, RepositoryError> = await repository.performRequest(.get("broken/malformed"))
        guard case .jsonError(let failure)? = result.failure else {
            Issue.record("expected .jsonError, got \(String(describing: result.failure))")
            return
        }
        #expect(failure.kind == .malformedJSON)
        #expect(hook.reports.map(\.kind) == [.malformedJSON])
        #expect(hook.reports.first?.bodyExcerpt.contains("Broken") == true)
    }

    @Test("a wrong-shaped entity is .decodeError with the coding path, and the hook is told")
    func wrongShape() async throws {
        let hook = HookRecorder()
        let repository = try hook.repository()
        let result: Result<TestAPI.Book, RepositoryError> = await repository.performRequest(.get("broken/wrong-shape"))
        guard case .decodeError(let failure)? = result.failure else {
            Issue.record("expected .decodeError, got \(String(describing: result.failure))")
            return
        }
        #expect(failure.codingPath == "id")
        #expect(failure.reason.contains("Int"))
        #expect(failure.entityType == "Book")
        #expect(failure.context.request.url.path.hasSuffix("broken/wrong-shape"))
        #expect(failure.statusCode == 200)
        #expect(hook.reports.count == 1)
    }

    @Test("an unknown enum value names the enum type and the value, in a list too")
    func unknownEnum() async throws {
        let hook = HookRecorder()
        let repository = try hook.repository()
        let single: Result<TestAPI.Book, RepositoryError> = await repository.performRequest(.get("broken/unknown-enum"))
        let list: Result<TestAPI.BooksPage, RepositoryError> = await repository.performRequest(.get("broken/unknown-enum-list"))
        guard case .decodeError(let failure)? = single.failure, case .decodeError(let listFailure)? = list.failure else {
            Issue.record("expected two .decodeError, got \(String(describing: single.failure)) and \(String(describing: list.failure))")
            return
        }
        #expect(failure.codingPath == "genre")
        #expect(failure.reason.contains("Genre"))
        #expect(failure.reason.contains("cyberpunk"))
        #expect(listFailure.codingPath == "data[3].genre")
        #expect(hook.reports.count == 2)
    }

    @Test("an empty body: Void succeeds, an entity is .decodeError saying the body is empty")
    func emptyBody() async throws {
        let repository = try TestAPI.anonymous()
        let void = await repository.performRequest(Endpoint<Void>.get("empty").withoutSession())
        let noContent = await repository.performRequest(Endpoint<Void>.get("no-content").withoutSession())
        let entity: Result<TestAPI.Book, RepositoryError> = await repository.performRequest(.get("empty"))
        #expect(throws: Never.self) { try void.get() }
        #expect(throws: Never.self) { try noContent.get() }
        guard case .decodeError(let failure)? = entity.failure else {
            Issue.record("expected .decodeError, got \(String(describing: entity.failure))")
            return
        }
        #expect(failure.reason.contains("empty"))
    }

    @Test("cancelling the calling task is .cancelled, promptly")
    func cancellation() async throws {
        // A server that never answers, and a timeout of 120 s: only an abort ends the call sooner.
        let repository = try TestAPI.anonymous(try TestServers.require().faultURL, timeout: 120)
        let task = Task { await repository.performRequest(Endpoint<Void>.get("hang").withoutSession()) }
        try await Task.sleep(for: .milliseconds(200))
        // Measured from the cancellation: a busy test run may be slow to get here at all.
        let started = ContinuousClock.now
        task.cancel()
        let result = await task.value
        guard case .cancelled? = result.failure else {
            Issue.record("expected .cancelled, got \(String(describing: result.failure))")
            return
        }
        // Far below the 120 s timeout, with room for a busy machine (the whole suite's start).
        #expect(ContinuousClock.now - started < .seconds(60), "the request was not aborted")
    }

    @Test("a task cancelled before the call is .cancelled naming the request it never sent")
    func cancelledBeforeSending() async throws {
        let repository = try TestAPI.anonymous()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await repository.performRequest(Endpoint<Void>.get("health"))
        }
        guard case .cancelled(let context?)? = await task.value.failure else {
            Issue.record("expected .cancelled with the request")
            return
        }
        #expect(context.request.url.path == "/api/v1/health")
        #expect(context.response == nil)
        #expect(context.attempts == 0)
        #expect(RepositoryError.cancelled(context).description.hasSuffix("was cancelled before it was sent."))
    }

    @Test("pinning asked of URLSession on Linux is .pinningUnsupported, never a silent pass")
    func pinningUnsupportedOnURLSession() async throws {
        let servers = try TestServers.require()
        let configuration = try TestServers.configuration(servers.apiTLSURL, pins: [servers.serverPin], caFile: servers.caFile)
        let repository = TestAPI.Repository(configuration: configuration, transport: URLSessionTransport())
        let result = await repository.performRequest(Endpoint<Void>.get("health").withoutSession())
        #if os(Linux)
            guard case .pinningUnsupported(_, let context)? = result.failure else {
                Issue.record("expected .pinningUnsupported, got \(String(describing: result.failure))")
                return
            }
            #expect(context.request.url.scheme == "https")
        #endif
    }

    @Test("an HTTPS server whose certificate is not trusted is .tlsError(.untrustedCertificate)")
    func untrustedCertificate() async throws {
        let servers = try TestServers.require()
        let repository = try TestAPI.anonymous(servers.apiTLSURL, transport: URLSessionTransport())
        let result = await repository.performRequest(Endpoint<Void>.get("health").withoutSession())
        guard case .tlsError(.untrustedCertificate, _)? = result.failure else {
            Issue.record("expected .tlsError(.untrustedCertificate), got \(String(describing: result.failure))")
            return
        }
    }
}

/// Records what the decode-failure hook of one configuration hears.
final class HookRecorder: Sendable {
    private let heard = Mutex<[DecodingFailure]>([])

    var reports: [DecodingFailure] { heard.withLock { $0 } }

    func repository() throws -> TestAPI.Repository {
        let servers = try TestServers.require()
        let configuration = try TestServers.configuration(servers.apiURL) { [self] failure in
            heard.withLock { $0.append(failure) }
        }
        return TestAPI.Repository(configuration: configuration)
    }
}

/// A loopback port nothing listens on.
func unusedPort() throws -> Int {
    let (descriptor, port) = try boundLoopbackSocket(listening: false)
    close(descriptor)
    return port
}

/// A TCP socket bound to a free loopback port, listening when asked (nobody accepts on it), and
/// that port.
func boundLoopbackSocket(listening: Bool) throws -> (descriptor: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length) == 0 && (!listening || listen(descriptor, 64) == 0)
                && getsockname(descriptor, $0, &length) == 0
        }
    }
    guard descriptor >= 0, bound else {
        if descriptor >= 0 { close(descriptor) }
        throw TestServers.Unavailable(description: "could not bind a free loopback port")
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}

/// The TLS and fault cases of `RepositoryError`, through a repository on the libcurl transport
/// against the real HTTPS servers and the fault server.
@Suite("RepositoryError from TLS and faulty servers")
struct RepositoryErrorFaultIntegrationTests {
    func repository(_ base: String, pins: [String] = [], caFile: URL? = nil, timeout: TimeInterval = 10) throws -> TestAPI.Repository {
        TestAPI.Repository(
            configuration: try TestServers.configuration(base, timeout: timeout, pins: pins, caFile: caFile),
            transport: TransportUnderTest.libcurl.make(maximumResponseSize: 1_000_000))
    }

    @Test("a wrong pin is .pinningFailed naming the host; the right or a rotated pin passes")
    func pinning() async throws {
        let servers = try TestServers.require()
        let wrong = try repository(servers.apiTLSURL, pins: [servers.otherPin], caFile: servers.caFile)
        let rotated = try repository(servers.apiTLSURL, pins: [servers.otherPin, servers.serverPin], caFile: servers.caFile)
        let refused = await wrong.performAuthenticationRequest(Endpoint<Void>.get("health"))
        guard case .pinningFailed(let host, let context)? = refused.failure else {
            Issue.record("expected .pinningFailed, got \(String(describing: refused.failure))")
            return
        }
        #expect(host == "127.0.0.1")
        #expect(context.response == nil)
        #expect(refused.failure?.localizedDescription.contains("Nothing was sent") == true)
        let accepted = await rotated.performAuthenticationRequest(Endpoint<Void>.get("health"))
        #expect(accepted.failure == nil)
    }

    @Test("untrusted, expired and wrong-host certificates are distinct .tlsError cases")
    func certificates() async throws {
        let servers = try TestServers.require()
        let untrusted = await (try repository(servers.apiTLSURL)).performAuthenticationRequest(Endpoint<Void>.get("health"))
        let expired = await (try repository(servers.expiredTLSURL, caFile: servers.caFile))
            .performAuthenticationRequest(Endpoint<Void>.get("health"))
        let wrongHost = await (try repository(servers.wrongHostTLSURL, caFile: servers.caFile))
            .performAuthenticationRequest(Endpoint<Void>.get("health"))
        guard case .tlsError(.untrustedCertificate, _)? = untrusted.failure,
            case .tlsError(.expiredCertificate, _)? = expired.failure,
            case .tlsError(.hostnameMismatch, _)? = wrongHost.failure
        else {
            Issue.record(
                "got \(String(describing: untrusted.failure)), \(String(describing: expired.failure)), \(String(describing: wrongHost.failure))"
            )
            return
        }
    }

    @Test("garbage and a bad status line are .invalidResponse; a silent server is .timeout")
    func faultyServers() async throws {
        let servers = try TestServers.require()
        // A timeout only the silent server reaches: a busy machine may take a second to answer the others.
        let fault = try repository(servers.faultURL, timeout: 20)
        for path in ["garbage", "bad-status"] {
            let result = await fault.performAuthenticationRequest(Endpoint<Void>.get(path))
            guard case .invalidResponse(let reason, let context)? = result.failure else {
                Issue.record("\(path): expected .invalidResponse, got \(String(describing: result.failure))")
                continue
            }
            #expect(!reason.isEmpty)
            #expect(context.request.url.path == "/\(path)")
        }
        let silent = await (try repository(servers.faultURL, timeout: 1)).performAuthenticationRequest(Endpoint<Void>.get("hang"))
        guard case .timeout? = silent.failure else {
            Issue.record("expected .timeout, got \(String(describing: silent.failure))")
            return
        }
        let closed = await fault.performAuthenticationRequest(Endpoint<Void>.get("close"))
        guard case .noNetworkConnection(.connectionLost, _)? = closed.failure else {
            Issue.record("expected connection lost, got \(String(describing: closed.failure))")
            return
        }
    }
}

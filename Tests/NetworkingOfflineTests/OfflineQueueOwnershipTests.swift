import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

@testable import NetworkingOffline

/// Whose a queued request is, when users change while it is sent, and what a flush reports.
@Suite("Offline queue: whose requests")
struct OfflineQueueOwnershipTests {
    /// Switches the session from Ann to Bob the first time a request passes it once armed,
    /// before the session step signs it.
    final class Switcher: Interceptor {
        let session: SessionManager<APIUser>
        let armed = Mutex(false)

        init(session: SessionManager<APIUser>) { self.session = session }

        var position: InterceptorPosition { .beforeSigning }

        func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
            async throws(RepositoryError) -> TransportResponse
        {
            if armed.withLock({ armed in
                defer { armed = false }
                return armed
            }) {
                try? session.logout()
                try? session.login(user: APIUser(id: 2, name: "Bob"), token: "bob-token")
            }
            return try await next(request)
        }
    }

    private static func repository(
        _ queue: OfflineQueue, session: SessionManager<APIUser>, transport: StubTransport, extra: [any Interceptor] = []
    ) throws -> APIRepository {
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [queue] + extra
        let repository = APIRepository(configuration: configuration, sessionManager: session, transport: transport)
        queue.connect(repository)
        return repository
    }

    private static func annsSession() throws -> SessionManager<APIUser> {
        let session = SessionManager<APIUser>()
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        return session
    }

    @Test("A write whose call outlives its user's session is kept as that user's, never sent with the next user's token")
    func keptForTheUserWhoMadeIt() async throws {
        // Given: Ann's write, during which Ann logs out and Bob logs in, and then the network fails
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
        let session = try Self.annsSession()
        let first = Mutex(true)
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "notes") { request throws(TransportError) in
                if first.withLock({ first in
                    defer { first = false }
                    return first
                }) {
                    try? session.logout()
                    try? session.login(user: APIUser(id: 2, name: "Bob"), token: "bob-token")
                    throw .network(.connectionLost)
                }
                return TransportResponse(statusCode: 201, headers: [:], body: Data(), url: request.url)
            }
        ])
        let repository = try Self.repository(queue, session: session, transport: transport)
        // When
        guard case .queued = await queue.perform(Endpoint<Void>(.post, "notes", parameters: ["n": 1]), with: repository) else {
            Issue.record("expected the write to be queued")
            return
        }
        let bobs = await queue.flush()
        // Then: Bob's flush does not send it; Ann's does, with her token
        #expect(bobs.delivered.isEmpty)
        #expect(queue.count == 1)
        #expect(transport.requests.count == 1)
        try session.logout()
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        #expect(await queue.flush().delivered.count == 1)
        #expect(transport.requests.last?.headers["Authorization"]?.hasSuffix("ann-token") == true)
    }

    @Test("A flush's request is never signed for a user who logged in after the flush checked whose it is")
    func switchBeforeSigning() async throws {
        // Given: Ann's queued write, and a step that switches to Bob after the queue's check
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
        let session = try Self.annsSession()
        let online = OfflineQueueFlushTests.Switch()
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "notes") { request throws(TransportError) in
                guard online.isOn else { throw .network(.connectionRefused) }
                return TransportResponse(statusCode: 201, headers: [:], body: Data(), url: request.url)
            }
        ])
        let switcher = Switcher(session: session)
        let repository = try Self.repository(queue, session: session, transport: transport, extra: [switcher])
        guard case .queued = await queue.perform(Endpoint<Void>(.post, "notes"), with: repository) else {
            Issue.record("expected the write to be queued")
            return
        }
        let sentBefore = transport.requests.count
        // When
        online.turnOn()
        switcher.armed.withLock { $0 = true }
        let report = await queue.flush()
        // Then: refused before the wire, kept for Ann
        #expect(transport.requests.count == sentBefore)
        #expect(report.delivered.isEmpty)
        #expect(queue.count == 1)
        guard case .unauthenticatedSession? = report.stoppedBy else {
            Issue.record("expected unauthenticatedSession, got \(String(describing: report.stoppedBy))")
            return
        }
    }

    @Test("SessionIdentityKey: a call made for one user is not signed for another; for the same user it is")
    func sessionIdentityKey() async throws {
        let session = try Self.annsSession()
        let transport = StubTransport(routes: [.status(.post, "notes", 201)])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = []
        let repository = APIRepository(configuration: configuration, sessionManager: session, transport: transport)
        let request = try repository.makeRequest(for: Endpoint<Void>(.post, "notes"))
        for (user, sent) in [("2", false), (session.sessionIdentity ?? "", true)] {
            var options = RequestOptions()
            options[SessionIdentityKey.self] = user
            let result = await repository.send(request, context: RequestContext(requiresSession: true, options: options, session: session))
            if sent {
                #expect((try? result.get())?.statusCode == 201)
            } else if case .failure(.unauthenticatedSession) = result {
            } else {
                Issue.record("expected unauthenticatedSession for another user, got \(result)")
            }
        }
        #expect(transport.requests.count == 1)
    }

    /// A session whose users switch between its signing and any later look: it signs in Ann's
    /// session (its authorization says so) while `sessionIdentity` already names Bob.
    private final class SwitchingSession: SessionAuthorizing {
        var sessionIdentity: String? { "user:2" }
        func authorize() async throws(RepositoryError) -> SessionAuthorization? {
            SessionAuthorization(headerValue: "Bearer ann-token", version: 0, sessionID: 1, sessionIdentity: "user:1")
        }
        func authorizationRejected(_ authorization: SessionAuthorization) async throws(RepositoryError) -> SessionAuthorization? { nil }
        func replayRejected(_ authorization: SessionAuthorization) async {}
    }

    @Test("SessionIdentityKey is checked against whose session signed the call, not whoever is logged in a moment later")
    func sessionIdentityKeyUsesTheSigningSession() async throws {
        let transport = StubTransport(routes: [.status(.post, "notes", 201)])
        let configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        let session = SwitchingSession()
        let repository = AbstractRepository(configuration: configuration, sessionManager: session, transport: transport)
        let request = try repository.makeRequest(for: Endpoint<Void>(.post, "notes"))
        for (user, sent) in [("user:2", false), ("user:1", true)] {
            var options = RequestOptions()
            options[SessionIdentityKey.self] = user
            let result = await repository.send(request, context: RequestContext(requiresSession: true, options: options, session: session))
            #expect(((try? result.get()) != nil) == sent, "\(user)")
        }
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer ann-token"])
        // The session manager names the user in its authorizations.
        let ann = try Self.annsSession()
        #expect(try await ann.authorize()?.sessionIdentity == ann.sessionIdentity)
        #expect(ann.sessionIdentity != nil)
    }

    @Test("A session manager whose users switch while it signs (Ann logs out, Bob in) never signs a call made for Bob with Ann's token")
    func switchWhileSigning() async throws {
        final class Hook: Sendable {
            let session = Mutex<SessionManager<APIUser>?>(nil)
            let armed = Mutex(true)
        }
        let hook = Hook()
        // The scheme runs outside the session's lock, after the credential was read: the switch
        // lands between the signing and any later look at the session.
        let scheme = AuthorizationScheme { credential in
            let first = hook.armed.withLock { armed in
                defer { armed = false }
                return armed
            }
            if first, let session = hook.session.withLock({ $0 }) {
                try? session.logout()
                try? session.login(user: APIUser(id: 2, name: "Bob"), token: "bob-token")
            }
            return "Bearer \(credential.accessToken)"
        }
        let session = SessionManager<APIUser>(authorizationScheme: scheme)
        hook.session.withLock { $0 = session }
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        let transport = StubTransport(routes: [.status(.post, "notes", 201)])
        let configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        let repository = APIRepository(configuration: configuration, sessionManager: session, transport: transport)
        let request = try repository.makeRequest(for: Endpoint<Void>(.post, "notes"))
        var options = RequestOptions()
        options[SessionIdentityKey.self] = "user:2"
        let result = await repository.send(request, context: RequestContext(requiresSession: true, options: options, session: session))
        #expect(session.sessionIdentity == "user:2", "the switch happened")
        guard case .failure(.unauthenticatedSession) = result else {
            Issue.record("expected unauthenticatedSession, got \(result)")
            return
        }
        #expect(transport.requests.isEmpty)
    }

    /// A queue flushing through `batch` with `maximumRefusals: 2`, holding writes queued while the
    /// network was down; once `online` is on, the batch endpoint answers with `answer`.
    private struct BatchSetup {
        let queue: OfflineQueue
        /// Held here: the queue keeps its repository weakly.
        let repository: APIRepository
        let online: OfflineQueueFlushTests.Switch
        let folder: URL
    }

    private static func batchSetup(
        queuing count: Int, answer: @escaping @Sendable (TransportRequest) -> TransportResponse
    ) async throws -> BatchSetup {
        let folder = try temporaryFolder()
        let queue = try OfflineQueue(
            OfflineQueue.Configuration(folder: folder, retryDelay: 3600, batch: (path: "batch", limit: 10), maximumRefusals: 2))
        let online = OfflineQueueFlushTests.Switch()
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "notes") { _ throws(TransportError) in throw .network(.connectionRefused) },
            StubTransport.Route(.post, "batch") { request throws(TransportError) in
                guard online.isOn else { throw .network(.connectionRefused) }
                return answer(request)
            },
        ])
        let repository = try Self.repository(queue, session: try Self.annsSession(), transport: transport)
        for _ in 0..<count {
            guard case .queued = await queue.perform(Endpoint<Void>(.post, "notes"), with: repository) else {
                throw OfflineQueueFlushTests.QueueingFailed()
            }
        }
        return BatchSetup(queue: queue, repository: repository, online: online, folder: folder)
    }

    // (A 413 is halved first instead: see OfflineQueueFlushTests.tooLargeAloneCountsForItself.)
    @Test("A batch the server refuses as a whole counts as a refusal of each item: after maximumRefusals they go, with the answer")
    func batchRefusedAsAWhole() async throws {
        let setup = try await Self.batchSetup(queuing: 2) { request in
            TransportResponse(statusCode: 400, headers: [:], body: Data(), url: request.url)
        }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.online.turnOn()
        #expect(await setup.queue.flush().remaining == 2)
        let second = await setup.queue.flush()
        #expect(second.remaining == 0)
        #expect(second.rejected.count == 2)
        #expect(second.rejected.first?.error.statusCode == 400)
    }

    @Test("A batch item answer that cannot be read keeps the request, counted as a refusal")
    func unreadableItemAnswer() async throws {
        let setup = try await Self.batchSetup(queuing: 1) { request in
            TransportResponse(
                statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(#"[{"code": "201"}]"#.utf8), url: request.url)
        }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.online.turnOn()
        let first = await setup.queue.flush()
        #expect(first.remaining == 1)
        #expect(first.rejected.isEmpty)
        let second = await setup.queue.flush()
        #expect(second.remaining == 0)
        #expect(second.rejected.count == 1)
    }

    @Test(
        "An answer that is not valid HTTP (a redirect loop, a proxy's broken reply) keeps the request until the third comes a minute or more after the first"
    )
    func brokenAnswersAreGivenUp() async throws {
        let clock = ManualClock()
        let setup = try OfflineQueueFlushTests.setUp(clock: clock.networkingClock) { _ throws(TransportError) in
            throw .invalidResponse("too many redirects")
        }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await OfflineQueueFlushTests.queueNotes(setup, count: 1)
        setup.online.turnOn()
        // Three within seconds (HTTP/2 resets through a deploy) give nothing up.
        for _ in 0..<3 {
            let report = await setup.queue.flush()
            #expect(report.rejected.isEmpty)
            guard case .invalidResponse? = report.stoppedBy else {
                Issue.record("expected the flush to stop on the broken answer, got \(String(describing: report.stoppedBy))")
                return
            }
            clock.advance(by: 20)
        }
        let report = await setup.queue.flush()
        #expect(report.rejected.map(\.ticket) == tickets)
        #expect(setup.queue.count == 0)
    }

    @Test("Broken answers count in a row: one, then a 503, then two within seconds an hour later keep the request")
    func brokenAnswersCountInARow() async throws {
        let clock = ManualClock()
        let answers = Mutex(["broken", "503", "broken", "broken"])
        let setup = try OfflineQueueFlushTests.setUp(clock: clock.networkingClock) { request throws(TransportError) in
            let next = answers.withLock { $0.isEmpty ? "201" : $0.removeFirst() }
            if next == "broken" { throw .invalidResponse("HTTP/2 stream 1 was reset") }
            return TransportResponse(statusCode: Int(next) ?? 201, url: request.url)
        }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await OfflineQueueFlushTests.queueNotes(setup, count: 1)
        setup.online.turnOn()
        for advance in [0.0, 0, 3600, 1] {
            clock.advance(by: advance)
            #expect(await setup.queue.flush().rejected.isEmpty)
        }
        #expect(await setup.queue.flush().delivered == tickets)
    }

    @Test(
        "With maximumRefusals, answers that are not valid HTTP are given up at that count, at once; a whole batch answered so counts for each item"
    )
    func brokenAnswersAndMaximumRefusals() async throws {
        let setup = try OfflineQueueFlushTests.setUp(maximumRefusals: 1) { _ throws(TransportError) in
            throw .invalidResponse("weird server reply")
        }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await OfflineQueueFlushTests.queueNotes(setup, count: 1)
        setup.online.turnOn()
        #expect(await setup.queue.flush().rejected.map(\.ticket) == tickets)
        let batched = try OfflineQueueFlushTests.setUp(batch: ("batch", 10), maximumRefusals: 2) { _ throws(TransportError) in
            throw .invalidResponse("weird server reply")
        }
        defer { try? FileManager.default.removeItem(at: batched.folder) }
        let queued = try await OfflineQueueFlushTests.queueNotes(batched, count: 2)
        batched.online.turnOn()
        let first = await batched.queue.flush()
        #expect(first.rejected.isEmpty && first.remaining == 2)
        let second = await batched.queue.flush()
        #expect(Set(second.rejected.map(\.ticket)) == Set(queued))
        #expect(batched.queue.count == 0)
    }

    @Test("A passing broken answer (an HTTP/2 stream reset) loses nothing: the next flush delivers the request")
    func passingBrokenAnswerIsKept() async throws {
        let broken = OfflineQueueFlushTests.Switch()
        broken.turnOn()
        let setup = try OfflineQueueFlushTests.setUp { request throws(TransportError) in
            if broken.isOn { throw .invalidResponse("HTTP/2 stream 1 was not closed cleanly") }
            return TransportResponse(statusCode: 201, url: request.url)
        }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await OfflineQueueFlushTests.queueNotes(setup, count: 2)
        setup.online.turnOn()
        let first = await setup.queue.flush()
        #expect(first.rejected.isEmpty && first.delivered.isEmpty && first.remaining == 2)
        broken.turnOff()
        let second = await setup.queue.flush()
        #expect(second.delivered == tickets)
    }

    @Test("A request refused for good is reported with its own method, not GET")
    func rejectedNamesTheMethod() async throws {
        let setup = try OfflineQueueFlushTests.setUp(answer: OfflineQueueFlushTests.status(400))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        _ = try await OfflineQueueFlushTests.queueNotes(setup, count: 1)
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.rejected.first?.error.context?.request.method == .post)
    }

    @Test("Requests of another user discarded before a flush are reported, to onFlush too when nothing else is sent")
    func discardedAreReported() async throws {
        let heard = Mutex<[FlushReport]>([])
        let setup = try OfflineQueueFlushTests.setUp(
            othersRequests: .discard, onFlush: { report in heard.withLock { $0.append(report) } },
            answer: OfflineQueueFlushTests.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await OfflineQueueFlushTests.queueNotes(setup, count: 2)
        try setup.session.logout()
        try setup.session.login(user: APIUser(id: 2, name: "Bob"), token: "bob-token")
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.discarded == tickets)
        #expect(report.delivered.isEmpty)
        #expect(heard.withLock { $0.map(\.discarded) } == [tickets])
        // Their outcome says why, naming the request.
        guard case .failure(.invalidRequest(let reason, let request?)) = await setup.queue.outcome(of: tickets[0]) else {
            Issue.record("expected the discarded request's outcome to name it")
            return
        }
        #expect(reason.contains("another user") && request.method == .post)
    }
}

/// A clock whose time moves only when told and whose timers never fire, so that the flushes a
/// test makes are the only ones (`TestClock` ends every wait at once).
private final class ManualClock: Sendable {
    let now = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
    func advance(by seconds: TimeInterval) { now.withLock { $0.addTimeInterval(seconds) } }
    var networkingClock: NetworkingClock {
        NetworkingClock(now: { self.now.withLock { $0 } }, sleep: { _ in try await Task.sleep(for: .seconds(86_400)) })
    }
}

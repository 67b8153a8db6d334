import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

@testable import NetworkingOffline

/// The call that finds requests waiting and flushes them before its own: over a stub transport,
/// what it does when its user changes meanwhile, when it is cancelled, and which answers show
/// the network is back.
@Suite("Offline queue: the call that flushes")
struct OfflineQueueCallerTests {
    /// A transport for `POST notes` (refused while `online` is off, 201 once on) and `GET profile`
    /// (200). While `holding` is set, a delivered note waits for ``release()`` first; `onDelivery`
    /// runs for each delivered note.
    final class Server: Transport {
        private struct State {
            var online = false
            var holding = false
            var held = false
            var requests: [TransportRequest] = []
            var onDelivery: (@Sendable () -> Void)?
        }
        private let state = Mutex(State())

        var requests: [TransportRequest] { state.withLock { $0.requests } }
        var isHeld: Bool { state.withLock { $0.held } }
        func goOnline() { state.withLock { $0.online = true } }
        func hold() { state.withLock { $0.holding = true } }
        func release() { state.withLock { $0.holding = false } }
        func onDelivery(_ action: @escaping @Sendable () -> Void) { state.withLock { $0.onDelivery = action } }

        func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
            let online = state.withLock { state in
                state.requests.append(request)
                return state.online
            }
            if request.url.path.hasSuffix("/profile") { return TransportResponse(statusCode: 200, url: request.url) }
            guard online else { throw .network(.connectionRefused) }
            // Waits without heeding cancellation, as a request on the wire does.
            while state.withLock({ state in
                state.held = state.holding
                return state.holding
            }) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            state.withLock { $0.onDelivery }?()
            return TransportResponse(statusCode: 201, url: request.url)
        }
    }

    struct Setup {
        let queue: OfflineQueue
        let repository: APIRepository
        let server: Server
        let session: SessionManager<APIUser>
        let folder: URL
    }

    /// A wall clock the test moves on, whose sleeps (the queue's retry timer) last an hour:
    /// moving past a planned retry lets the next call flush before the timer does.
    final class LateTimerClock: Sendable {
        private let offset = Mutex<TimeInterval>(0)
        func moveOn(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
        var networkingClock: NetworkingClock {
            NetworkingClock(now: { Date() + self.offset.withLock { $0 } }, sleep: { _ in try await Task.sleep(for: .seconds(3600)) })
        }
    }

    static func setUp(interceptors: [any Interceptor] = [], clock: NetworkingClock = .live) throws -> Setup {
        let folder = try temporaryFolder()
        let queue = try OfflineQueue(
            OfflineQueue.Configuration(folder: folder, retryDelay: 3600, maximumRetryDelay: 86_400, clock: clock))
        let server = Server()
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [queue] + interceptors
        let session = SessionManager<APIUser>()
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        let repository = APIRepository(configuration: configuration, sessionManager: session, transport: server)
        queue.connect(repository)
        return Setup(queue: queue, repository: repository, server: server, session: session, folder: folder)
    }

    static func note(_ number: Int) -> Endpoint<Void> { Endpoint<Void>(.post, "notes", parameters: ["n": number]) }

    /// Waits up to 5 seconds for `condition`.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    @Test(
        "A logout and another login while a call flushes: its write is kept for its own user, another call fails, neither is signed for the next user"
    )
    func userChangesDuringTheFlush() async throws {
        let clock = LateTimerClock()
        let setup = try Self.setUp(clock: clock.networkingClock)
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        guard case .queued = await setup.queue.perform(Self.note(1), with: setup.repository) else {
            Issue.record("expected the first note to be queued")
            return
        }
        setup.server.goOnline()
        clock.moveOn(by: 86_400)
        // Delivering Ann's waiting note, the app switches to Bob.
        let session = setup.session
        setup.server.onDelivery {
            try? session.logout()
            try? session.login(user: APIUser(id: 2, name: "Bob"), token: "bob-token")
        }
        // Ann's next write flushes the first one, then finds Bob logged in.
        let outcome = await setup.queue.perform(Self.note(2), with: setup.repository)
        guard case .queued(let kept) = outcome else {
            Issue.record("expected Ann's write to be kept for her, got \(outcome)")
            return
        }
        #expect(setup.queue.count == 1)
        let keptItem = try #require(try OfflineJournal.liveItems(in: setup.folder).first { $0.id == kept.ticket.id })
        #expect(keptItem.user == "user:1", "kept as Ann's")
        #expect(keptItem.request.headers["Idempotency-Key"] != nil, "kept with its Idempotency-Key")
        // Ann again, with her write waiting; a plain call of hers flushes it, and Bob logs in meanwhile.
        clock.moveOn(by: 86_400)
        try session.logout()
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        let profile = await setup.repository.performRequest(Endpoint<Void>.get("profile"))
        guard case .failure(.unauthenticatedSession) = profile else {
            Issue.record("expected unauthenticatedSession, got \(profile)")
            return
        }
        #expect(setup.queue.count == 0, "Ann's kept write was delivered by that flush")
        #expect(!setup.server.requests.contains { $0.headers["Authorization"] == "Bearer bob-token" })
        #expect(!setup.server.requests.contains { $0.url.path.hasSuffix("/profile") })
    }

    @Test("A queue given to the repository's initializer, not its configuration, connects itself on its first write")
    func connectsFromTheInitializersInterceptors() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
        let server = Server()
        let session = SessionManager<APIUser>()
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        let repository = APIRepository(
            configuration: try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5),
            sessionManager: session, transport: server, interceptors: [queue])
        guard case .queued = await queue.perform(Self.note(1), with: repository) else {
            Issue.record("expected the write to be kept while the server is down")
            return
        }
        server.goOnline()
        #expect(await queue.flush().delivered.count == 1)
    }

    @Test("Cancelling the call that flushes ends that call at once; the flush goes on and delivers every waiting request")
    func cancellingTheCallerKeepsTheFlush() async throws {
        let clock = LateTimerClock()
        let setup = try Self.setUp(clock: clock.networkingClock)
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        for number in 1...2 {
            guard case .queued = await setup.queue.perform(Self.note(number), with: setup.repository) else {
                Issue.record("expected note \(number) to be queued")
                return
            }
        }
        setup.server.goOnline()
        setup.server.hold()
        clock.moveOn(by: 86_400)
        let repository = setup.repository
        let caller = Task { await repository.performRequest(Endpoint<Void>.get("profile")) }
        #expect(await Self.eventually { setup.server.isHeld }, "the flush is delivering the first note")
        caller.cancel()
        // It ends while the flush still waits for the server.
        let ended = await caller.value(within: .seconds(60))
        #expect(setup.server.isHeld)
        setup.server.release()
        guard case .failure(.cancelled)? = ended else {
            Issue.record("expected the cancelled call to end as cancelled, while the flush waits, got \(String(describing: ended))")
            return
        }
        #expect(await Self.eventually { setup.queue.count == 0 }, "both notes delivered: \(setup.queue.count) left")
    }

    /// Answers `GET cached` itself, as a response cache after the queue would, from its store.
    struct StoredAnswers: Interceptor {
        var position: InterceptorPosition { .afterSigning }
        func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
            async throws(RepositoryError) -> TransportResponse
        {
            guard request.url.path.hasSuffix("/cached") else { return try await next(request) }
            return TransportResponse(statusCode: 200, url: request.url, source: .cache)
        }
    }

    @Test("A stored answer shows nothing of the network: it starts no flush; the server's answer does")
    func storedAnswersStartNoFlush() async throws {
        let setup = try Self.setUp(interceptors: [StoredAnswers()])
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        guard case .queued = await setup.queue.perform(Self.note(1), with: setup.repository) else {
            Issue.record("expected the note to be queued")
            return
        }
        setup.server.goOnline()
        let sent = setup.server.requests.count
        #expect(await setup.repository.performRequest(Endpoint<Void>.get("cached")).isSuccess)
        try await Task.sleep(for: .milliseconds(200))
        #expect(setup.server.requests.count == sent, "no flush: nothing sent")
        #expect(setup.queue.count == 1)
        #expect(await setup.repository.performRequest(Endpoint<Void>.get("profile")).isSuccess)
        #expect(await Self.eventually { setup.queue.count == 0 }, "the server's answer started a flush")
    }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

@testable import NetworkingOffline

/// The offline queue against the test API behind an ``OutageProxy``: writes made while the API is
/// unreachable are kept on disk, and delivered once — in order, signed with the session of the
/// moment — when it is back.
@Suite("Offline queue end to end", .serialized)
struct OfflineQueueIntegrationTests {
    /// A logged-in repository on the test API through a proxy, with a queue in a fresh folder.
    struct Setup {
        let proxy: OutageProxy
        let queue: OfflineQueue
        let repository: APIRepository
        let session: SessionManager<APIUser>
        let direct: APIRepository
        let folder: URL
        let stream = UUID().uuidString

        /// Sends each write through the queue (the API down): each must be kept. Their tickets.
        func queued(_ writes: [Endpoint<Void>]) async throws -> [OfflineTicket] {
            var tickets: [OfflineTicket] = []
            for write in writes {
                let outcome = await queue.perform(write, with: repository)
                guard case .queued(let queued) = outcome else { throw NotQueued(outcome: "\(outcome)") }
                tickets.append(queued.ticket)
            }
            return tickets
        }
    }

    struct NotQueued: Error {
        let outcome: String
    }

    static func setUp(
        queuedStatusCodes: Set<Int> = [], batch: (path: String, limit: Int)? = nil, othersRequests: OfflineQueue.OthersRequests = .keep,
        maximumBytes: Int = 64 * 1024 * 1024, reports: ReportLog? = nil
    ) async throws -> Setup {
        let base = try OfflineTestServers.apiURL()
        let proxy = try OutageProxy(upstreamPort: base.port ?? 0)
        let folder = try temporaryFolder()
        let queue = try OfflineQueue(
            OfflineQueue.Configuration(
                folder: folder, maximumBytes: maximumBytes, queuedStatusCodes: queuedStatusCodes, othersRequests: othersRequests,
                retryDelay: 3600, batch: batch, onFlush: { report in reports?.record(report) }))
        var configuration = try OfflineTestServers.configuration(base, port: proxy.port, timeout: 5)
        configuration.interceptors = [queue]
        let session = SessionManager<APIUser>()
        let repository = APIRepository(configuration: configuration, sessionManager: session)
        queue.connect(repository)
        let direct = APIRepository(configuration: try OfflineTestServers.configuration(base))
        let login = try await direct.login()
        try session.login(user: login.user, token: login.token)
        return Setup(proxy: proxy, queue: queue, repository: repository, session: session, direct: direct, folder: folder)
    }

    @Test("Writes made while the API is down are queued (the caller is told), then delivered in order when it is back")
    func queueThenFlush() async throws {
        let setup = try await Self.setUp()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.proxy.goDown()
        var tickets: [OfflineTicket] = []
        for number in 1...3 {
            let outcome = await setup.queue.perform(setup.repository.note(setup.stream, ["n": number]), with: setup.repository)
            guard case .queued(let queued) = outcome else {
                Issue.record("expected queued, got \(outcome)")
                return
            }
            tickets.append(queued.ticket)
        }
        // A plain call of an offline route says so through its error too.
        let plain = await setup.repository.performRequest(setup.repository.note(setup.stream, ["n": 4]).queueingOffline())
        guard case .failure(let failure) = plain, let queued = failure.customError(as: QueuedOffline.self) else {
            Issue.record("expected queuedOffline, got \(plain)")
            return
        }
        #expect(queued.reason.contains("earlier requests wait"), "it waits behind the three before it")
        #expect(!failure.description.contains("invalid"), "a request kept behind others is not an invalid one")
        #expect(setup.queue.count == 4)
        // Nothing on disk holds a credential.
        let log = try String(decoding: Data(contentsOf: setup.folder.appendingPathComponent("queue.log")), as: UTF8.self)
        #expect(!log.contains(try #require(setup.session.sessionToken)))
        #expect(!log.contains("Authorization"))
        // Back online: the next flush delivers everything, in order, exactly once.
        try setup.proxy.comeUp()
        let report = await setup.queue.flush()
        #expect(report.delivered.count == 4 && report.remaining == 0)
        #expect(try await setup.queue.outcome(of: tickets[0]).get().statusCode == 201)
        let journal = try await setup.direct.journal(setup.stream)
        #expect(journal.entries.map { $0.body["n"] } == [1, 2, 3, 4])
        #expect(Set(journal.entries.compactMap(\.idempotencyKey)).count == 4)
        #expect(journal.entries.allSatisfy { $0.userId == 1 }, "signed at flush time with the current session")
    }

    @Test(
        "An answer through the queue while writes wait shows the network is back and starts a flush; a 4xx leaves the queue with its error")
    func flushBeforeNextRequestAndRejections() async throws {
        let setup = try await Self.setUp()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.proxy.goDown()
        guard
            case .queued(let rejected) = await setup.queue.perform(
                Endpoint<Void>(.post, "journal/\(setup.stream)", parameters: ["n": 1], query: ["fail": 422]), with: setup.repository)
        else {
            Issue.record("expected queued")
            return
        }
        _ = await setup.queue.perform(setup.repository.note(setup.stream, ["n": 2]), with: setup.repository)
        try setup.proxy.comeUp()
        // A plain GET through the same chain gets an answer: the queue flushes.
        _ = try await setup.repository.journal(setup.stream)
        for _ in 0..<3000 where setup.queue.count > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(setup.queue.count == 0)
        let outcome = await rejected.result()
        guard case .failure(let error) = outcome else {
            Issue.record("expected the 422")
            return
        }
        #expect(error.statusCode == 422)
        let journal = try await setup.direct.journal(setup.stream)
        #expect(journal.entries.map { $0.body["n"] } == [2])
    }

    @Test(
        "With connect(_:) forgotten, perform connects its repository and the write is delivered; one kept through the chain makes the flush say so"
    )
    func forgottenConnection() async throws {
        let base = try OfflineTestServers.apiURL()
        let proxy = try OutageProxy(upstreamPort: base.port ?? 0)
        let direct = APIRepository(configuration: try OfflineTestServers.configuration(base))
        let login = try await direct.login()
        let stream = UUID().uuidString
        for viaPerform in [true, false] {
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let reports = ReportLog()
            let queue = try OfflineQueue(
                OfflineQueue.Configuration(folder: folder, retryDelay: 3600, onFlush: { report in reports.record(report) }))
            var configuration = try OfflineTestServers.configuration(base, port: proxy.port, timeout: 5)
            configuration.interceptors = [queue]
            let session = SessionManager<APIUser>()
            try session.login(user: login.user, token: login.token)
            let repository = APIRepository(configuration: configuration, sessionManager: session)
            proxy.goDown()
            let write = repository.note(stream, ["n": viaPerform ? 1 : 2])
            if viaPerform {
                guard case .queued = await queue.perform(write, with: repository) else {
                    Issue.record("expected queued")
                    return
                }
            } else {
                let plain = await repository.performRequest(write.queueingOffline())
                guard case .failure(let failure) = plain, failure.customError(as: QueuedOffline.self) != nil else {
                    Issue.record("expected queuedOffline, got \(plain)")
                    return
                }
            }
            try proxy.comeUp()
            let report = await queue.flush()
            if viaPerform {
                #expect(report.delivered.count == 1 && report.remaining == 0, "\(report)")
            } else {
                guard case .invalidConfiguration(let reason) = report.stoppedBy else {
                    Issue.record("expected the missing connection, got \(report)")
                    return
                }
                #expect(reason.contains("connect(_:)") && report.remaining == 1)
                #expect(reports.last?.stoppedBy != nil, "onFlush heard it")
            }
        }
        #expect(try await direct.journal(stream).entries.map { $0.body["n"] } == [1])
    }

    @Test("Through a batch endpoint, a queued write that cannot be a batch item (a gzipped body) is sent on its own, in its place")
    func unbatchableWriteGoesAlone() async throws {
        let setup = try await Self.setUp(batch: ("batch", 10))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.proxy.goDown()
        let writes = [
            setup.repository.note(setup.stream, ["n": 1]), Endpoint<Void>.post("uploads/raw", parameters: ["n": 2]).gzipped(),
            setup.repository.note(setup.stream, ["n": 3]), setup.repository.note(setup.stream, ["n": 4]),
        ]
        let tickets = try await setup.queued(writes)
        try setup.proxy.comeUp()
        let report = await setup.queue.flush()
        #expect(report.delivered == tickets && report.rejected.isEmpty && report.remaining == 0, "\(report)")
        #expect(try await setup.direct.journal(setup.stream).entries.map { $0.body["n"] } == [1, 3, 4])
        let upload = try await setup.queue.outcome(of: tickets[1]).get()
        #expect(upload.json?["inflated_size"] != nil && upload.json?["json"]?["n"] == .int(2), "\(String(describing: upload.json))")
    }

    @Test("Through a batch endpoint, a queued write answered 307 or 308 inside the batch is sent where it points, not dropped")
    func redirectedBatchItemIsDelivered() async throws {
        let setup = try await Self.setUp(batch: ("batch", 10))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.proxy.goDown()
        let tickets = try await setup.queued(
            [307, 308].map { status in
                Endpoint<Void>(.post, "redirect/\(status)", parameters: ["n": status], query: ["to": "/api/v1/journal/\(setup.stream)"])
            })
        try setup.proxy.comeUp()
        let report = await setup.queue.flush()
        #expect(report.delivered == tickets && report.rejected.isEmpty, "\(report)")
        #expect(try await setup.direct.journal(setup.stream).entries.map { $0.body["n"] } == [307, 308])
    }

    @Test(
        "A queued write whose API moved (a 301 or 302 to the same path elsewhere) is sent there as the same POST with its body; one answered by Post/Redirect/Get is delivered with the GET's answer"
    )
    func redirectedWriteStaysAWrite() async throws {
        let setup = try await Self.setUp()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let api = try #require(URLComponents(url: try OfflineTestServers.apiURL(), resolvingAgainstBaseURL: false))
        // The test API under another name: another origin, the same resource.
        let elsewhere = "http://localhost:\(api.port ?? 0)"
        setup.proxy.goDown()
        let tickets = try await setup.queued(
            [301, 302].map { status in
                Endpoint<Void>(.post, "echo", parameters: ["n": status], headers: ["X-Move-To": elsewhere, "X-Move-Status": "\(status)"])
            })
        let seeResult = Endpoint<Void>(.post, "redirect/302", parameters: ["n": 3], query: ["to": "/api/v1/echo"])
        guard case .queued(let prg) = await setup.queue.perform(seeResult, with: setup.repository) else {
            Issue.record("expected queued")
            return
        }
        try setup.proxy.comeUp()
        let report = await setup.queue.flush()
        #expect(report.delivered.count == 3)
        for (ticket, status) in zip(tickets, [301, 302]) {
            let echo = try #require(try await setup.queue.outcome(of: ticket).get().json)
            #expect(echo["method"] == "POST" && echo["json"]?["n"] == .int(status), "\(echo)")
        }
        #expect(try await setup.queue.outcome(of: prg.ticket).get().json?["method"] == "GET")
    }

    @Test("A write that would take the queue over its bytes is not kept, and the call says so; a smaller one still fits")
    func maximumBytes() async throws {
        let setup = try await Self.setUp(queuedStatusCodes: [503], maximumBytes: 4096)
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.proxy.goDown()
        let first = await setup.queue.perform(
            setup.repository.note(setup.stream, ["n": 1, "text": String(repeating: "a", count: 1000)]), with: setup.repository)
        guard case .queued = first else {
            Issue.record("expected queued, got \(first)")
            return
        }
        // Small enough alone, too large beside the first.
        let large = await setup.queue.perform(
            setup.repository.note(setup.stream, ["n": 2, "text": String(repeating: "b", count: 2000)]), with: setup.repository)
        guard case .failed(let error) = large, let full = error.customError(as: OfflineQueueFull.self),
            case .bytes(let maximum, let request) = full.limit
        else {
            Issue.record("expected offlineQueueFull for its bytes, got \(large)")
            return
        }
        #expect(maximum == 4096 && request > 2000 && request < 4096)
        #expect(full.capacity == 1000)
        #expect(error.description.contains("over its maximum of 4096 bytes"), "\(error.description)")
        #expect(error.context?.request.url.path.hasSuffix("/journal/\(setup.stream)") == true)
        let small = await setup.queue.perform(setup.repository.note(setup.stream, ["n": 3]), with: setup.repository)
        guard case .queued = small else {
            Issue.record("a small write still fits, got \(small)")
            return
        }
        #expect(setup.queue.count == 2)
        try setup.proxy.comeUp()
        let report = await setup.queue.flush()
        #expect(report.delivered.count == 2 && report.remaining == 0)
        #expect(try await setup.direct.journal(setup.stream).entries.map { $0.body["n"] } == [1, 3])
        // Alone in the queue, the same write fits.
        setup.proxy.goDown()
        let alone = await setup.queue.perform(
            setup.repository.note(setup.stream, ["n": 2, "text": String(repeating: "b", count: 2000)]), with: setup.repository)
        guard case .queued = alone else {
            Issue.record("alone it fits, got \(alone)")
            return
        }
        try setup.proxy.comeUp()
        #expect(await setup.queue.flush().delivered.count == 1)
        #expect(try await setup.direct.journal(setup.stream).entries.map { $0.body["n"] } == [1, 3, 2])
        // A 503 the queue would keep, but too large: the error still carries the server's answer.
        let refused = await setup.queue.perform(
            Endpoint<Void>(
                .post, "journal/\(setup.stream)", parameters: ["n": 4, "text": String(repeating: "c", count: 5000)],
                query: ["fail": 503]),
            with: setup.repository)
        guard case .failed(let tooLarge) = refused, tooLarge.customError(as: OfflineQueueFull.self) != nil else {
            Issue.record("expected offlineQueueFull, got \(refused)")
            return
        }
        #expect(tooLarge.context?.response?.statusCode == 503)
    }

    @Test("A 503 is kept when asked; while items wait, a new write waits behind them")
    func keptStatusesAndOrder() async throws {
        let setup = try await Self.setUp(queuedStatusCodes: [503])
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let outcome = await setup.queue.perform(
            Endpoint<Void>(.post, "journal/\(setup.stream)", parameters: ["n": 1], query: ["fail": 503]), with: setup.repository)
        guard case .queued = outcome else {
            Issue.record("a 503 must be kept, got \(outcome)")
            return
        }
        // The API is up, but an earlier write waits: this one queues behind it.
        let second = await setup.queue.perform(setup.repository.note(setup.stream, ["n": 2]), with: setup.repository)
        guard case .queued = second else {
            Issue.record("expected queued behind the first, got \(second)")
            return
        }
        #expect(setup.queue.count == 2)
    }

    @Test("A gzipped body with content digests, staged in a file the call removes, is kept by its bytes and delivered whole")
    func stagedBodyIsKeptByItsBytes() async throws {
        let setup = try await Self.setUp()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.proxy.goDown()
        let text = Data(#"{"note": "written offline"}"#.utf8)
        let endpoint = Endpoint<Void>.upload(.post, "uploads/raw", body: RequestBody.data(text).gzipped(), contentType: "application/json")
            .withContentDigests([.sha256]).withoutSession()
        guard case .queued(let queued) = await setup.queue.perform(endpoint, with: setup.repository) else {
            Issue.record("expected queued")
            return
        }
        try setup.proxy.comeUp()
        let report = await setup.queue.flush()
        #expect(report.delivered == [queued.ticket])
        let answer = try await setup.queue.outcome(of: queued.ticket).get()
        #expect(answer.statusCode == 200)
        #expect(answer.json?["content_encoding"] == "gzip")
        #expect(answer.json?["content_digest_checked"] == true)
        #expect(answer.json?["json"]?["note"] == "written offline")
    }

    @Test(
        "A 503 the queue would keep, to a request with its own Authorization: not kept, and the error carries why, the 503 and its answer")
    func ownCredentialAfterA503() async throws {
        let setup = try await Self.setUp(queuedStatusCodes: [503])
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let own = Endpoint<Void>(.post, "status/503", parameters: ["n": 1], headers: ["Authorization": "Basic YWxpY2U6czNjcmV0"])
            .withoutSession()
        let outcome = await setup.queue.perform(own, with: setup.repository)
        guard case .failed(let error) = outcome, let refusal = error.customError(as: NotQueuedOffline.self) else {
            Issue.record("expected notQueuedOffline, got \(outcome)")
            return
        }
        #expect(refusal.reason.contains("its own Authorization header"))
        #expect(refusal.failure.statusCode == 503)
        #expect(error.context?.response?.statusCode == 503)
        #expect(error.description.contains("not queued offline") && error.description.contains("503"), "\(error.description)")
        #expect(!error.description.contains("YWxpY2U6czNjcmV0"))
        #expect(setup.queue.count == 0)
    }

    @Test(
        "A queued write with no time limit cannot hold a flush for good: a server that never answers gets the repository's timeout of silence",
        .timeLimit(.minutes(1)))
    func unboundedWriteCannotHoldTheFlush() async throws {
        let fault = try OfflineTestServers.faultURL()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
        var configuration = try OfflineTestServers.configuration(fault, timeout: 2)
        configuration.idleTimeout = nil
        configuration.interceptors = [queue]
        let repository = APIRepository(configuration: configuration)
        queue.connect(repository)
        // Kept without being sent, as a write made offline is.
        let write = Endpoint<Void>(.post, "hang", parameters: ["n": 1]).withoutSession().timingOut(after: .infinity)
        _ = try await queue.enqueue(write, through: repository).get()
        let report = await queue.flush()
        #expect(report.delivered.isEmpty && report.remaining == 1, "\(report)")
        if case .timeout? = report.stoppedBy {} else { Issue.record("expected a timeout, got \(String(describing: report.stoppedBy))") }
    }

    @Test("At a flush, a 503 (the server failing for a while) keeps the write and stops there; removing it lets the rest go")
    func serverErrorAtFlushKeepsTheQueue() async throws {
        let setup = try await Self.setUp()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.proxy.goDown()
        guard
            case .queued(let failing) = await setup.queue.perform(
                Endpoint<Void>(.post, "journal/\(setup.stream)", parameters: ["n": 1], query: ["fail": 503]), with: setup.repository)
        else {
            Issue.record("expected queued")
            return
        }
        for number in 2...3 { _ = await setup.queue.perform(setup.repository.note(setup.stream, ["n": number]), with: setup.repository) }
        try setup.proxy.comeUp()
        let stopped = await setup.queue.flush()
        #expect(stopped.stoppedBy?.statusCode == 503 && stopped.remaining == 3 && stopped.rejected.isEmpty)
        #expect(try await setup.direct.journal(setup.stream).entries.isEmpty)
        #expect(await setup.queue.remove(failing.ticket))
        let report = await setup.queue.flush()
        #expect(report.delivered.count == 2 && report.remaining == 0)
        #expect(try await setup.direct.journal(setup.stream).entries.map { $0.body["n"] } == [2, 3])
    }

    @Test("Flushing through the batch endpoint; a request queued by one user is never sent with another user's token")
    func batchAndUsers() async throws {
        let reports = ReportLog()
        let setup = try await Self.setUp(batch: ("batch", 10), othersRequests: .keep, reports: reports)
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.proxy.goDown()
        for number in 1...3 { _ = await setup.queue.perform(setup.repository.note(setup.stream, ["n": number]), with: setup.repository) }
        // Another user logs in: Ann's requests wait for Ann.
        try setup.session.logout()
        try setup.session.login(user: APIUser(id: 99, name: "Other"), token: "other-token")
        try setup.proxy.comeUp()
        let other = await setup.queue.flush()
        #expect(other.delivered.isEmpty && other.remaining == 3)
        // Ann is back: one batch request delivers all three.
        try setup.session.logout()
        let login = try await setup.direct.login()
        try setup.session.login(user: login.user, token: login.token)
        let report = await setup.queue.flush()
        #expect(report.delivered.count == 3)
        let journal = try await setup.direct.journal(setup.stream)
        #expect(journal.entries.map { $0.body["n"] } == [1, 2, 3])
        #expect(journal.entries.allSatisfy { $0.userId == 1 })
        #expect(reports.last?.delivered.count == 3)
    }

    @Test("A request queued without the session is flushed in a batch request of its own, unsigned: it never runs as the user")
    func unsignedRequestsAreNotSignedByTheBatch() async throws {
        let setup = try await Self.setUp(batch: ("batch", 10))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.proxy.goDown()
        _ = await setup.queue.perform(setup.repository.note(setup.stream, ["n": 1]), with: setup.repository)
        _ = await setup.queue.perform(setup.repository.note(setup.stream, ["n": 2]).withoutSession(), with: setup.repository)
        _ = await setup.queue.perform(setup.repository.note(setup.stream, ["n": 3]), with: setup.repository)
        try setup.proxy.comeUp()
        let report = await setup.queue.flush()
        // The journal takes only signed writes: the unsigned one is answered 401, for good.
        #expect(report.delivered.count == 2 && report.rejected.count == 1)
        #expect(report.rejected.first?.error.statusCode == 401)
        #expect(try await setup.direct.journal(setup.stream).entries.map { $0.body["n"] } == [1, 3])
    }

    @Test("A route that needs no session, kept with enqueue, is flushed unsigned, as the route says")
    func enqueuedRoutesKeepTheirSessionSetting() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
        let repository = try await APIRepository.withJournalRoutes(interceptors: [queue])
        queue.connect(repository)
        let stream = UUID().uuidString
        let signed = try await queue.enqueue(
            Endpoint<Void>.route("write", pathVariables: ["stream": stream], parameters: ["n": 1]), through: repository
        ).get()
        let unsigned = try await queue.enqueue(
            Endpoint<Void>.route("publicWrite", pathVariables: ["stream": stream], parameters: ["n": 2]), through: repository
        ).get()
        let report = await queue.flush()
        #expect(report.delivered == [signed])
        // The journal takes only signed writes: the route's unsigned one is answered 401, for good.
        #expect(report.rejected.map(\.ticket) == [unsigned])
        #expect(report.rejected.first?.error.statusCode == 401)
        #expect(try await repository.journal(stream).entries.map { $0.body["n"] } == [1])
    }

    @Test("A waiter that asks for the outcome after the flush is told it with the request as it was queued (its method, its URL)")
    func resultAfterTheFlush() async throws {
        let setup = try await Self.setUp()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.proxy.goDown()
        let outcome = await setup.queue.perform(
            Endpoint<Void>(.post, "journal/\(setup.stream)", parameters: ["n": 1], query: ["fail": 422]), with: setup.repository)
        guard case .queued(let queued) = outcome else {
            Issue.record("expected queued, got \(outcome)")
            return
        }
        try setup.proxy.comeUp()
        #expect(await setup.queue.flush().rejected.count == 1)
        guard case .failure(let error) = await queued.result() else {
            Issue.record("expected the 422")
            return
        }
        #expect(error.statusCode == 422)
        #expect(error.context?.request.method == .post)
        #expect(error.context?.request.url.path.hasSuffix("journal/\(setup.stream)") == true)
    }

    @Test("When the batch request itself fails (here a 404 for the batch endpoint), no item ran, so every item stays")
    func batchCallFailureKeepsEveryItem() async throws {
        let setup = try await Self.setUp(batch: ("no-such-batch-endpoint", 10))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.proxy.goDown()
        for number in 1...3 { _ = await setup.queue.perform(setup.repository.note(setup.stream, ["n": number]), with: setup.repository) }
        try setup.proxy.comeUp()
        let report = await setup.queue.flush()
        #expect(report.delivered.isEmpty && report.rejected.isEmpty)
        #expect(report.remaining == 3 && setup.queue.count == 3)
        #expect(report.stoppedBy?.statusCode == 404)
        #expect(try await setup.direct.journal(setup.stream).entries.isEmpty)
    }

    @Test("NaN retry delays mean the defaults: a write queued by a network failure waits, nothing traps")
    func nanRetryDelays() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: .nan, maximumRetryDelay: .nan))
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "notes") { _ throws(TransportError) in throw .network(.connectionLost) }
        ])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [queue]
        let repository = APIRepository(configuration: configuration, transport: transport)
        queue.connect(repository)
        let outcome = await queue.perform(Endpoint<Void>(.post, "notes", parameters: ["n": 1]).withoutSession(), with: repository)
        guard case .queued = outcome else {
            Issue.record("expected queued, got \(outcome)")
            return
        }
        // A flush stops on the network again and plans the next retry, without a NaN wait.
        let report = await queue.flush()
        #expect(report.remaining == 1)
    }

    @Test("Every attempt of a retried write carries the same Idempotency-Key, so a server that got two counts one")
    func retriesKeepTheIdempotencyKey() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
        let answers = Mutex(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "notes") { request throws(TransportError) in
                let status = answers.withLock { count -> Int in
                    count += 1
                    return count == 1 ? 503 : 201
                }
                return TransportResponse(statusCode: status, headers: [:], body: Data(), url: request.url)
            }
        ])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [queue]
        configuration.retryPolicy = RetryPolicy(retryableMethods: [.post], baseDelay: 0)
        let repository = APIRepository(configuration: configuration, transport: transport)
        queue.connect(repository)
        let outcome = await queue.perform(Endpoint<Void>(.post, "notes", parameters: ["n": 1]).withoutSession(), with: repository)
        guard case .sent = outcome else {
            Issue.record("expected sent, got \(outcome)")
            return
        }
        let keys = transport.requests.map { $0.headers["Idempotency-Key"] }
        #expect(keys.count == 2)
        #expect(keys[0] != nil && keys[0] == keys[1])
    }

    @Test("A signed request whose session names no user is not queued: it could be sent with another user's token")
    func anonymousSessionsAreNotQueued() async throws {
        let base = try OfflineTestServers.apiURL()
        let proxy = try OutageProxy(upstreamPort: base.port ?? 0)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
        var configuration = try OfflineTestServers.configuration(base, port: proxy.port, timeout: 5)
        configuration.interceptors = [queue]
        let repository = APIRepository(configuration: configuration, sessionManager: FixedTokenSession(token: "some-token"))
        queue.connect(repository)
        proxy.goDown()
        let outcome = await queue.perform(repository.note(UUID().uuidString, ["n": 1]), with: repository)
        guard case .failed(let error) = outcome else {
            Issue.record("expected failed, got \(outcome)")
            return
        }
        #expect(error.description.contains("not queued offline"))
        let enqueued = await queue.enqueue(repository.note(UUID().uuidString, ["n": 2]), through: repository)
        guard case .failure(let refused) = enqueued else {
            Issue.record("expected enqueue to refuse, got \(enqueued)")
            return
        }
        #expect(refused.description.contains("not queued offline"))
        #expect(queue.count == 0)
    }

    @Test("A flush stops when the session changes users midway: the rest waits for its own user, unsent")
    func flushStopsWhenTheUserChanges() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
        let session = SessionManager<APIUser>()
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        let online = Mutex(false)
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "notes") { request throws(TransportError) in
                guard online.withLock({ $0 }) else { throw .network(.connectionRefused) }
                // Delivering Ann's first write, the app switches to Bob.
                try? session.logout()
                try? session.login(user: APIUser(id: 2, name: "Bob"), token: "bob-token")
                return TransportResponse(statusCode: 201, headers: [:], body: Data(), url: request.url)
            }
        ])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [queue]
        let repository = APIRepository(configuration: configuration, sessionManager: session, transport: transport)
        queue.connect(repository)
        for number in 1...3 {
            guard case .queued = await queue.perform(Endpoint<Void>(.post, "notes", parameters: ["n": number]), with: repository) else {
                Issue.record("expected queued")
                return
            }
        }
        online.withLock { $0 = true }
        let report = await queue.flush()
        #expect(report.delivered.count == 1 && report.remaining == 2)
        #expect(report.stoppedBy?.description.contains("changed users") == true)
        #expect(!transport.requests.contains { $0.headers["Authorization"] == "Bearer bob-token" })
    }

    @Test("Queued requests survive reopening the queue (a restart) and go out when the next run connects its repository")
    func restart() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stream = UUID().uuidString
        let base = try OfflineTestServers.apiURL()
        let login = try await APIRepository(configuration: try OfflineTestServers.configuration(base)).login()
        // A first run queues a write while the API is down, then ends.
        let proxy = try OutageProxy(upstreamPort: base.port ?? 0)
        proxy.goDown()
        try await {
            let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
            #expect(throws: OfflineQueueError.folderInUse(folder.path)) { try OfflineQueue(OfflineQueue.Configuration(folder: folder)) }
            var configuration = try OfflineTestServers.configuration(base, port: proxy.port, timeout: 5)
            configuration.interceptors = [queue]
            let session = SessionManager<APIUser>()
            try session.login(user: login.user, token: login.token)
            let repository = APIRepository(configuration: configuration, sessionManager: session)
            queue.connect(repository)
            _ = await queue.perform(repository.note(stream, ["n": 7]), with: repository)
            #expect(queue.count == 1)
        }()
        // A second run opens the same folder: the write is there, and goes out once the queue is connected.
        // (The first queue's last references go with its tasks' ends: wait for its lock.)
        var opened: OfflineQueue?
        for _ in 0..<3000 where opened == nil {
            opened = try? OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
            if opened == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let queue = try #require(opened)
        #expect(queue.count == 1)
        try proxy.comeUp()
        var configuration = try OfflineTestServers.configuration(base, port: proxy.port)
        configuration.interceptors = [queue]
        let session = SessionManager<APIUser>()
        try session.login(user: login.user, token: login.token)
        let repository = APIRepository(configuration: configuration, sessionManager: session)
        queue.connect(repository)
        for _ in 0..<1500 where queue.count > 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(queue.count == 0)
        #expect(try await repository.journal(stream).entries.map { $0.body["n"] } == [7])
    }
}

/// Flush reports, thread-safe.
final class ReportLog: Sendable {
    private let reports = Mutex<[FlushReport]>([])
    func record(_ report: FlushReport) { reports.withLock { $0.append(report) } }
    var last: FlushReport? { reports.withLock { $0.last } }
}

/// A session that signs with a fixed token and does not say whose it is (the protocol's default identity).
struct FixedTokenSession: SessionAuthorizing {
    let token: String
    func authorize() async throws(RepositoryError) -> SessionAuthorization? {
        SessionAuthorization(headerValue: "Bearer \(token)", version: 1)
    }
    func authorizationRejected(_ authorization: SessionAuthorization) async throws(RepositoryError) -> SessionAuthorization? { nil }
    func replayRejected(_ authorization: SessionAuthorization) async {}
}

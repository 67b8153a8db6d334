import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

@testable import NetworkingOffline

/// What a flush does with answers that are not the server's last word, over a stub transport: the
/// caller was told these requests are kept, so nothing short of a real answer may drop them.
@Suite("Offline queue flushes")
struct OfflineQueueFlushTests {
    /// A queue and a repository whose `notes` route answers with `answer` once `online` is set
    /// (before that, the network is down).
    struct Setup {
        let queue: OfflineQueue
        let repository: APIRepository
        let transport: StubTransport
        let session: SessionManager<APIUser>
        let online: Switch
        let folder: URL
    }

    /// A flag shared with the transport's answers.
    final class Switch: Sendable {
        private let state = Mutex(false)
        var isOn: Bool { state.withLock { $0 } }
        func turnOn() { state.withLock { $0 = true } }
        func turnOff() { state.withLock { $0 = false } }
    }

    static func setUp(
        batch: (path: String, limit: Int)? = nil, othersRequests: OfflineQueue.OthersRequests = .keep,
        maximumRefusals: Int? = nil, clock: NetworkingClock = .live, retryPolicy: RetryPolicy = .never,
        defaultHeaders: HTTPHeaders = [:], secretFields: Set<String> = [], onFlush: (@Sendable (FlushReport) -> Void)? = nil,
        answer: @escaping @Sendable (TransportRequest) throws(TransportError) -> TransportResponse
    ) throws -> Setup {
        let folder = try temporaryFolder()
        let queue = try OfflineQueue(
            OfflineQueue.Configuration(
                folder: folder, othersRequests: othersRequests, retryDelay: 3600, maximumRetryDelay: 86_400, batch: batch,
                maximumRefusals: maximumRefusals,
                clock: clock, onFlush: onFlush))
        let online = Switch()
        let gate = { @Sendable (request: TransportRequest) throws(TransportError) -> TransportResponse in
            guard online.isOn else { throw .network(.connectionRefused) }
            return try answer(request)
        }
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "notes", respond: gate), StubTransport.Route(.post, "batch", respond: gate),
        ])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [queue]
        configuration.retryPolicy = retryPolicy
        configuration.defaultHeaders = defaultHeaders
        configuration.secretFields = secretFields
        let session = SessionManager<APIUser>()
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        let repository = APIRepository(configuration: configuration, sessionManager: session, transport: transport)
        queue.connect(repository)
        return Setup(queue: queue, repository: repository, transport: transport, session: session, online: online, folder: folder)
    }

    /// Queues `count` notes while the network is down; their tickets.
    static func queueNotes(_ setup: Setup, count: Int, withoutSession: Bool = false) async throws -> [OfflineTicket] {
        var tickets: [OfflineTicket] = []
        for number in 1...count {
            var endpoint = Endpoint<Void>(.post, "notes", parameters: ["n": number])
            if withoutSession { endpoint = endpoint.withoutSession() }
            guard case .queued(let queued) = await setup.queue.perform(endpoint, with: setup.repository) else {
                throw QueueingFailed()
            }
            tickets.append(queued.ticket)
        }
        return tickets
    }

    struct QueueingFailed: Error {}

    static func status(_ code: Int) -> @Sendable (TransportRequest) throws(TransportError) -> TransportResponse {
        { request throws(TransportError) in TransportResponse(statusCode: code, headers: [:], body: Data(), url: request.url) }
    }

    @Test(
        "Server errors at a flush keep every request (a deploy must not empty the queue), as does a proxy that wants credentials (407: it passed nothing on)",
        arguments: [407, 425, 500, 502, 503, 504, 507, 511, 522, 599])
    func serverErrorsKeepTheQueue(status: Int) async throws {
        let setup = try Self.setUp(answer: Self.status(status))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        _ = try await Self.queueNotes(setup, count: 3)
        setup.online.turnOn()
        let sentBefore = setup.transport.requests.count
        let report = await setup.queue.flush()
        #expect(report.delivered.isEmpty && report.rejected.isEmpty && report.remaining == 3)
        #expect(report.stoppedBy?.statusCode == status)
        #expect(try OfflineJournal.liveItems(in: setup.folder).count == 3, "still on disk")
        #expect(setup.transport.requests.count == sentBefore + 1, "the flush stopped at the first")
    }

    @Test(
        "A default API key (or a field of secretFields) is not kept on disk; a flush adds the default headers again, but a default Content-Type never replaces a form's or an upload's own"
    )
    func flushKeepsTheBodysContentType() async throws {
        let setup = try Self.setUp(
            defaultHeaders: ["Content-Type": "application/json", "X-Client": "notes/2", "X-Api-Key": "k-1", "X-Tenant": "t-9"],
            secretFields: ["x-tenant"], answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        var form = MultipartFormData()
        form.append(Data("hello".utf8), name: "text")
        let upload = Endpoint<Void>.upload(.post, "notes", body: .data(Data("hi".utf8)), contentType: "text/plain")
        for endpoint in [Endpoint<Void>.upload(.post, "notes", form: form), upload] {
            guard case .queued = await setup.queue.perform(endpoint, with: setup.repository) else { throw QueueingFailed() }
        }
        let kept = try OfflineJournal.liveItems(in: setup.folder)
        #expect(kept.count == 2 && kept.allSatisfy { $0.request.headers["X-Api-Key"] == nil }, "the key stays off the disk")
        #expect(kept.allSatisfy { $0.request.headers["X-Tenant"] == nil }, "so does a secret field")
        #expect(kept.allSatisfy { $0.request.headers["X-Client"] == "notes/2" })
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.delivered.count == 2, "\(report)")
        #expect(setup.transport.requests.suffix(2).allSatisfy { $0.headers["X-Api-Key"] == "k-1" && $0.headers["X-Tenant"] == "t-9" })
        let sent = setup.transport.requests.suffix(2)
        #expect(sent.map { $0.headers.values(for: "Content-Type") } == [[form.contentType], ["text/plain"]])
        #expect(sent.allSatisfy { $0.headers["X-Client"] == "notes/2" })
    }

    @Test("A request whose URL names a user (and password) is not kept: the queue never writes a credential to disk")
    func userInURLIsRefused() async throws {
        let setup = try Self.setUp(answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let endpoint = Endpoint<Void>.post("http://ann:s3cret@files.test/notes", parameters: ["n": 1]).withoutSession()
        let outcome = await setup.queue.perform(endpoint, with: setup.repository)
        guard case .failed(let error) = outcome, let refusal = error.customError(as: NotQueuedOffline.self) else {
            Issue.record("expected notQueuedOffline, got \(outcome)")
            return
        }
        #expect(refusal.reason.contains("names a user"))
        #expect(!error.description.contains("s3cret"))
        #expect(try OfflineJournal.liveItems(in: setup.folder).isEmpty)
        guard case .failure(.invalidRequest(let reason, _)) = await setup.queue.enqueue(endpoint, through: setup.repository) else {
            Issue.record("expected enqueue to refuse it")
            return
        }
        #expect(reason.contains("names a user"))
    }

    @Test(
        "A call to another host that sets a default's credential field itself has it back at the flush, though only its name is on disk",
        arguments: [false, true])
    func ownFieldToAnotherHostIsRestored(enqueued: Bool) async throws {
        let setup = try Self.setUp(defaultHeaders: ["X-Api-Key": "k-1"], answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let partner = Endpoint<Void>.post("http://partner.test/notes", headers: ["X-Api-Key": "k-1"]).withoutSession()
        let own = Endpoint<Void>.post("notes").withoutSession()
        for endpoint in [partner, own] {
            if enqueued {
                _ = try await setup.queue.enqueue(endpoint, through: setup.repository).get()
            } else {
                let outcome = await setup.queue.perform(endpoint, with: setup.repository)
                guard case .queued = outcome else {
                    Issue.record("\(outcome)")
                    return
                }
            }
        }
        let kept = try OfflineJournal.liveItems(in: setup.folder)
        #expect(kept.count == 2 && kept.allSatisfy { $0.request.headers["X-Api-Key"] == nil })
        #expect(kept.map(\.restoredDefaults) == [["X-Api-Key"], nil])
        setup.online.turnOn()
        #expect(await setup.queue.flush().delivered.count == 2)
        let sent = setup.transport.requests.suffix(2)
        #expect(sent.map(\.url.host) == ["partner.test", "api.test"])
        #expect(sent.map { $0.headers["X-Api-Key"] } == ["k-1", "k-1"])
    }

    @Test(
        "Only a value the connected repository holds itself is restored: another repository's key never goes where its rule keeps it from")
    func restoredOnlyWithTheFlushingValue() throws {
        var flushing = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        flushing.defaultHeaders = ["X-Api-Key": "k-2"]
        let request = TransportRequest(
            method: .post, url: try #require(URL(string: "http://other.test/notes")), headers: ["X-Api-Key": "k-1"])
        let caller: HTTPHeaders = ["X-Api-Key": "k-1"]
        let other = OfflineItem.storable(request, defaults: caller, isSecret: flushing.isSecretFieldName, flushing: flushing)
        #expect(other.request.headers["X-Api-Key"] == nil && other.restoredDefaults == nil)
        flushing.defaultHeaders = caller
        let same = OfflineItem.storable(request, defaults: caller, isSecret: flushing.isSecretFieldName, flushing: flushing)
        #expect(same.request.headers["X-Api-Key"] == nil && same.restoredDefaults == ["X-Api-Key"])
        let none = OfflineItem.storable(request, defaults: caller, isSecret: flushing.isSecretFieldName, flushing: nil)
        #expect(none.restoredDefaults == nil)
    }

    @Test("A 501 or 505 at a flush (the server never will) rejects the requests, as a 400 does", arguments: [400, 501, 505])
    func lastingStatusesReject(status: Int) async throws {
        let setup = try Self.setUp(answer: Self.status(status))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        _ = try await Self.queueNotes(setup, count: 2)
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.rejected.count == 2 && report.remaining == 0, "\(report)")
    }

    @Test("The outcomes kept for later askers hold at most 8 MiB of answers: the oldest go first, the newest stays")
    func keptOutcomesAreBounded() async throws {
        // Given: a server that answers each write with a megabyte
        let megabyte = Data(count: 1024 * 1024)
        let setup = try Self.setUp { request throws(TransportError) in
            TransportResponse(statusCode: 201, headers: [:], body: megabyte, url: request.url)
        }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 12)
        // When: all twelve are delivered
        setup.online.turnOn()
        #expect(await setup.queue.flush().delivered.count == 12)
        // Then: only the last eight answers are still kept (before, all twelve — and up to 1,000)
        for ticket in tickets.prefix(4) {
            guard case .failure(let error) = await setup.queue.outcome(of: ticket) else {
                Issue.record("an outcome beyond the budget was kept")
                continue
            }
            #expect(error.description.contains("no queued request"))
        }
        for ticket in tickets.suffix(8) {
            #expect(try await setup.queue.outcome(of: ticket).get().body.count == megabyte.count)
        }
    }

    @Test("A flush sends each request once, under a configuration that retries: the queue's timer tries again")
    func flushSendsOnce() async throws {
        let setup = try Self.setUp(
            retryPolicy: RetryPolicy(retryableMethods: [.post], retriesConnectionFailures: true, baseDelay: 0), answer: Self.status(503))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        _ = try await Self.queueNotes(setup, count: 1)
        let sentBefore = setup.transport.requests.count
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.stoppedBy?.statusCode == 503)
        #expect(report.remaining == 1)
        #expect(setup.transport.requests.count == sentBefore + 1)
    }

    @Test("With a manual test clock, the queue's retry timer sends the requests when the test moves the time past its delay")
    func retryTimerOnAManualClock() async throws {
        let clock = TestClock(mode: .manual)
        let setup = try Self.setUp(clock: clock.networkingClock, answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 2)
        setup.online.turnOn()
        #expect(await clock.waitForSleeps())
        #expect(clock.sleeps.last == .seconds(3600))
        clock.advance(by: 3599)
        #expect(setup.queue.count == 2, "not before its delay")
        clock.advance(by: 1)
        for ticket in tickets {
            #expect(try await setup.queue.outcome(of: ticket).get().statusCode == 201)
        }
        #expect(setup.queue.count == 0)
    }

    @Test("A queued call's error reads as one sentence: the request once, that it was kept and why, a full stop")
    func queuedDescription() async throws {
        let setup = try Self.setUp(answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let kept = await setup.repository.performRequest(Endpoint<Void>(.post, "notes", parameters: ["n": 1]).queueingOffline())
        guard case .failure(let keptError) = kept else {
            Issue.record("expected the call to be queued")
            return
        }
        let description = keptError.description
        #expect(description.hasSuffix("to be sent later: the connection was refused."), "\(description)")
        #expect(description.components(separatedBy: "api.test/notes").count == 2, "\(description)")
        // Not kept (its own credential): the refusal says why the call was not sent now, once.
        var own = Endpoint<Void>(.post, "notes", parameters: ["n": 2]).queueingOffline()
        own.headers["Authorization"] = "Bearer other"
        guard case .failure(let refusal) = await setup.repository.performRequest(own) else {
            Issue.record("expected the call to be refused")
            return
        }
        let refused = refusal.description
        #expect(refused.hasSuffix("which the queue never writes to disk, and earlier requests wait to be sent."), "\(refused)")
        #expect(!refused.contains(".."), "\(refused)")
    }

    @Test("A proxy that will not open the way to the server (proxyRefused: 403, 407) keeps the requests at a flush", arguments: [403, 407])
    func proxyRefusalKeepsTheQueue(status: Int) async throws {
        let setup = try Self.setUp { _ throws(TransportError) in throw .network(.proxyRefused(status: status)) }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        _ = try await Self.queueNotes(setup, count: 2)
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.rejected.isEmpty && report.remaining == 2)
    }

    @Test("A TLS failure at a flush (another certificate: a captive portal) keeps the requests")
    func tlsFailureKeepsTheQueue() async throws {
        let setup = try Self.setUp { _ throws(TransportError) in throw .tls(.untrustedCertificate("self-signed")) }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        _ = try await Self.queueNotes(setup, count: 2)
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.rejected.isEmpty && report.remaining == 2)
    }

    @Test("A configuration made invalid since the requests were queued (a pin file it cannot read) keeps them")
    func invalidConfigurationKeepsTheQueue() async throws {
        let setup = try Self.setUp(answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        _ = try await Self.queueNotes(setup, count: 2)
        // The app's next version pins, with a file it cannot read.
        var configuration = setup.repository.configuration
        configuration.usePinningCertificate = true
        configuration.pinnedCertificateFiles = [URL(fileURLWithPath: "/nonexistent/pin.pem")]
        // Held here: the queue holds its repository weakly.
        let pinning = APIRepository(configuration: configuration, sessionManager: setup.session, transport: setup.transport)
        setup.queue.connect(pinning)
        setup.online.turnOn()
        let sentBefore = setup.transport.requests.count
        let report = await setup.queue.flush()
        #expect(report.rejected.isEmpty && report.delivered.isEmpty && report.remaining == 2, "\(report)")
        #expect(setup.transport.requests.count == sentBefore)
        // Once the configuration works again, they go.
        setup.queue.connect(setup.repository)
        #expect(await setup.queue.flush().delivered.count == 2)
    }

    @Test("A request the server keeps refusing can be removed: its waiter hears so, and the ones behind it go")
    func removeATicket() async throws {
        let refused = Mutex(true)
        let setup = try Self.setUp { request throws(TransportError) in
            let conflict = refused.withLock { first in
                defer { first = false }
                return first
            }
            return TransportResponse(statusCode: conflict ? 409 : 201, headers: [:], body: Data(), url: request.url)
        }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 3)
        setup.online.turnOn()
        let stopped = await setup.queue.flush()
        #expect(stopped.stoppedBy?.statusCode == 409 && stopped.remaining == 3)
        let waiter = Task { await setup.queue.outcome(of: tickets[0]) }
        #expect(await setup.queue.remove(tickets[0]))
        #expect(!(await setup.queue.remove(tickets[0])), "removed once")
        guard case .failure(.cancelled(let context?)) = await waiter.value, context.request.method == .post else {
            Issue.record("the waiter must hear the removal, naming the request")
            return
        }
        #expect(try OfflineJournal.liveItems(in: setup.folder).map(\.id) == tickets.dropFirst().map(\.id))
        let report = await setup.queue.flush()
        #expect(report.delivered == Array(tickets.dropFirst()) && report.remaining == 0)
    }

    @Test("Cancelling a task that waits for a queued request's outcome ends the wait; the request stays queued")
    func cancelledWaitEnds() async throws {
        let setup = try Self.setUp(answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 1)
        let waiter = Task { await setup.queue.outcome(of: tickets[0]) }
        try await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        let outcome = await waiter.value(within: .seconds(60))
        guard case .failure(.cancelled) = outcome else {
            Issue.record("expected cancelled, got \(outcome)")
            return
        }
        #expect(setup.queue.count == 1)
        setup.online.turnOn()
        #expect(await setup.queue.flush().delivered == tickets)
    }

    @Test("With .discard, nobody logged in is not another user: a flush then keeps the last user's requests")
    func discardKeepsRequestsWhileLoggedOut() async throws {
        let setup = try Self.setUp(othersRequests: .discard, answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 2)
        try setup.session.logout()
        setup.online.turnOn()
        _ = await setup.queue.flush()
        #expect(setup.queue.count == 2)
        try setup.session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        #expect(await setup.queue.flush().delivered == tickets)
    }

    @Test("A batch answer that does not fit (not an array, the wrong count) fails the batch as a whole: every request stays")
    func malformedBatchAnswerKeepsEveryItem() async throws {
        for body in [#"<html>proxy error</html>"#, #"[{"code": 201}]"#, #"{"ok": true}"#] {
            let setup = try Self.setUp(batch: ("batch", 10)) { request throws(TransportError) in
                TransportResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8), url: request.url)
            }
            defer { try? FileManager.default.removeItem(at: setup.folder) }
            _ = try await Self.queueNotes(setup, count: 3)
            setup.online.turnOn()
            let report = await setup.queue.flush()
            #expect(report.delivered.isEmpty && report.rejected.isEmpty && report.remaining == 3, "answer: \(body)")
            guard case .invalidResponse? = report.stoppedBy else {
                Issue.record("expected invalidResponse, got \(String(describing: report.stoppedBy))")
                continue
            }
            // The batch client says so the same way: the batch call failed, not its items.
            var batch = Batch()
            batch.add(Endpoint<Void>.post("notes"))
            batch.add(Endpoint<Void>.post("notes"))
            guard case .failure(.invalidResponse) = await BatchClient(repository: setup.repository).send(batch) else {
                Issue.record("expected the batch call to fail with invalidResponse")
                continue
            }
        }
    }

    @Test("A batch of requests that need no session goes unsigned, so it is sent while nobody is logged in")
    func unsignedBatchWhileLoggedOut() async throws {
        let setup = try Self.setUp(batch: ("batch", 10)) { request throws(TransportError) in
            TransportResponse(
                statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(#"[{"code": 201}, {"code": 201}]"#.utf8),
                url: request.url)
        }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        try setup.session.logout()
        let tickets = try await Self.queueNotes(setup, count: 2, withoutSession: true)
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.delivered == tickets)
        let batch = try #require(setup.transport.requests.last { $0.url.path.hasSuffix("batch") })
        #expect(batch.headers["Authorization"] == nil)
    }

    /// The item counts of the batch requests sent, in order.
    final class Sizes: Sendable {
        private let state = Mutex<[Int]>([])
        var all: [Int] { state.withLock { $0 } }
        func append(_ count: Int) { state.withLock { $0.append(count) } }
    }

    /// The number of items in a batch request's body (0 when it has none).
    static func itemCount(_ request: TransportRequest) -> Int {
        guard let data = request.body?.inMemoryData, case .array(let items)? = try? JSONValue(parsing: data)["batch"] else { return 0 }
        return items.count
    }

    /// A batch endpoint that refuses batches of more than `most` items with 413, and answers
    /// smaller ones with `answer(n)` for its n-th such request (1 first).
    static func tooLarge(
        over most: Int, sizes: Sizes, answer: @escaping @Sendable (Int, Int) -> Int = { _, _ in 201 }
    ) -> @Sendable (TransportRequest) throws(TransportError) -> TransportResponse {
        let answered = Mutex(0)
        return { request throws(TransportError) in
            let count = itemCount(request)
            sizes.append(count)
            guard count <= most else { return TransportResponse(statusCode: 413, headers: [:], body: Data(), url: request.url) }
            let number = answered.withLock { count -> Int in
                count += 1
                return count
            }
            let status = answer(number, count)
            guard status == 201 else { return TransportResponse(statusCode: status, headers: [:], body: Data(), url: request.url) }
            let items = Array(repeating: #"{"code": 201}"#, count: count).joined(separator: ", ")
            return TransportResponse(
                statusCode: 200, headers: ["Content-Type": "application/json"], body: Data("[\(items)]".utf8), url: request.url)
        }
    }

    @Test("A batch refused as too large (413) goes again in halves, and the flush keeps the smaller size: every request is delivered once")
    func tooLargeBatchesAreHalved() async throws {
        let sizes = Sizes()
        let setup = try Self.setUp(batch: ("batch", 10), answer: Self.tooLarge(over: 2, sizes: sizes))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 6)
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.delivered == tickets && report.remaining == 0)
        #expect(sizes.all == [6, 3, 1, 1, 1, 1, 1, 1])
    }

    @Test("After a 413 split, a smaller batch that fails (a 503) keeps its requests queued; the delivered ones are done")
    func failureAfterASplitKeepsTheRest() async throws {
        let sizes = Sizes()
        let setup = try Self.setUp(
            batch: ("batch", 10), answer: Self.tooLarge(over: 2, sizes: sizes, answer: { number, _ in number == 1 ? 201 : 503 }))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 4)
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.delivered == Array(tickets[0..<2]))
        #expect(report.rejected.isEmpty && report.remaining == 2)
        #expect(report.stoppedBy?.statusCode == 503)
        #expect(sizes.all == [4, 2, 2])
    }

    @Test("A request refused as too large on its own counts a refusal for itself only, not for the requests after it")
    func tooLargeAloneCountsForItself() async throws {
        let sizes = Sizes()
        let setup = try Self.setUp(batch: ("batch", 10), maximumRefusals: 1, answer: Self.tooLarge(over: 0, sizes: sizes))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 3)
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.rejected.map(\.ticket) == [tickets[0]])
        #expect(report.remaining == 2)
        #expect(sizes.all == [3, 1])
    }

    @Test("Batch items the server answered after a kept one are done: the next flush sends only the kept one")
    func batchItemsAfterAKeptOneAreDone() async throws {
        let batches = Mutex(0)
        let setup = try Self.setUp(batch: ("batch", 10)) { request throws(TransportError) in
            let number = batches.withLock { count -> Int in
                count += 1
                return count
            }
            let body = number == 1 ? #"[{"code": 503}, {"code": 201}, {"code": 201}]"# : #"[{"code": 201}]"#
            return TransportResponse(
                statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8), url: request.url)
        }
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 3)
        setup.online.turnOn()
        let first = await setup.queue.flush()
        #expect(first.delivered == Array(tickets[1...]))
        #expect(first.stoppedBy?.statusCode == 503)
        #expect(first.remaining == 1)
        #expect(try OfflineJournal.liveItems(in: setup.folder).count == 1)
        let second = await setup.queue.flush()
        #expect(second.delivered == [tickets[0]])
        let lastBatch = try #require(setup.transport.requests.last { $0.url.path.hasSuffix("batch") })
        let data = try #require(lastBatch.body?.inMemoryData)
        guard case .array(let items)? = try JSONValue(parsing: data)["batch"] else {
            Issue.record("expected a batch array")
            return
        }
        #expect(items.count == 1, "only the kept request is sent again")
    }

    @Test("A request answered with a kept status maximumRefusals times is given up with that answer; network failures never count")
    func refusalLimit() async throws {
        let refusing = Mutex(false)
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600, maximumRefusals: 3))
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "notes") { request throws(TransportError) in
                guard refusing.withLock({ $0 }) else { throw .network(.connectionRefused) }
                return TransportResponse(statusCode: 503, headers: [:], body: Data(), url: request.url)
            }
        ])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [queue]
        let repository = APIRepository(configuration: configuration, transport: transport)
        queue.connect(repository)
        guard case .queued(let queued) = await queue.perform(Endpoint<Void>(.post, "notes").withoutSession(), with: repository) else {
            Issue.record("expected the request to be queued")
            return
        }
        // Offline: however many flushes, nothing is given up
        for _ in 1...5 { _ = await queue.flush() }
        #expect(queue.count == 1)
        // The server refuses: kept twice, given up the third time
        refusing.withLock { $0 = true }
        #expect(await queue.flush().remaining == 1)
        #expect(await queue.flush().remaining == 1)
        let last = await queue.flush()
        #expect(last.remaining == 0)
        #expect(last.rejected.map(\.ticket) == [queued.ticket])
        #expect(last.rejected.first?.error.statusCode == 503)
        guard case .failure(let error) = await queued.result() else {
            Issue.record("expected the waiter to hear the refusal")
            return
        }
        #expect(error.statusCode == 503)
        #expect(try OfflineJournal.liveItems(in: folder).isEmpty)
    }

    @Test("A 401 to a request sent without the session is its answer for good")
    func unsignedUnauthorizedIsFinal() async throws {
        let setup = try Self.setUp(answer: Self.status(401))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 1, withoutSession: true)
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.rejected.map(\.ticket) == tickets)
        #expect(report.remaining == 0)
    }

    @Test("A write without a time limit (timeout .infinity: a route's \"timeout\": false) is kept, and sent without one")
    func writeWithoutTimeLimitIsKept() async throws {
        let setup = try Self.setUp(answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let endpoint = Endpoint<Void>(.post, "notes", parameters: ["n": 1], timeout: .infinity)
        guard case .queued(let queued) = await setup.queue.perform(endpoint, with: setup.repository) else {
            Issue.record("expected the write to be kept")
            return
        }
        #expect(try OfflineJournal.liveItems(in: setup.folder).map(\.request.timeout) == [.infinity])
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.delivered == [queued.ticket])
        #expect(setup.transport.requests.last?.timeout == .infinity)
    }

    @Test("A write made through a repository without a session is kept unsigned: a flush never signs it with the user's token")
    func sessionlessRepositoryStaysUnsigned() async throws {
        let setup = try Self.setUp(answer: Self.status(401))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [setup.queue]
        let bare = APIRepository(configuration: configuration, transport: setup.transport)
        guard case .queued(let queued) = await setup.queue.perform(Endpoint<Void>(.post, "notes", parameters: ["n": 1]), with: bare),
            case .success(let enqueued) = await setup.queue.enqueue(Endpoint<Void>(.post, "notes", parameters: ["n": 2]), through: bare)
        else {
            Issue.record("expected both writes to be kept")
            return
        }
        #expect(try OfflineJournal.liveItems(in: setup.folder).map(\.requiresSession) == [false, false])
        setup.online.turnOn()
        // Through the queue's own repository, which has Ann's session.
        let report = await setup.queue.flush()
        let flushed = setup.transport.requests.suffix(2)
        #expect(flushed.count == 2 && flushed.allSatisfy { $0.headers["Authorization"] == nil })
        #expect(report.rejected.map(\.ticket) == [queued.ticket, enqueued], "a 401 is the answer for good, never a retry")
        #expect(report.remaining == 0)
    }

    @Test("A request with an Authorization of its own is not queued (it would be sent without it); the default header's is")
    func ownCredentialIsNotQueued() async throws {
        let setup = try Self.setUp(answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let own = Endpoint<Void>(.post, "notes", headers: ["Authorization": "Basic YWxpY2U6czNjcmV0"]).withoutSession()
        guard case .failed(let error) = await setup.queue.perform(own, with: setup.repository),
            let refusal = error.customError(as: NotQueuedOffline.self)
        else {
            Issue.record("expected notQueuedOffline")
            return
        }
        #expect(refusal.reason.contains("Authorization"))
        #expect(refusal.failure.isConnectivityFailure)
        #expect(!error.description.contains("YWxpY2U6czNjcmV0"))
        guard case .failure(.invalidRequest(let reason, _)) = await setup.queue.enqueue(own, through: setup.repository) else {
            Issue.record("expected enqueue to refuse it too")
            return
        }
        #expect(reason.contains("not queued offline") && reason.contains("Authorization"))
        #expect(setup.queue.count == 0)
    }

    @Test("By default a server failing for a long while (15 flushes of 503) makes the queue drop nothing")
    func longOutageLosesNothing() async throws {
        let setup = try Self.setUp(answer: Self.status(503))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        _ = try await Self.queueNotes(setup, count: 2)
        setup.online.turnOn()
        for _ in 1...15 { _ = await setup.queue.flush() }
        #expect(setup.queue.count == 2)
        #expect(try OfflineJournal.liveItems(in: setup.folder).count == 2)
    }

    @Test(
        "A journal that cannot record a delivery stops the flush: nothing more goes until the record is written, then the rest, each once")
    func aJournalThatCannotRecordStopsTheFlush() async throws {
        let setup = try Self.setUp(answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 3)
        setup.online.turnOn()
        setup.queue.journal.simulateWriteFailure(.noSpace("No space left on device (simulated)"))
        let broken = await setup.queue.flush()
        #expect(broken.delivered == [tickets[0]])
        #expect(broken.storageFailure == .noSpace("No space left on device (simulated)"))
        #expect(broken.remaining == 2)
        // Still on disk: a restart now would send it again, under its Idempotency-Key.
        #expect(try OfflineJournal.liveItems(in: setup.folder).count == 3)
        // While the journal fails, a flush sends nothing.
        let sent = setup.transport.requests.count
        let waiting = await setup.queue.flush()
        #expect(waiting.storageFailure != nil && waiting.delivered.isEmpty && waiting.remaining == 2)
        #expect(setup.transport.requests.count == sent)
        // Repaired: the owed record first, then the rest.
        setup.queue.journal.simulateWriteFailure(nil)
        let repaired = await setup.queue.flush()
        #expect(repaired.delivered == Array(tickets[1...]))
        #expect(repaired.storageFailure == nil)
        #expect(try OfflineJournal.liveItems(in: setup.folder).isEmpty)
        #expect(setup.transport.requests.count == sent + 2)
    }

    @Test("A kept write naming cached routes to invalidate is delivered through a repository with no response cache: nothing asks for one")
    func invalidatedRoutesNeedNoCache() async throws {
        let setup = try Self.setUp(answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let endpoint = Endpoint<Void>(.post, "notes", parameters: ["n": 1])
            .with(RouteCacheSettingsKey.self, RouteCacheSettings(invalidatesRouteNames: ["notes"]))
        let ticket = try await setup.queue.enqueue(endpoint, through: setup.repository).get()
        #expect(try OfflineJournal.liveItems(in: setup.folder).first?.invalidatesRouteNames == ["notes"])
        setup.online.turnOn()
        let report = await setup.queue.flush()
        #expect(report.delivered == [ticket])
    }

    @Test(
        "Before a repository is connected, enqueue takes a write signed by its own repository's default credential, and the flush sends it again"
    )
    func defaultCredentialBeforeConnecting() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
        let transport = StubTransport(routes: [StubTransport.Route(.post, "notes", respond: Self.status(201))])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [queue]
        configuration.defaultHeaders["Authorization"] = "Key k"
        let repository = APIRepository(configuration: configuration, transport: transport)
        let endpoint = Endpoint<Void>(.post, "notes", parameters: ["n": 1]).withoutSession()
        let ticket = try await queue.enqueue(endpoint, through: repository).get()
        // A header of its own is still refused, and says why.
        var ownCookie = endpoint
        ownCookie.headers["Cookie"] = "c=1"
        guard case .failure(.invalidRequest(let reason, _)) = await queue.enqueue(ownCookie, through: repository) else {
            Issue.record("expected a request with its own Cookie to be refused")
            return
        }
        #expect(reason.contains("its own Cookie header"))
        queue.connect(repository)
        let report = await queue.flush()
        #expect(report.delivered == [ticket])
        #expect(transport.requests.last?.headers["Authorization"] == "Key k")
    }

    @Test(
        "With no repository connected, a call kept by the queue leaves its repository's default API key and secret fields off the disk; the flush adds them again"
    )
    func defaultKeyWithoutConnection() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
        let online = Switch()
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "notes") { _ throws(TransportError) in
                guard online.isOn else { throw .network(.connectionRefused) }
                return TransportResponse(statusCode: 201)
            }
        ])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [queue]
        configuration.defaultHeaders = ["X-Api-Key": "k-1", "X-Tenant": "t-9", "X-Client": "notes/2"]
        configuration.secretFields = ["x-tenant"]
        let repository = APIRepository(configuration: configuration, transport: transport)
        var endpoint = Endpoint<Void>(.post, "notes", parameters: ["n": 1]).withoutSession().queueingOffline()
        endpoint.headers["X-CSRF-Token"] = "own"
        let result = await repository.performRequest(endpoint)
        guard case .failure(let error) = result, let queued = error.customError(as: QueuedOffline.self) else {
            Issue.record("expected queuedOffline, got \(result)")
            return
        }
        let kept = try #require(try OfflineJournal.liveItems(in: folder).first)
        #expect(kept.request.headers["X-Api-Key"] == nil && kept.request.headers["X-Tenant"] == nil, "the defaults stay off the disk")
        #expect(kept.request.headers["X-Client"] == "notes/2")
        #expect(kept.request.headers["X-CSRF-Token"] == "own", "a field of the call's own is kept as sent")
        online.turnOn()
        queue.connect(repository)
        let report = await queue.flush()
        #expect(report.delivered == [queued.ticket])
        #expect(transport.requests.last?.headers["X-Api-Key"] == "k-1" && transport.requests.last?.headers["X-Tenant"] == "t-9")
    }

    @Test("A write the journal cannot keep (a full disk) is not queued, and its caller hears why: the call and enqueue alike")
    func unwritableRequestSaysWhy() async throws {
        let setup = try Self.setUp(answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let full = OfflineQueueError.noSpace("No space left on device (simulated)")
        setup.queue.journal.simulateWriteFailure(full)
        let endpoint = Endpoint<Void>(.post, "notes", parameters: ["n": 1])
        guard case .failed(let error) = await setup.queue.perform(endpoint, with: setup.repository),
            let refusal = error.customError(as: NotQueuedOffline.self)
        else {
            Issue.record("expected notQueuedOffline")
            return
        }
        #expect(refusal.storageFailure == full)
        #expect(refusal.failure.isConnectivityFailure, "the call's own failure stays")
        #expect(error.description.contains("No space left on device"))
        guard case .failure(let refused) = await setup.queue.enqueue(endpoint, through: setup.repository) else {
            Issue.record("expected enqueue to fail")
            return
        }
        #expect(refused.customError(as: OfflineQueueError.self) == full)
        #expect(refused.description.contains("not queued offline: No space left on device"))
        #expect(setup.queue.count == 0)
        #expect(try OfflineJournal.liveItems(in: setup.folder).isEmpty)
    }

    @Test("A write over the journal's record size is refused as the queue's own refusal, not reported as a failing disk")
    func oversizedRequestIsNotAStorageFailure() async throws {
        let setup = try Self.setUp(answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        // 50 MiB, kept as Base64 in a record over the journal's 64 MiB.
        let endpoint = Endpoint<Void>(.post, "notes").uploading(.data(Data(count: 50 * 1024 * 1024)))
        guard case .failed(let error) = await setup.queue.perform(endpoint, with: setup.repository),
            let refusal = error.customError(as: NotQueuedOffline.self)
        else {
            Issue.record("expected notQueuedOffline")
            return
        }
        #expect(refusal.storageFailure == nil && refusal.reason.contains("too large"))
        guard case .failure(.invalidRequest(let reason, _)) = await setup.queue.enqueue(endpoint, through: setup.repository) else {
            Issue.record("expected enqueue to refuse it")
            return
        }
        #expect(reason.contains("not queued offline") && reason.contains("too large"))
    }

    @Test("Requests discarded while the journal cannot record it are recorded at the next flush, before anything is sent")
    func discardedWhileTheJournalFails() async throws {
        let setup = try Self.setUp(othersRequests: .discard, answer: Self.status(201))
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let tickets = try await Self.queueNotes(setup, count: 2)
        try setup.session.logout()
        try setup.session.login(user: APIUser(id: 2, name: "Bob"), token: "bob-token")
        setup.online.turnOn()
        setup.queue.journal.simulateWriteFailure(.noSpace("No space left on device (simulated)"))
        let broken = await setup.queue.flush()
        #expect(broken.discarded == tickets)
        #expect(broken.storageFailure != nil)
        #expect(try OfflineJournal.liveItems(in: setup.folder).count == 2)
        setup.queue.journal.simulateWriteFailure(nil)
        let repaired = await setup.queue.flush()
        #expect(repaired.storageFailure == nil)
        #expect(try OfflineJournal.liveItems(in: setup.folder).isEmpty)
    }

    @Test("Writes queued at the same moment are kept on disk in the order the queue gave them, so a restart keeps that order")
    func racingStoresKeepTheirOrderOnDisk() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var pending: [OfflineTicket] = []
        do {
            let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
            let configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
            let repository = APIRepository(configuration: configuration, transport: StubTransport(routes: []))
            for round in 0..<10 {
                await withTaskGroup(of: Void.self) { group in
                    for number in 0..<50 {
                        let note = Endpoint<Void>(.post, "notes", parameters: ["n": round * 50 + number]).withoutSession()
                        group.addTask { _ = await queue.enqueue(note, through: repository) }
                    }
                }
            }
            pending = queue.pending
            #expect(pending.count == 500)
            #expect(try OfflineJournal.liveItems(in: folder).map { OfflineTicket(id: $0.id) } == pending)
        }
        #expect(try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600)).pending == pending)
    }

    @Test("A queue whose repository was released stops each flush with a reason instead of silently, until another is connected")
    func aReleasedRepositoryStopsTheFlushOutLoud() async throws {
        // Given: three requests queued offline through a repository the app then lets go
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let reports = Mutex<[FlushReport]>([])
        var settings = OfflineQueue.Configuration(folder: folder, retryDelay: 3600)
        settings.onFlush = { report in reports.withLock { $0.append(report) } }
        let queue = try OfflineQueue(settings)
        let online = Switch()
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "notes") { request throws(TransportError) in
                guard online.isOn else { throw .network(.connectionRefused) }
                return TransportResponse(statusCode: 201, headers: [:], body: Data(), url: request.url)
            }
        ])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [queue]
        let note = Endpoint<Void>(.post, "notes").withoutSession()
        do {
            let repository = APIRepository(configuration: configuration, transport: transport)
            queue.connect(repository)
            for _ in 0..<3 { _ = await queue.perform(note, with: repository) }
        }
        #expect(queue.count == 3)
        reports.withLock { $0.removeAll() }
        // When: the network is back
        online.turnOn()
        let stopped = await queue.flush()
        // Then: nothing is sent, and the flush says why
        guard case .invalidConfiguration(let reason)? = stopped.stoppedBy else {
            Issue.record("expected invalidConfiguration, got \(String(describing: stopped.stoppedBy))")
            return
        }
        #expect(reason.contains("connect"))
        #expect(stopped.remaining == 3)
        #expect(reports.withLock { $0.count } == 1)
        #expect(try OfflineJournal.liveItems(in: folder).count == 3)
        // Through a repository connected again, the next flush sends them
        let again = APIRepository(configuration: configuration, transport: transport)
        queue.connect(again)
        #expect(await queue.flush().delivered.count == 3)
        #expect(queue.count == 0)
    }

    @Test("A request queued while a flush runs goes right after it, not after the retry delay (an hour here)")
    func queuedDuringAFlushGoesAtOnce() async throws {
        // Given: one request queued offline; once online, the first send is held until released
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, retryDelay: 3600))
        let online = Switch()
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let first = Mutex(true)
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "notes") { request throws(TransportError) in
                guard online.isOn else { throw .network(.connectionRefused) }
                if first.withLock({ isFirst in
                    defer { isFirst = false }
                    return isFirst
                }) {
                    for await _ in released { break }
                }
                return TransportResponse(statusCode: 201, headers: [:], body: Data(), url: request.url)
            }
        ])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [queue]
        let repository = APIRepository(configuration: configuration, transport: transport)
        queue.connect(repository)
        let note = Endpoint<Void>(.post, "notes").withoutSession()
        guard case .queued = await queue.perform(note, with: repository) else {
            Issue.record("expected the request to be queued")
            return
        }
        // When: a flush holds the first request, and another one is queued meanwhile
        online.turnOn()
        let flushing = Task { await queue.flush() }
        while transport.requests.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        let second = await queue.enqueue(note, through: repository)
        #expect(throws: Never.self) { try second.get() }
        release.yield()
        _ = await flushing.value
        // Then: the second goes without waiting for the hour
        for _ in 0..<500 where queue.count > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(queue.count == 0)
        #expect(transport.requests.count == 3)
    }
}

import Foundation
import NetworkingTestSupport
import Synchronization
import Testing

@testable import Networking

/// The event sequence's lifecycle over a stub transport, whose answers are scripted one per
/// request: when it ends, reconnects, gives up or fails. The reconnection waits go to a test
/// clock, so nothing sleeps. The same behaviours against the test API's real streams are in
/// `ServerSentEventsIntegrationTests`.
@Suite("Server-sent event streams")
struct ServerSentEventsTests {
    /// One scripted answer.
    enum Answer: Sendable {
        /// Events, after the server thought for `after`.
        case events(String, after: Duration = .zero)
        case status(Int, contentType: String = "text/event-stream")
        /// A status with a `Retry-After` of so many seconds.
        case retryAfter(Int, seconds: Int)
        case failure(TransportError)
    }

    /// A repository whose `events` route answers `answers` in order (the last one from then on),
    /// the transport (for its requests) and the clock (for its waits).
    /// `onRequest` sees each request's index before it is answered.
    func repository(
        _ answers: [Answer], clock live: Bool = false, customErrors: CustomErrorMapping = [],
        session: SessionManager<TestAPI.User>? = nil, interceptors: [any Interceptor] = [], routes: RouteTable? = nil,
        defaultHeaders: HTTPHeaders = [:], random: Double? = nil,
        onRequest: @escaping @Sendable (Int) -> Void = { _ in }
    ) throws -> (TestAPI.Repository, StubTransport, TestClock) {
        let next = Mutex(0)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "events") { request throws(TransportError) in
                let index = next.withLock { index in
                    defer { index += 1 }
                    return index
                }
                onRequest(index)
                switch answers[min(index, answers.count - 1)] {
                case .events(let text, let wait):
                    if wait > .zero { try? await Task.sleep(for: wait) }
                    return TransportResponse(
                        statusCode: 200, headers: ["Content-Type": "text/event-stream; charset=utf-8"], body: Data(text.utf8),
                        url: request.url)
                case .status(let status, let type):
                    return TransportResponse(statusCode: status, headers: ["Content-Type": type], url: request.url)
                case .retryAfter(let status, let seconds):
                    return TransportResponse(statusCode: status, headers: ["Retry-After": String(seconds)], url: request.url)
                case .failure(let error):
                    throw error
                }
            }
        ])
        let clock = TestClock()
        var configuration = try NetworkingConfiguration(baseURL: "http://127.0.0.1:9/api")
        configuration.clock = live ? .live : clock.networkingClock
        configuration.interceptors = interceptors
        configuration.defaultHeaders = defaultHeaders
        if let random { configuration.retryPolicy.random = { random } }
        if let routes { configuration.routes = routes }
        let repository = TestAPI.Repository(
            configuration: configuration, sessionManager: session, transport: transport, customErrors: customErrors)
        return (repository, transport, clock)
    }

    let endpoint = Endpoint<ServerSentEvents>.get("events").withoutSession()

    @Test("Without reconnection the sequence ends with the body; the request asks for an event stream, uncached, without a timeout")
    func endsWithTheBody() async throws {
        let (repository, transport, clock) = try repository([.events("id: 1\ndata: a\n\ndata: b\n\ndata: cut")])
        let (events, error) = await readAll(try await repository.performRequest(endpoint).get())
        #expect(events == [ServerSentEvent(data: "a", id: "1"), ServerSentEvent(data: "b", id: "1")])
        #expect(error == nil)
        #expect(transport.requests.count == 1)
        let request = try #require(transport.requests.first)
        #expect(request.headers["Accept"] == "text/event-stream")
        #expect(request.headers["Cache-Control"] == "no-store")
        #expect(request.headers["Last-Event-ID"] == nil)
        #expect(request.timeout > 1e9)
        #expect(clock.sleeps.isEmpty)
    }

    @Test("The configuration's default headers never replace the stream's Accept and Cache-Control; the others are sent")
    func defaultHeadersKeepTheStreamsOwn() async throws {
        let (repository, transport, _) = try repository(
            [.events("data: a\n\n")],
            defaultHeaders: ["Accept": "application/json", "Cache-Control": "max-age=60", "Last-Event-ID": "stale", "X-App": "1"])
        let (events, error) = await readAll(try await repository.performRequest(endpoint).get())
        #expect(events.map(\.data) == ["a"] && error == nil)
        let request = try #require(transport.requests.first)
        #expect(request.headers["Accept"] == "text/event-stream")
        #expect(request.headers["Cache-Control"] == "no-store")
        #expect(request.headers["Last-Event-ID"] == nil)
        #expect(request.headers["X-App"] == "1")
    }

    @Test("An endpoint's own Accept is kept")
    func ownAccept() async throws {
        let (repository, transport, _) = try repository([.events("data: a\n\n")])
        var custom = endpoint
        custom.headers["Accept"] = "text/event-stream, application/json;q=0.5"
        _ = await readAll(try await repository.performRequest(custom).get())
        #expect(transport.requests.first?.headers["Accept"] == "text/event-stream, application/json;q=0.5")
    }

    @Test("Reconnecting: each connection resumes with Last-Event-ID after the server's retry time; a 204 ends the sequence")
    func reconnectsUntil204() async throws {
        let (repository, transport, clock) = try repository([
            .events("retry: 250\nid: 1\ndata: a\n\n"), .events("id: 2\ndata: b\n\n"), .status(204, contentType: ""),
        ])
        let (events, error) = await readAll(try await repository.performRequest(endpoint.reconnecting(after: .seconds(9))).get())
        #expect(events.map(\.data) == ["a", "b"])
        #expect(error == nil)
        #expect(transport.requests.map { $0.headers["Last-Event-ID"] } == [nil, "1", "2"])
        #expect(clock.sleeps == [.milliseconds(250), .milliseconds(250)])
    }

    @Test("A server's retry: longer than maximumDelay is cut to it, never below the endpoint's own delay, which is not cut")
    func capsServerDelay() async throws {
        let (repository, _, clock) = try repository([
            .events("id: 1\ndata: a\n\n"), .events("retry: 999999999999\nid: 2\ndata: b\n\n"), .events("id: 3\ndata: c\n\n"),
            .status(204, contentType: ""),
        ])
        let (events, error) = await readAll(
            try await repository.performRequest(endpoint.reconnecting(after: .seconds(9), maximumDelay: .seconds(60))).get())
        #expect(events.map(\.data) == ["a", "b", "c"])
        #expect(error == nil)
        #expect(clock.sleeps == [.seconds(9), .seconds(60), .seconds(60)])
        // A cap below the endpoint's delay: the server's longer wait gets the endpoint's delay.
        let (below, _, belowClock) = try self.repository([
            .events("retry: 999999999999\nid: 1\ndata: a\n\n"), .status(204, contentType: ""),
        ])
        _ = await readAll(try await below.performRequest(endpoint.reconnecting(after: .seconds(90), maximumDelay: .seconds(-1))).get())
        #expect(belowClock.sleeps == [.seconds(90)])
    }

    @Test("A server's retry: 0 waits 250 ms (an event and a close each time would loop), or the endpoint's delay when shorter")
    func floorsServerDelay() async throws {
        let script: [Answer] = [.events("retry: 0\nid: 1\ndata: a\n\n"), .events("id: 2\ndata: b\n\n"), .status(204, contentType: "")]
        let (repository, _, clock) = try repository(script)
        _ = await readAll(try await repository.performRequest(endpoint.reconnecting(after: .seconds(9))).get())
        #expect(clock.sleeps == [.milliseconds(250), .milliseconds(250)])
        let (shorter, _, shorterClock) = try self.repository(script)
        _ = await readAll(try await shorter.performRequest(endpoint.reconnecting(after: .milliseconds(100))).get())
        #expect(shorterClock.sleeps == [.milliseconds(100), .milliseconds(100)])
    }

    @Test("Lost connections and ends without an event count as failed attempts, reset by an event; the last attempt's error ends it")
    func givesUp() async throws {
        let (repository, transport, clock) = try repository([
            .events("id: 1\ndata: a\n\n"), .failure(.network(.connectionRefused)), .events(": only a comment\n"),
            .events("id: 2\ndata: b\n\n"), .failure(.network(.connectionLost)),
        ])
        let (events, error) = await readAll(
            try await repository.performRequest(endpoint.reconnecting(after: .seconds(2), maximumAttempts: 3)).get())
        #expect(events.map(\.data) == ["a", "b"])
        guard case .noNetworkConnection(.connectionLost, _) = error else {
            Issue.record("expected the last attempt's lost connection, got \(String(describing: error))")
            return
        }
        // 1, refused, comment, 2, then three lost connections in a row.
        #expect(transport.requests.count == 7)
        #expect(transport.requests.map { $0.headers["Last-Event-ID"] } == [nil, "1", "1", "1", "2", "2", "2"])
        #expect(clock.sleeps == Array(repeating: .seconds(2), count: 6))
    }

    @Test(
        "Streams that keep ending without an event give up with invalidResponse, not forever; the last attempt's end is the error, also after a 503",
        arguments: [[Answer.events(": nothing\n")], [.status(503, contentType: "text/plain"), .events(": nothing\n")]])
    func emptyStreams(failing: [Answer]) async throws {
        let (repository, transport, _) = try repository([.events("data: a\n\n")] + failing)
        let (events, error) = await readAll(
            try await repository.performRequest(endpoint.reconnecting(after: .zero, maximumAttempts: 2)).get())
        #expect(events.map(\.data) == ["a"])
        guard case .invalidResponse(let reason, _) = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("after 2 failed attempts in a row"), "\(reason)")
        #expect(transport.requests.count == 3)
    }

    @Test("A non-2xx answer to a reconnection ends the sequence with its error, not another attempt")
    func refusedReconnection() async throws {
        let (repository, transport, _) = try repository([.events("data: a\n\n"), .status(403, contentType: "application/json")])
        let (events, error) = await readAll(try await repository.performRequest(endpoint.reconnecting(after: .zero)).get())
        #expect(events.map(\.data) == ["a"])
        #expect(error?.statusCode == 403)
        #expect(transport.requests.count == 2)
    }

    @Test("A 2xx of another type fails the call, the first time or on a reconnection; a first 204 is an empty sequence")
    func contentType() async throws {
        let (json, _, _) = try repository([.status(200, contentType: "application/json")])
        let failure = await json.performRequest(endpoint).failure
        guard case .invalidResponse(let reason, let context) = failure else {
            Issue.record("expected invalidResponse, got \(String(describing: failure))")
            return
        }
        #expect(reason == #"expected a text/event-stream answer, got "application/json""#)
        #expect(context.response?.statusCode == 200)

        let (later, _, _) = try repository([.events("data: a\n\n"), .status(200, contentType: "text/plain")])
        let (events, error) = await readAll(try await later.performRequest(endpoint.reconnecting(after: .zero)).get())
        #expect(events.map(\.data) == ["a"])
        guard case .invalidResponse = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }

        let (empty, transport, _) = try repository([.status(204, contentType: "")])
        let (none, noError) = await readAll(try await empty.performRequest(endpoint.reconnecting(after: .zero)).get())
        #expect(none.isEmpty && noError == nil)
        #expect(transport.requests.count == 1)
    }

    @Test("Another 2xx than 200 or 204 fails the call, even as an event stream", arguments: [202, 206])
    func statusOtherThan200(status: Int) async throws {
        let (repository, _, _) = try repository([.status(status)])
        let failure = await repository.performRequest(endpoint).failure
        guard case .invalidResponse(let reason, let context) = failure else {
            Issue.record("expected invalidResponse, got \(String(describing: failure))")
            return
        }
        #expect(reason == "expected a 200 answer to an event stream's request, got \(status)")
        #expect(context.response?.statusCode == status)
    }

    @Test("A sequence is read once; cancel() ends a reader with cancelled and stops reconnecting")
    func readOnceAndCancel() async throws {
        let (repository, transport, _) = try repository([.events("data: a\n\n")])
        let events = try await repository.performRequest(endpoint.reconnecting(after: .zero)).get()
        var first = events.makeAsyncIterator()
        #expect(try await first.next()?.data == "a")
        var second = events.makeAsyncIterator()
        await #expect(throws: RepositoryError.self) { _ = try await second.next() }
        events.cancel()
        do {
            _ = try await first.next()
            Issue.record("a cancelled sequence must throw")
        } catch {
            guard case .cancelled = error else {
                Issue.record("expected cancelled, got \(error)")
                return
            }
        }
        #expect(transport.requests.count == 1)
    }

    @Test("An event cut midway is asked for again: Last-Event-ID is the last event received whole")
    func cutMidEvent() async throws {
        let (repository, transport, _) = try repository([
            .events("id: 1\ndata: a\n\nid: 2\ndata: par"), .events("id: 2\ndata: b\n\n"), .status(204, contentType: ""),
        ])
        let (events, error) = await readAll(try await repository.performRequest(endpoint.reconnecting(after: .zero)).get())
        #expect(events.map(\.data) == ["a", "b"] && error == nil)
        #expect(transport.requests.map { $0.headers["Last-Event-ID"] } == [nil, "1", "2"])
    }

    @Test("Backing off: each failed attempt in a row doubles the wait up to maximumDelay, every wait drawn between half and all of it")
    func backsOff() async throws {
        let (repository, _, clock) = try repository(
            [
                .events("id: 1\ndata: a\n\n"), .failure(.network(.connectionRefused)), .failure(.network(.connectionRefused)),
                .failure(.network(.connectionRefused)), .failure(.network(.connectionRefused)), .events("id: 2\ndata: b\n\n"),
                .status(204),
            ], random: 0.5)
        let (events, error) = await readAll(
            try await repository.performRequest(
                endpoint.reconnecting(after: .seconds(2), maximumAttempts: 5, maximumDelay: .seconds(10), backsOff: true)
            ).get())
        #expect(events.map(\.data) == ["a", "b"] && error == nil)
        // 2, 4, 8, 10 (capped), 10, then 2 again after an event: each times 0.75.
        #expect(clock.sleeps == [1.5, 3, 6, 7.5, 7.5, 1.5].map { Duration.milliseconds(Int64($0 * 1000)) })
    }

    @Test("A failed reconnection's Retry-After is waited, up to maximumDelay, instead of the shorter delay")
    func retryAfterIsWaited() async throws {
        let (repository, transport, clock) = try repository([
            .events("id: 1\ndata: a\n\n"), .retryAfter(503, seconds: 30), .retryAfter(429, seconds: 0),
            .retryAfter(503, seconds: 9_999), .events("id: 2\ndata: b\n\n"), .status(204),
        ])
        let (events, error) = await readAll(
            try await repository.performRequest(endpoint.reconnecting(after: .seconds(1), maximumDelay: .seconds(60))).get())
        #expect(transport.requests.count == 3)
        // A 429 is no gateway error: the stream ends with it, after the 503's wait.
        #expect(events.map(\.data) == ["a"] && error?.statusCode == 429)
        #expect(clock.sleeps == [.seconds(1), .seconds(30)])
        let (later, laterTransport, laterClock) = try self.repository([
            .events("id: 1\ndata: a\n\n"), .retryAfter(503, seconds: 9_999), .events("id: 2\ndata: b\n\n"), .status(204),
        ])
        let (more, _) = await readAll(
            try await later.performRequest(endpoint.reconnecting(after: .seconds(1), maximumDelay: .seconds(60))).get())
        #expect(more.map(\.data) == ["a", "b"] && laterTransport.requests.count == 4)
        #expect(laterClock.sleeps == [.seconds(1), .seconds(60), .seconds(1)])
    }

    @Test("A 503 to a reconnection is a failed attempt, not the end; the stream resumes after it")
    func gatewayErrorIsAnAttempt() async throws {
        let (repository, transport, _) = try repository([
            .events("id: 1\ndata: a\n\n"), .status(503, contentType: "application/json"), .events("id: 2\ndata: b\n\n"),
            .status(204, contentType: ""),
        ])
        let (events, error) = await readAll(try await repository.performRequest(endpoint.reconnecting(after: .zero)).get())
        #expect(events.map(\.data) == ["a", "b"] && error == nil)
        #expect(transport.requests.count == 4)
    }

    @Test("A connection that kept bringing bytes long enough is healthy: its end without an event resets the count")
    func healthyConnection() async throws {
        let answers: [Answer] = [
            .events("data: a\n\n"), .events(": ping\n"), .events(": ping\n"), .events(": ping\n"), .status(204, contentType: ""),
        ]
        // Counted as failed attempts (bytes for less than 30 s), three quiet connections give up.
        let (counted, _, _) = try repository(answers)
        let (_, gaveUp) = await readAll(
            try await counted.performRequest(endpoint.reconnecting(after: .zero, maximumAttempts: 2)).get())
        guard case .invalidResponse = gaveUp else {
            Issue.record("expected invalidResponse, got \(String(describing: gaveUp))")
            return
        }
        // Healthy at once, they never add up: the server's 204 ends the stream.
        let (healthy, transport, _) = try repository(answers)
        let (events, error) = await readAll(
            try await healthy.performRequest(
                endpoint.reconnecting(after: .zero, maximumAttempts: 2).with(ServerSentEventsHealthyConnection.self, .zero)
            ).get())
        #expect(events.map(\.data) == ["a"] && error == nil)
        #expect(transport.requests.count == 5)
    }

    @Test("A reconnection whose token refresh finds no network is a failed attempt, not the end")
    func refreshWithoutNetwork() async throws {
        let refreshes = Mutex(0)
        let refresher = ClosureRefresher { _ in
            let first = refreshes.withLock { count in
                defer { count += 1 }
                return count == 0
            }
            return first
                ? .failure(.noNetworkConnection(.connectionRefused, refreshContext()))
                : .success(Credential(accessToken: "t2", refreshToken: "r2"))
        }
        let session = SessionManager<TestAPI.User>(refresher: refresher)
        try session.login(
            user: TestAPI.User(id: 1, name: "Ann", email: "ann@example.com", createdAt: Date()),
            credential: Credential(accessToken: "t1", refreshToken: "r1"))
        // The reconnection is refused (401): the refresh finds no network, the next attempt goes through.
        let (repository, transport, _) = try repository(
            [
                .events("id: 1\ndata: a\n\n"), .status(401, contentType: "application/json"), .events("id: 2\ndata: b\n\n"),
                .status(204, contentType: ""),
            ],
            session: session)
        let (events, error) = await readAll(
            try await repository.performRequest(Endpoint<ServerSentEvents>.get("events").reconnecting(after: .zero)).get())
        #expect(events.map(\.data) == ["a", "b"])
        #expect(error == nil)
        #expect(refreshes.withLock { $0 } == 1)
        #expect(session.isLoggedIn)
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer t1", "Bearer t1", "Bearer t1", "Bearer t1"])
    }

    @Test("The idle timeout counts from the request's sending: a slow step before it is not the server's silence")
    func timeoutFromSending() async throws {
        /// Holds each request back before passing it on, as a busy pool or a slow signing step would.
        struct SlowStart: Interceptor {
            func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
                async throws(RepositoryError) -> TransportResponse
            {
                try? await Task.sleep(for: .milliseconds(400))
                return try await next(request)
            }
        }
        let quick = Endpoint<ServerSentEvents>(.get, "events", timeout: 0.1).withoutSession()
        let (held, _, _) = try repository([.events("data: a\n\n")], interceptors: [SlowStart()])
        let (events, error) = await readAll(try await held.performRequest(quick).get())
        #expect(events.map(\.data) == ["a"] && error == nil)
        // A server that keeps the answer back is late (however late the watchdog runs, within 1 s).
        let (slow, _, _) = try repository([.events("data: a\n\n", after: .seconds(1))])
        guard case .timeout = await slow.performRequest(quick).failure else {
            Issue.record("expected timeout")
            return
        }
    }

    /// A sequence over `chunks` that no transfer drives (cancelling ends nothing, as with a
    /// transport that ignores cancellation), without reconnection.
    static func events(over chunks: ResponseChunks, idleTimeout: Duration?) throws -> ServerSentEvents {
        ServerSentEvents(
            first: chunks, request: RequestSummary(method: .get, url: try #require(URL(string: "http://127.0.0.1:9/events"))),
            reconnection: nil, idleTimeout: idleTimeout, startingEventID: "", healthyConnection: .seconds(30), clock: .live,
            connect: { _, _ in .success(nil) })
    }

    /// Events over a connection whose head came and whose `pieces` are buffered, unread.
    static func events(buffering pieces: [String]) throws -> ServerSentEvents {
        let chunks = ResponseChunks(method: .get, unreadLimit: .max)
        let events = try Self.events(over: chunks, idleTimeout: nil)
        _ = chunks.sink.begin(ResponseHead(statusCode: 200, url: URL(string: "http://127.0.0.1:9/events")), canPause: false) {}
        for piece in pieces { _ = Data(piece.utf8).withUnsafeBytes { chunks.sink.receive($0) } }
        return events
    }

    @Test("A cancelled reading task gets .cancelled, not the events already buffered or parsed")
    func cancelledReaderGetsNoMoreEvents() async throws {
        let events = try Self.events(buffering: (0..<3).map { "data: \($0)\n\ndata: more\n\n" })
        // One event in, the task is cancelled: the rest of the chunk and the buffer are dropped.
        let (read, error) = await readCancelled(events, after: 1)
        #expect(read.map(\.data) == ["0"])
        guard case .cancelled? = error else {
            Issue.record("expected .cancelled, got \(String(describing: error))")
            return
        }
    }

    @Test("After cancel(), the reader gets .cancelled, not the events its last chunk brought")
    func cancelDropsParsedEvents() async throws {
        let events = try Self.events(buffering: ["data: 0\n\ndata: 1\n\ndata: 2\n\n"])
        var iterator = events.makeAsyncIterator()
        #expect(try await iterator.next()?.data == "0")
        events.cancel()
        do throws(RepositoryError) {
            let next = try await iterator.next()
            Issue.record("expected .cancelled, got \(String(describing: next))")
        } catch {
            guard case .cancelled = error else {
                Issue.record("expected .cancelled, got \(error)")
                return
            }
        }
        #expect(try await iterator.next() == nil)
    }

    @Test("cancel() ends a reader waiting on a connection at once, even when nothing ends its transfer")
    func cancelNeedsNoTransport() async throws {
        let chunks = ResponseChunks(method: .get, unreadLimit: .max)
        let events = try Self.events(over: chunks, idleTimeout: nil)
        let reading = Task { await readAll(events) }
        while !chunks.sink.hasWaitingReader { try await Task.sleep(for: .milliseconds(5)) }
        events.cancel()
        guard let (read, error) = await reading.value(within: .seconds(60)) else {
            Issue.record("the reader hung after cancel()")
            return
        }
        #expect(read.isEmpty)
        guard case .cancelled? = error else {
            Issue.record("expected cancelled, got \(String(describing: error))")
            return
        }
    }

    @Test("A silent connection times out by the idle limit even when nothing ends its transfer (a transport ignoring cancellation)")
    func idleTimeoutNeedsNoTransport() async throws {
        let chunks = ResponseChunks(method: .get, unreadLimit: .max)
        let events = try Self.events(over: chunks, idleTimeout: .milliseconds(200))
        Data("data: a\n\n".utf8).withUnsafeBytes { _ = chunks.sink.receive($0) }
        guard let (read, error) = await Task(operation: { await readAll(events) }).value(within: .seconds(60)) else {
            Issue.record("the reader hung on a silent connection")
            return
        }
        #expect(read == [ServerSentEvent(data: "a")])
        guard case .timeout? = error else {
            Issue.record("expected timeout, got \(String(describing: error))")
            return
        }
        // The timed-out body takes no more bytes: the transport stops.
        let later = Data("data: b\n\n".utf8).withUnsafeBytes { chunks.sink.receive($0) }
        guard case .failed = later else {
            Issue.record("expected the bytes to be refused")
            return
        }
    }

    @Test("An event too large ends the sequence after the events its chunk completed before it, which are not lost")
    func eventsBeforeOneTooLargeAreDelivered() async throws {
        let chunks = ResponseChunks(method: .get, unreadLimit: .max)
        let events = try Self.events(over: chunks, idleTimeout: nil)
        let chunk = Data("id: 7\ndata: a\n\ndata: ".utf8) + Data(repeating: UInt8(ascii: "x"), count: ServerSentEvents.maximumEventSize)
        chunk.withUnsafeBytes { _ = chunks.sink.receive($0) }
        let (read, error) = await readAll(events)
        #expect(read == [ServerSentEvent(data: "a", id: "7")])
        guard case .invalidResponse(let reason, _)? = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }
        // Not the advice of a response too large (a transport's limit does not apply to an event).
        #expect(reason == "an event of the stream is larger than 8388608 bytes")
    }

    @Test("Chunks that keep coming within the idle limit never time out, however long the stream runs in all")
    func steadyStreamDoesNotTimeOut() async throws {
        let chunks = ResponseChunks(method: .get, unreadLimit: .max)
        let events = try Self.events(over: chunks, idleTimeout: .milliseconds(1500))
        // Fed from a thread of its own, so a busy cooperative pool cannot make the feed late.
        Thread.detachNewThread {
            for number in 0..<8 {
                Thread.sleep(forTimeInterval: 0.3)
                Data("data: \(number)\n\n".utf8).withUnsafeBytes { _ = chunks.sink.receive($0) }
            }
            chunks.sink.end(nil)
        }
        let (read, error) = await readAll(events)
        #expect(read.map(\.data) == (0..<8).map(String.init))
        #expect(error == nil, "2.4 s in all, 0.3 s between chunks, against a 1.5 s idle limit")
    }

    @Test("Over a named route, the stream takes the route's timeout and headers, and its errors name the route's URL")
    func namedRoute() async throws {
        let feed = try Route(
            name: "feed", path: "events", headers: ["Last-Event-ID": "41"], requiresSession: false, timeout: 0.1)
        let routes = try RouteTable([feed])
        // The route's saved position goes out and stays the stream's.
        let (resuming, transport, _) = try repository(
            [.events("data: a\n\n"), .events("id: 42\ndata: b\n\n"), .status(204, contentType: "")], routes: routes)
        let route = Endpoint<ServerSentEvents>.route("feed").reconnecting(after: .zero)
        _ = await readAll(try await resuming.performRequest(route).get())
        #expect(transport.requests.map { $0.headers["Last-Event-ID"] } == ["41", "41", "42"])
        #expect(transport.requests.first?.url.absoluteString == "http://127.0.0.1:9/api/events")
        // The route's 0.1 s, not the configuration's 75 s, bounds the wait; the error names the route's URL.
        let (slow, _, _) = try repository([.events("data: a\n\n", after: .seconds(1))], routes: routes)
        let failure = await slow.performRequest(Endpoint<ServerSentEvents>.route("feed")).failure
        guard case .timeout(let context) = failure else {
            Issue.record("expected timeout, got \(String(describing: failure))")
            return
        }
        #expect(context.request.url.absoluteString == "http://127.0.0.1:9/api/events")
    }

    @Test("A Last-Event-ID the endpoint sets (a saved position) is the stream's until an event brings its own")
    func startingLastEventID() async throws {
        let (repository, transport, _) = try repository([
            .events("data: a\n\n"), .events("id: 42\ndata: b\n\n"), .status(204, contentType: ""),
        ])
        var resuming = endpoint.reconnecting(after: .zero)
        resuming.headers["Last-Event-ID"] = "41"
        _ = await readAll(try await repository.performRequest(resuming).get())
        #expect(transport.requests.map { $0.headers["Last-Event-ID"] } == ["41", "41", "42"])
    }

    @Test("Gateway errors in a row give up with the last one; mapped to a custom error, they are still attempts")
    func gatewayErrorsGiveUp() async throws {
        struct Unavailable: CustomRepositoryErrorType { var name: String { "unavailable" } }
        let (repository, transport, _) = try repository(
            [.events("id: 1\ndata: a\n\n"), .status(502, contentType: "application/json"), .status(503, contentType: "application/json")],
            customErrors: [.status(503, Unavailable())])
        let (events, error) = await readAll(
            try await repository.performRequest(endpoint.reconnecting(after: .zero, maximumAttempts: 3)).get())
        #expect(events.map(\.data) == ["a"])
        guard case .customError(_, is Unavailable, let context) = error else {
            Issue.record("expected the last attempt's mapped 503, got \(String(describing: error))")
            return
        }
        #expect(context.statusCode == 503)
        #expect(transport.requests.count == 4)
    }

    @Test("cancel() while a reconnection waits for its answer ends the reader with cancelled, not with that answer")
    func cancelDuringConnect() async throws {
        let box = Mutex<ServerSentEvents?>(nil)
        let (repository, _, _) = try repository([.events("id: 1\ndata: a\n\n"), .status(204, contentType: "")]) { index in
            if index == 1 { box.withLock { $0 }?.cancel() }
        }
        let events = try await repository.performRequest(endpoint.reconnecting(after: .zero)).get()
        box.withLock { $0 = events }
        let (received, error) = await readAll(events)
        #expect(received.map(\.data) == ["a"])
        guard case .cancelled = error else {
            Issue.record("expected cancelled, got \(String(describing: error))")
            return
        }
    }

    @Test("A timeout the call would refuse (not a positive number) is refused before sending", arguments: [0, -1, Double.nan])
    func badTimeout(timeout: Double) async throws {
        let (repository, transport, _) = try repository([.events("data: a\n\n")])
        var invalid = endpoint
        invalid.timeout = timeout
        guard case .invalidRequest = await repository.performRequest(invalid).failure else {
            Issue.record("expected invalidRequest")
            return
        }
        #expect(transport.requests.isEmpty)
    }

    @Test("cancel() stops a reconnection's long wait (the server asked for four minutes) at once")
    func cancelDuringWait() async throws {
        let (repository, _, _) = try repository([.events("retry: 240000\ndata: a\n\n")], clock: true)
        let events = try await repository.performRequest(endpoint.reconnecting()).get()
        let reader = Task { () async -> ([ServerSentEvent], RepositoryError?) in await readAll(events) }
        for _ in 0..<500 where !events.isReconnecting { try await Task.sleep(for: .milliseconds(10)) }
        #expect(events.isReconnecting)
        let started = ContinuousClock.now
        events.cancel()
        let (received, error) = await reader.value
        #expect(ContinuousClock.now - started < .seconds(60), "far less than the four-minute wait")
        #expect(received.map(\.data) == ["a"])
        guard case .cancelled = error else {
            Issue.record("expected cancelled, got \(String(describing: error))")
            return
        }
    }

    @Test("A streamed request body cannot be sent twice: with reconnection it fails before sending")
    func streamedBody() async throws {
        let (repository, transport, _) = try repository([.events("data: a\n\n")])
        let chunks = AsyncStream<Data> { $0.finish() }
        let failure = await repository.performRequest(
            endpoint.uploading(.stream(chunks)).reconnecting()
        ).failure
        guard case .invalidRequest(let reason, _) = failure else {
            Issue.record("expected invalidRequest, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains("streamed body"))
        #expect(transport.requests.isEmpty)
    }

    @Test("An event's data decodes as JSON")
    func decoding() throws {
        struct Delta: Decodable, Equatable { var text: String }
        #expect(try ServerSentEvent(data: #"{"text": "Hel"}"#).decoded(as: Delta.self) == Delta(text: "Hel"))
        #expect(throws: DecodingError.self) { try ServerSentEvent(data: "[DONE]").decoded(as: Delta.self) }
    }
}

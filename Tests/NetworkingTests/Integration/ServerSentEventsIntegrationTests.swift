import Foundation
import NetworkingTestSupport
import Synchronization
import Testing

@testable import Networking

/// Server-sent events from the test API's `/events/<key>` (gunicorn), over both transports: every
/// line ending, a body cut between events, reconnections that resume with `Last-Event-ID` and
/// carry a refreshed token, and the answers that end a stream.
@Suite("Server-sent events end to end")
struct ServerSentEventsIntegrationTests {
    struct Book: Decodable, Equatable {
        let id: Int
        let title: String
    }

    /// A fresh stream key: the test API logs each request's `Last-Event-ID` under it.
    static func key() -> String { "sse-\(UUID().uuidString)" }

    /// The `Last-Event-ID` of every request the test API received for `key`, `nil` for none.
    static func log(_ key: String) async throws -> [String?] {
        try await TestAPI.anonymous().performRequest(Endpoint<[String?]>.get("events/\(key)/log").withoutSession()).get()
    }

    @Test(
        "Events arrive typed and numbered whatever the line ending, whole or a line per chunk, after a byte order mark and a comment",
        arguments: TransportUnderTest.all, ["", "crlf", "cr"])
    func lineEndings(transport: TransportUnderTest, ending: String) async throws {
        let repository = try TestAPI.anonymous(transport: transport.shared)
        for chunked in [false, true] {
            var query: [String: String] = ["count": "3"]
            if !ending.isEmpty { query[ending] = "1" }
            if chunked { query["chunked"] = "1" }
            let endpoint = Endpoint<ServerSentEvents>(.get, "events/\(Self.key())", query: Parameters(query)).withoutSession()
            let (events, error) = await readAll(try await repository.performRequest(endpoint).get())
            #expect(error == nil)
            #expect(events.map(\.type) == ["book", "book", "book"])
            #expect(events.map(\.id) == ["1", "2", "3"])
            #expect(try events[0].decoded(as: Book.self) == Book(id: 1, title: "Book 1"))
            #expect(events[1].data == #"{"id": 2, "title": "Book 2"}"# + "\nsecond line")
            #expect(try events[2].decoded(as: Book.self) == Book(id: 3, title: "Book 3"))
        }
    }

    @Test("A POST stream (a completion's) ends with its body and is never sent again")
    func postStream() async throws {
        let key = Self.key()
        let events = try await TestAPI.anonymous().performRequest(
            Endpoint<ServerSentEvents>(.post, "events/\(key)", parameters: ["prompt": "Once upon"], query: ["count": 2])
                .withoutSession()
        ).get()
        let (read, error) = await readAll(events)
        #expect(read.map(\.id) == ["1", "2"])
        #expect(error == nil)
        let log = try await Self.log(key)
        #expect(log == [nil], "\(log)")
    }

    @Test("A POST stream whose body takes longer to send than the idle timeout is not timed out while its bytes go out")
    func slowUpload() async throws {
        // Without the body's bytes counted, every try times out (the body takes longer than the
        // timeout). A busy machine (the whole suite starting at once stalls for up to ~30 s) can
        // still hold the body's feed back past the timeout, so it tries again for up to 90 s.
        var failures: [RepositoryError] = []
        let clock = ContinuousClock()
        let start = clock.now
        while failures.count < 12, clock.now - start < .seconds(90) {
            let key = Self.key()
            // 8 pieces, 300 ms apart: 2.4 s of sending against a 1.5-second idle timeout.
            let pieces = AsyncStream<Data> { continuation in
                Task {
                    for _ in 0..<8 {
                        continuation.yield(Data(repeating: 0x61, count: 1000))
                        try? await Task.sleep(for: .milliseconds(300))
                    }
                    continuation.finish()
                }
            }
            let endpoint = Endpoint<ServerSentEvents>(.post, "events/\(key)", query: ["count": 2], timeout: 1.5)
                .uploading(.stream(pieces, length: 8000), contentType: "text/plain").withoutSession()
            switch try await TestAPI.anonymous().performRequest(endpoint) {
            case .success(let events):
                let (read, error) = await readAll(events)
                #expect(read.map(\.id) == ["1", "2"])
                #expect(error == nil)
                return
            case .failure(let error):
                failures.append(error)
            }
        }
        Issue.record("every try failed: \(failures)")
    }

    @Test(
        "Cut between events, the stream reconnects after the server's retry time with Last-Event-ID and resumes; a 204 ends it",
        arguments: TransportUnderTest.all)
    func resumesAfterCuts(transport: TransportUnderTest) async throws {
        let key = Self.key()
        let endpoint = Endpoint<ServerSentEvents>(
            .get, "events/\(key)", query: ["count": 5, "per": 2, "cut": 1, "stop": 1, "retry": 10]
        ).withoutSession().reconnecting(after: .seconds(60))
        let (events, error) = await readAll(try await TestAPI.anonymous(transport: transport.shared).performRequest(endpoint).get())
        #expect(error == nil)
        #expect(events.map(\.id) == ["1", "2", "3", "4", "5"])
        let log = try await Self.log(key)
        #expect(log == [nil, "2", "4", "5"], "\(log)")
    }

    @Test("A server's retry: of years is cut to maximumDelay: the stream resumes", arguments: TransportUnderTest.all)
    func capsServerRetry(transport: TransportUnderTest) async throws {
        let key = Self.key()
        let changes = ConnectionChanges()
        let endpoint = Endpoint<ServerSentEvents>(
            .get, "events/\(key)", query: ["count": 3, "per": 2, "cut": 1, "stop": 1, "retry": 999_999_999_999]
        ).withoutSession().reconnecting(after: .milliseconds(5), maximumDelay: .milliseconds(20), onConnectionChange: changes.record)
        let reading = Task { await readAll(try await TestAPI.anonymous(transport: transport.shared).performRequest(endpoint).get()) }
        // A wait of years never ends; a cut one resumes at once, but the whole suite's start can
        // hold a test up for ~50 s on two cores.
        let guarded = Task {
            try await Task.sleep(for: .seconds(120))
            reading.cancel()
        }
        let (events, error) = try await reading.value
        guarded.cancel()
        #expect(error == nil)
        #expect(events.map(\.id) == ["1", "2", "3"])
        #expect(changes.all.first == "reconnecting 1 after 20ms: connectionLost")
        let log = try await Self.log(key)
        #expect(log == [nil, "2", "3"], "\(log)")
    }

    @Test("Without a cut, a reconnection follows a clean end too; streams that bring no event give up after maximumAttempts")
    func givesUpOnEmptyStreams() async throws {
        let key = Self.key()
        let endpoint = Endpoint<ServerSentEvents>(.get, "events/\(key)", query: ["count": 2])
            .withoutSession().reconnecting(after: .milliseconds(10), maximumAttempts: 2)
        let (events, error) = await readAll(try await TestAPI.anonymous().performRequest(endpoint).get())
        #expect(events.map(\.id) == ["1", "2"])
        guard case .invalidResponse(let reason, _) = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("after 2 failed attempts in a row"))
        let log = try await Self.log(key)
        #expect(log == [nil, "2", "2"], "\(log)")
    }

    @Test("The connection handler hears each wait to reconnect, with its attempt and cause, and each accepted reconnection")
    func connectionChanges() async throws {
        let changes = ConnectionChanges()
        let key = Self.key()
        let cut = Endpoint<ServerSentEvents>(.get, "events/\(key)", query: ["count": 3, "per": 2, "cut": 1, "stop": 1, "retry": 10])
            .withoutSession().reconnecting(after: .seconds(60), onConnectionChange: changes.record)
        let (events, error) = await readAll(try await TestAPI.anonymous().performRequest(cut).get())
        #expect(events.map(\.id) == ["1", "2", "3"])
        #expect(error == nil)
        // Cut after 2 and after 3; the third connection is a 204, which ends the stream. The
        // server's retry: 10 waits the shortest a server may ask for, 250 ms.
        #expect(changes.all == ["reconnecting 1 after 250ms: connectionLost", "reconnected", "reconnecting 1 after 250ms: connectionLost"])

        let empty = ConnectionChanges()
        let ending = Endpoint<ServerSentEvents>(.get, "events/\(Self.key())", query: ["count": 1])
            .withoutSession().reconnecting(after: .milliseconds(10), maximumAttempts: 2, onConnectionChange: empty.record)
        _ = await readAll(try await TestAPI.anonymous().performRequest(ending).get())
        // Clean ends; the second empty connection is the last attempt.
        #expect(
            empty.all == ["reconnecting 1 after 10ms: clean end", "reconnected", "reconnecting 2 after 10ms: clean end", "reconnected"])
    }

    @Test("A reconnection is one attempt: the configuration's retry policy does not repeat it when the server is down")
    func reconnectionIsOneAttempt() async throws {
        let api = try #require(URLComponents(string: try TestServers.require().apiURL))
        let proxy = try OutageProxy(upstreamPort: api.port ?? 0)
        let clock = TestClock()
        var configuration = try TestServers.configuration("http://127.0.0.1:\(proxy.port)\(api.path)")
        configuration.retryPolicy = RetryPolicy(retriesConnectionFailures: true, random: { 1 })
        configuration.clock = clock.networkingClock
        let changes = ConnectionChanges()
        let endpoint = Endpoint<ServerSentEvents>(.get, "events/\(Self.key())", query: ["count": 1])
            .withoutSession().reconnecting(after: .milliseconds(10), maximumAttempts: 2, onConnectionChange: changes.record)
        var iterator = try await TestAPI.Repository(configuration: configuration).performRequest(endpoint).get().makeAsyncIterator()
        #expect(try await iterator.next()?.id == "1")
        proxy.goDown()
        var failure: RepositoryError?
        do { _ = try await iterator.next() } catch { failure = error }
        guard case .noNetworkConnection(.connectionRefused, _)? = failure else {
            Issue.record("expected a refused connection, got \(String(describing: failure))")
            return
        }
        // Two reconnections, refused, each once: no backoff of the retry policy between them.
        #expect(clock.sleeps == [.milliseconds(10), .milliseconds(10)])
        #expect(changes.all.count == 2)
        // The second wait follows the first reconnection's refusal.
        #expect(changes.all.last?.hasPrefix("reconnecting 2 after 10ms: ") == true)
        #expect(changes.all.last?.contains("refused") == true, "\(changes.all)")
    }

    /// The connection changes a stream reported, as text.
    final class ConnectionChanges: Sendable {
        private let entries = Mutex<[String]>([])
        var all: [String] { entries.withLock { $0 } }

        func record(_ change: ServerSentEvents.ConnectionChange) {
            let text =
                switch change {
                case .reconnecting(let attempt, let delay, let cause):
                    "reconnecting \(attempt) after \(delay.components.attoseconds / 1_000_000_000_000_000)ms: "
                        + (cause.map { error in
                            if case .noNetworkConnection(let failure, _) = error, failure == .connectionLost {
                                "connectionLost"
                            } else {
                                "\(error)"
                            }
                        } ?? "clean end")
                case .reconnected: "reconnected"
                }
            entries.withLock { $0.append(text) }
        }
    }

    /// Opens the test API's signed stream of two events, one per connection, that reconnects.
    static func privateStream(_ key: String, through repository: TestAPI.Repository) async throws -> ServerSentEvents.Iterator {
        try await repository.performRequest(
            Endpoint<ServerSentEvents>(.get, "events/\(key)/private", query: ["count": 2, "per": 1, "stop": 1, "retry": 10])
                .reconnecting()
        ).get().makeAsyncIterator()
    }

    @Test("A reconnection goes through the session: an access token that expired meanwhile is refreshed, and the stream resumes")
    func reconnectionRefreshes() async throws {
        let configuration = try TestServers.configuration(try TestServers.require().apiURL)
        let anonymous = TestAPI.Repository(configuration: configuration)
        // Logging in again rather than calling auth/refresh, whose calls the refresh suite counts.
        let refresher = ClosureRefresher { credential in
            await anonymous.login().map { Credential(accessToken: $0.token, refreshToken: credential.refreshToken) }
        }
        let session = SessionManager<TestAPI.User>(refresher: refresher)
        let login = try await anonymous.login().get()
        try session.login(user: login.user, credential: Credential(accessToken: login.token, refreshToken: login.refreshToken))
        let repository = TestAPI.Repository(configuration: configuration, sessionManager: session)
        let key = Self.key()
        var iterator = try await Self.privateStream(key, through: repository)
        #expect(try await iterator.next()?.id == "1")
        _ = await repository.expire(token: login.token)
        #expect(try await iterator.next()?.id == "2")
        #expect(try await iterator.next() == nil)
        #expect(session.sessionToken != login.token)
        // The 401 is answered before the stream logs a request.
        let log = try await Self.log(key)
        #expect(log == [nil, "1", "2"], "\(log)")
    }

    @Test("A reconnection keeps to the session the stream was opened in: after a logout and another login it ends, unsent")
    func reconnectionKeepsToItsSession() async throws {
        let configuration = try TestServers.configuration(try TestServers.require().apiURL)
        let anonymous = TestAPI.Repository(configuration: configuration)
        let session = SessionManager<TestAPI.User>()
        let first = try await anonymous.login().get()
        try session.login(user: first.user, credential: Credential(accessToken: first.token))
        let repository = TestAPI.Repository(configuration: configuration, sessionManager: session)
        let key = Self.key()
        var iterator = try await Self.privateStream(key, through: repository)
        #expect(try await iterator.next()?.id == "1")
        try session.logout()
        let second = try await anonymous.login().get()
        try session.login(user: second.user, credential: Credential(accessToken: second.token))
        do {
            let event = try await iterator.next()
            Issue.record("expected unauthenticatedSession, got \(String(describing: event))")
        } catch {
            guard case .unauthenticatedSession = error else {
                Issue.record("expected unauthenticatedSession, got \(error)")
                return
            }
        }
        let log = try await Self.log(key)
        #expect(log == [nil], "\(log)")
    }

    @Test("An answer of another type, or a 404, fails the call itself")
    func refusals() async throws {
        let repository = try TestAPI.anonymous()
        let json = await repository.performRequest(Endpoint<ServerSentEvents>.get("echo").withoutSession())
        guard case .invalidResponse(let reason, let context) = json.failure else {
            Issue.record("expected invalidResponse, got \(String(describing: json.failure))")
            return
        }
        #expect(reason.hasPrefix(#"expected a text/event-stream answer, got "application/json"#))
        #expect(context.response?.statusCode == 200)
        let missing = await repository.performRequest(Endpoint<ServerSentEvents>.get("status/404").withoutSession())
        #expect(missing.failure?.statusCode == 404)
    }

    /// A repository on the fault server, whose `/quiet-events` sends one event after the
    /// request's `Last-Event-ID` and then nothing (asyncio: never busy, however loaded the suite).
    static func quietServer(activity: NetworkActivity? = nil) throws -> TestAPI.Repository {
        var configuration = try TestServers.configuration(try TestServers.require().faultURL)
        if let activity { configuration.activity = activity }
        return TestAPI.Repository(configuration: configuration)
    }

    @Test("The timeout bounds each silence, not the stream: a server gone quiet ends it with timeout, or is reconnected to")
    func idleTimeout() async throws {
        // Long enough for a busy machine's first event, short enough for the test.
        let quiet = Endpoint<ServerSentEvents>(.get, "quiet-events", timeout: 3).withoutSession()
        let (events, error) = await readAll(try await Self.quietServer().performRequest(quiet).get())
        #expect(events.map(\.id) == ["1"])
        guard case .timeout = error else {
            Issue.record("expected timeout, got \(String(describing: error))")
            return
        }
        // Reconnecting, each silent connection gives way to the next, which resumes after the
        // last event; the server's 204 after the second ends the sequence.
        let (all, failure) = await readAll(try await Self.quietServer().performRequest(quiet.reconnecting()).get())
        #expect(all.map(\.data) == ["1", "2"])
        #expect(failure == nil)
    }

    @Test("Leaving the loop early ends the transfer, even while the sequence is kept")
    func leavingTheLoop() async throws {
        let activity = NetworkActivity()
        let events = try await Self.quietServer(activity: activity).performRequest(
            Endpoint<ServerSentEvents>.get("quiet-events").withoutSession()
        ).get()
        #expect(activity.inFlight == 1)
        for try await _ in events { break }
        for _ in 0..<3000 where activity.inFlight > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(activity.inFlight == 0)
        withExtendedLifetime(events) {}
    }

    @Test("Cancelling the reading task stops a reconnection's long wait at once, with cancelled")
    func cancelDuringWait() async throws {
        let key = Self.key()
        let events = try await TestAPI.anonymous().performRequest(
            Endpoint<ServerSentEvents>(.get, "events/\(key)", query: ["count": 1, "retry": 240_000]).withoutSession().reconnecting()
        ).get()
        let read = Mutex(0)
        let reader = Task { () async -> RepositoryError? in
            do throws(RepositoryError) {
                var iterator = events.makeAsyncIterator()
                while try await iterator.next() != nil { read.withLock { $0 += 1 } }
                return nil
            } catch {
                return error
            }
        }
        for _ in 0..<3000 where read.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
        try #require(read.withLock { $0 } == 1, "the first event arrived")
        // The first connection ended: the reader now waits four minutes to reconnect.
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        reader.cancel()
        let error = await reader.value
        #expect(ContinuousClock.now - started < .seconds(60), "far less than the four-minute wait")
        #expect(read.withLock { $0 } == 1)
        guard case .cancelled = error else {
            Issue.record("expected cancelled, got \(String(describing: error))")
            return
        }
        let log = try await Self.log(key)
        #expect(log == [nil], "\(log)")
    }
}

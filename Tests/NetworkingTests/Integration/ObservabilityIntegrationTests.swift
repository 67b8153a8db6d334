import Foundation
import Networking
import Synchronization
import Testing

/// Logging, activity, blocking calls and cURL descriptions, against the test API.
@Suite("Logging and activity end to end")
struct ObservabilityIntegrationTests {
    @Test("debug logs show requests, responses and bodies, and never a token, password or secret field")
    func logsRedactSecrets() async throws {
        let servers = try TestServers.require()
        let logger = RecordingLogger()
        var configuration = try TestServers.configuration(servers.apiURL)
        configuration.logging = LoggingConfiguration(level: .debug, logger: logger)
        configuration.secretFields = ["email"]
        let session = SessionManager<TestAPI.User>()
        let repository = TestAPI.Repository(configuration: configuration, sessionManager: session)
        let login = try await repository.login().get()
        try session.login(user: login.user, credential: Credential(accessToken: login.token, refreshToken: login.refreshToken))
        _ = try await repository.fetchCurrentUser().get()
        _ = await repository.performRequest(Endpoint<Void>.get("users/me", headers: ["Cookie": "sid=abc123"]))

        let text = logger.records.map(\.message).joined(separator: "\n")
        #expect(text.contains("→ POST \(servers.apiURL)/auth/login"))
        #expect(text.contains("← 200 GET \(servers.apiURL)/users/me ["))
        #expect(text.contains("\"name\" : \"Ada Reader\""))
        for secret in [login.token, login.refreshToken ?? "refresh", "secret123", "reader@example.com", "abc123"] {
            #expect(!text.contains(secret), "a secret leaked into the logs")
        }
        #expect(text.contains("Authorization: <redacted>"))
        #expect(logger.records.allSatisfy { $0.level != .off })
    }

    @Test("debug logs name a binary body by its size instead of printing it")
    func binaryBodies() async throws {
        let servers = try TestServers.require()
        let logger = RecordingLogger()
        var configuration = try TestServers.configuration(servers.httpbinURL)
        configuration.logging = LoggingConfiguration(level: .debug, logger: logger)
        let repository = TestRepository(configuration: configuration)
        let bytes = try await repository.performRawRequest(
            Endpoint<TransportResponse>.get("bytes/2048", parameters: ["seed": 7]).withoutSession()
        ).get()
        #expect(bytes.body.count == 2048)
        let text = logger.records.map(\.message).joined(separator: "\n")
        #expect(text.contains("<2048 bytes, binary>"), "\(text)")
        #expect(!text.contains("\u{FFFD}"))
    }

    @Test("at .error only failures are logged, with status and timing")
    func errorLevel() async throws {
        let servers = try TestServers.require()
        let logger = RecordingLogger()
        var configuration = try TestServers.configuration(servers.apiURL)
        configuration.logging = LoggingConfiguration(level: .error, logger: logger)
        let repository = TestAPI.Repository(configuration: configuration)
        _ = await repository.performAuthenticationRequest(Endpoint<Void>.get("health"))
        _ = await repository.performAuthenticationRequest(Endpoint<Void>.get("status/503"))
        #expect(logger.records.count == 1)
        #expect(logger.records.first?.message.hasPrefix("✗ 503 GET") == true)
        #expect(logger.records.first?.statusCode == 503)
        #expect(logger.records.first?.duration != nil)
    }

    @Test("a failure's log line redacts the configured secret fields in the error's description too")
    func failureLineRedactsSecretFields() async throws {
        let logger = RecordingLogger()
        // Nothing listens on port 9 of loopback: the call fails before any answer.
        var configuration = try NetworkingConfiguration(baseURL: "http://127.0.0.1:9")
        configuration.logging = LoggingConfiguration(level: .error, logger: logger)
        configuration.secretFields = ["key"]
        configuration.retryPolicy = .never
        let repository = TestRepository(configuration: configuration)
        _ = await repository.performRequest(Endpoint<Void>.get("geo", parameters: ["key": "s3cr3t", "city": "Paris"]).withoutSession())
        let text = logger.records.map(\.message).joined(separator: "\n")
        #expect(logger.records.count == 1)
        #expect(text.contains("Paris"))
        #expect(!text.contains("s3cr3t"), "\(text)")
    }

    @Test("a form's nested secret names are redacted in debug text and cURL descriptions, though percent-encoded")
    func nestedFormNames() throws {
        let request = TransportRequest(
            method: .post, url: URL(string: "https://api.example.com/login")!,
            headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data("user%5Bname%5D=ada&user%5Bpassword%5D=hunter2".utf8))
        let command = request.cURLDescription
        #expect(!command.contains("hunter2"), "\(command)")
        #expect(command.contains("ada"))
    }

    @Test("a cURL description of a login has the password and Authorization redacted")
    func cURL() throws {
        let request = TransportRequest(
            method: .post, url: URL(string: "https://api.example.com/auth/login?access_token=t0k")!,
            headers: ["Authorization": "Bearer t0k", "Content-Type": "application/json"],
            body: Data(#"{"email":"a@b.c","password":"hunter2"}"#.utf8))
        let command = request.cURLDescription
        #expect(command.hasPrefix("curl \\\n  -X POST"))
        #expect(command.contains("-H 'Authorization: <redacted>'"))
        #expect(command.contains(#""password":"<redacted>""#))
        #expect(command.contains("access_token=%3Credacted%3E") || command.contains("access_token=<redacted>"))
        #expect(!command.contains("hunter2"))
        #expect(!command.contains("t0k"))
    }

    @Test("a cURL description keeps a JSON body as sent when nothing in it is secret, and has no comment a shell could misread")
    func cURLKeepsBodies() throws {
        let url = try #require(URL(string: "https://api.example.com/items"))
        let json = #"{"z": 1, "id": 123456789012345678901234567890, "a": "x"}"#
        let plain = TransportRequest(method: .post, url: url, body: Data(json.utf8)).cURLDescription
        #expect(plain.contains("--data-raw '\(json)'"), "\(plain)")
        // Of duplicate keys the parsed value keeps one: the text, which holds both, is not shown as sent.
        let duplicate = TransportRequest(method: .post, url: url, body: Data(#"{"a": 1, "a": {"password": "hunter2"}}"#.utf8))
        #expect(!duplicate.cURLDescription.contains("hunter2"), "\(duplicate.cURLDescription)")
        let file = TransportRequest(method: .post, url: url, body: .file(URL(fileURLWithPath: "/tmp/report (1).pdf")))
        let binary = TransportRequest(method: .post, url: url, body: Data([0xFF, 0xFE, 0x00]))
        // Valid UTF-8, but a NUL cannot be in a shell argument.
        let withNUL = TransportRequest(method: .post, url: url, body: Data("a\u{0}b".utf8))
        // An IPv6 literal's brackets are not a curl glob.
        let ipv6 = TransportRequest(method: .get, url: try #require(URL(string: "http://[::1]:8080/x")))
        #expect(ipv6.cURLDescription.contains("--globoff"))
        for command in [file.cURLDescription, binary.cURLDescription, withNUL.cURLDescription] {
            #expect(command.hasSuffix("--data-binary @body.bin") && !command.contains("#"), "\(command)")
        }
    }

    @Test("a cURL description run by a shell sends the same request: encoded brackets and +, quotes in headers and body, an empty header")
    func cURLRuns() async throws {
        let servers = try TestServers.require()
        let curl = try #require(Subprocess.find("curl"), "script/bootstrap installs curl")
        let shell = try #require(Subprocess.find("sh"))
        let url = try #require(URL(string: servers.httpbinURL + "/anything?filter%5Byear%5D=1999&q=C%2B%2B"))
        let request = TransportRequest(
            method: .put, url: url, headers: ["Content-Type": "application/json", "X-Note": "it's", "X-Empty": ""],
            body: Data(#"{"name": "O'Brien"}"#.utf8))
        let command = request.cURLDescription
        let (status, output) = try await Subprocess.run(shell, ["-c", curl.path + command.dropFirst("curl".count) + " --silent"])
        #expect(status == 0, "\(command)")
        let echo = try JSONValue(parsing: output)
        #expect(echo["method"] == "PUT")
        #expect(echo["args"]?["filter[year]"] == "1999")
        #expect(echo["args"]?["q"] == "C++")
        #expect(echo["headers"]?["X-Note"] == "it's")
        // `-H 'X-Empty:'` would have told curl to leave the field out.
        #expect(echo["headers"]?["X-Empty"] == "")
        #expect(echo["json"]?["name"] == "O'Brien")
    }

    @Test("the in-flight count rises with concurrent calls and returns to zero")
    func activity() async throws {
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL)
        let activity = NetworkActivity()
        configuration.activity = activity
        let repository = TestAPI.Repository(configuration: configuration)
        // Subscribed before the calls start (the stream registers when made), not by a task that may run late.
        let updates = activity.updates()
        let counts = Task {
            var seen: [Int] = []
            for await count in updates {
                seen.append(count)
                if seen.count > 1, count == 0 { break }
            }
            return seen
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    // Long enough that the four overlap however late a busy pool starts the last.
                    _ = await repository.performAuthenticationRequest(Endpoint<Void>.get("slow", parameters: ["seconds": 2]))
                }
            }
        }
        let seen = await counts.value
        #expect(seen.first == 0)
        #expect(seen.max() == 4)
        #expect(seen.last == 0)
        #expect(activity.inFlight == 0)
    }

    @Test("a blocking call from a plain thread returns the result, or a timeout carrying the request")
    func blocking() async throws {
        let repository = try TestAPI.anonymous()
        // A generous wait for the echo: at the start of a full run the cooperative pool (two threads on
        // a two-core machine) can take seconds to start the call's task.
        let (echo, slow) = await onPlainThread {
            (
                repository.performBlockingRequest(
                    Endpoint<TestAPI.Echo>.get("echo", parameters: ["q": 1]).withoutSession(), maximumWait: 30),
                repository.performBlockingRequest(Endpoint<Void>.get("slow", parameters: ["seconds": 5]).withoutSession(), maximumWait: 0.3)
            )
        }
        #expect((try? echo.get())?.args["q"] == ["1"])
        guard case .timeout(let context)? = slow.failure else {
            Issue.record("expected .timeout, got \(String(describing: slow.failure))")
            return
        }
        #expect(context.request.url.path.hasSuffix("/slow"))
    }

    @Test("a blocking call whose answer arrives after the wait but before the cancellation takes effect returns that answer")
    func blockingAnswerAfterTheWait() async throws {
        let repository = try TestAPI.anonymous()
        // The server has answered (a write it carried out), and the answer comes back just after
        // the wait ran out: reporting a timeout would make the caller send it again.
        let late = LateAnswer()
        let slow = TestAPI.Repository(configuration: repository.configuration, transport: repository.transport, interceptors: [late])
        // In a busy run the call may not start before its wait runs out; such a try proves
        // nothing, and the next waits for a settled pool first (for a minute at most).
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            await settledPool()
            late.reset()
            let result = await onPlainThread {
                slow.performBlockingRequest(Endpoint<TestAPI.Echo>.post("echo", parameters: ["q": 1]).withoutSession(), maximumWait: 0.5)
            }
            guard late.answeredAfterCancellation else { continue }
            #expect(result.failure == nil, "got \(String(describing: result.failure))")
            return
        }
        Issue.record("the call never started before its wait ran out")
    }

    @Test(
        "a blocking call from a transport's own thread (a progress handler) is refused, not deadlocked", arguments: TransportUnderTest.all)
    func blockingFromTransportThread(transport: TransportUnderTest) async throws {
        let repository = try TestAPI.anonymous(transport: transport.make())
        let inner = Mutex<Result<Void, RepositoryError>?>(nil)
        let outer = await repository.performRawRequest(
            Endpoint<TransportResponse>.get("bytes/100000").withoutSession().reportingProgress { _ in
                guard inner.withLock({ $0 == nil }) else { return }
                let result = repository.performBlockingRequest(Endpoint<Void>.get("health").withoutSession(), maximumWait: 5)
                inner.withLock { $0 = result }
            })
        #expect(outer.failure == nil)
        guard case .invalidRequest(let reason, _)? = inner.withLock({ $0 })?.failure else {
            Issue.record("expected .invalidRequest, got \(String(describing: inner.withLock { $0 }))")
            return
        }
        #expect(reason.contains("transport"))
    }

    @Test(
        "a blocking call from a body sink (a transport's own thread, outside any task) is refused, not deadlocked",
        arguments: TransportUnderTest.all)
    func blockingFromSink(transport: TransportUnderTest) async throws {
        let repository = try TestAPI.anonymous(transport: transport.make())
        let sink = BlockingSink(repository: repository)
        let attach = SinkAttacher(sink: sink)
        let attached = TestAPI.Repository(configuration: repository.configuration, transport: repository.transport, interceptors: [attach])
        let outer = await attached.performRawRequest(Endpoint<TransportResponse>.get("health").withoutSession())
        #expect(outer.failure == nil)
        guard case .invalidRequest(let reason, _)? = sink.inner.withLock({ $0 })?.failure else {
            Issue.record("expected .invalidRequest, got \(String(describing: sink.inner.withLock { $0 }))")
            return
        }
        #expect(reason.contains("transport"))
    }

    @Test("a blocking call from async code is refused at once instead of risking a deadlock")
    func blockingFromAsync() async throws {
        let repository = try TestAPI.anonymous()
        let result = repository.performBlockingRequest(Endpoint<Void>.get("health").withoutSession(), maximumWait: 5)
        guard case .invalidRequest(let reason, _)? = result.failure else {
            Issue.record("expected .invalidRequest, got \(String(describing: result.failure))")
            return
        }
        #expect(reason.contains("async"))
    }
}

/// A sink that makes a blocking call when the head arrives, then leaves the body to the call.
private final class BlockingSink: ResponseBodySink {
    let repository: TestAPI.Repository
    let inner = Mutex<Result<Void, RepositoryError>?>(nil)

    init(repository: TestAPI.Repository) {
        self.repository = repository
    }

    func begin(_ head: ResponseHead, canPause: Bool, resume: @escaping @Sendable () -> Void) -> Bool {
        let result = repository.performBlockingRequest(Endpoint<Void>.get("health").withoutSession(), maximumWait: 5)
        inner.withLock { $0 = result }
        return false
    }

    func receive(_ bytes: UnsafeRawBufferPointer) -> ResponseBodySinkStatus { .accepted }
}

/// Attaches a sink to every request.
private struct SinkAttacher: Interceptor {
    let sink: any ResponseBodySink

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        var request = request
        request.responseBodySink = sink
        return try await next(request)
    }
}

/// Holds the server's answer until the call is cancelled (at most 5 s), then returns it.
private final class LateAnswer: Interceptor {
    private let answered = Mutex(false)

    var answeredAfterCancellation: Bool { answered.withLock { $0 } }

    func reset() { answered.withLock { $0 = false } }

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        let response = try await next(request)
        for _ in 0..<500 where !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
        answered.withLock { $0 = Task.isCancelled }
        return response
    }
}

/// Keeps every record it is given.
final class RecordingLogger: NetworkLogging {
    private let stored = Mutex<[LogRecord]>([])

    var records: [LogRecord] { stored.withLock { $0 } }

    func log(_ record: LogRecord) { stored.withLock { $0.append(record) } }
}

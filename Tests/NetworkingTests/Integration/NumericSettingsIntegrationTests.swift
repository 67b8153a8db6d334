import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// How a call made with one setting at one value ended.
enum SettingOutcome: Sendable, CustomStringConvertible {
    case success
    case repository(RepositoryError)
    case transport(TransportError)
    /// The call ended, but not as the case expects (what it did instead).
    case unexpected(String)

    init<T>(_ result: Result<T, RepositoryError>) {
        switch result {
        case .success: self = .success
        case .failure(let error): self = .repository(error)
        }
    }

    init<T>(_ result: Result<T, TransportError>) {
        switch result {
        case .success: self = .success
        case .failure(let error): self = .transport(error)
        }
    }

    var description: String {
        switch self {
        case .success: "success"
        // Describing the error proves that its description does not trap either.
        case .repository(let error): "\(error)"
        case .transport(let error): "transport error \(error)"
        case .unexpected(let what): "unexpected: \(what)"
        }
    }
}

/// One numeric setting at one value: a real call made with it, and what it may end in besides
/// success, `.invalidConfiguration` naming the setting and `.invalidRequest`.
struct NumericSettingCase: Sendable, CustomTestStringConvertible {
    let setting: String
    let value: String
    let run: @Sendable (TestServers) async throws -> SettingOutcome
    /// Other clear outcomes this value may have (a tiny limit refusing a body, say).
    var alsoAccepts: @Sendable (SettingOutcome) -> Bool = { _ in false }

    var testDescription: String { "\(setting) = \(value)" }

    func accepts(_ outcome: SettingOutcome) -> Bool {
        switch outcome {
        case .success: return true
        case .repository(.invalidConfiguration(let reason))
        where reason.contains(setting.split(separator: ".").last.map(String.init) ?? setting):
            return true
        case .repository(.invalidRequest), .transport(.invalidRequest): return true
        default: return alsoAccepts(outcome)
        }
    }
}

/// The values every numeric setting is tried with.
private let doubles: [Double] = [-.infinity, -1, 0, 1e300, .infinity, .nan]
private let integers: [Int] = [.min, -1, 0, .max]

private func describe(_ value: Double) -> String { "\(value)" }

/// A configuration for the test API with a timeout of a few seconds.
private func apiConfiguration(_ servers: TestServers, timeout: TimeInterval = 5) throws -> NetworkingConfiguration {
    try TestServers.configuration(servers.apiURL, timeout: timeout, secondsBetweenPolls: 0.01)
}

private func health(_ configuration: NetworkingConfiguration, transport: (any Transport)? = nil) async -> SettingOutcome {
    let repository = TestAPI.Repository(configuration: configuration, transport: transport)
    return SettingOutcome(await repository.performRequest(Endpoint<Void>.get("health").withoutSession()))
}

private func poll(_ configuration: NetworkingConfiguration, readyAfter: Int) async -> SettingOutcome {
    let repository = TestAPI.Repository(configuration: configuration)
    let endpoint = Endpoint<Void>.get("poll/numeric-\(UUID().uuidString)", parameters: ["ready_after": readyAfter]).withoutSession()
    return SettingOutcome(await repository.performPollingRequest(endpoint))
}

/// A call to `/flaky` that fails once with 503 (and `Retry-After` when given), with a test clock.
private func flaky(_ configuration: NetworkingConfiguration, retryAfter: Int? = nil) async -> SettingOutcome {
    var configuration = configuration
    configuration.clock = TestClock().networkingClock
    var parameters: [String: any Sendable] = ["failures": 1]
    if let retryAfter { parameters["retry_after"] = retryAfter }
    let repository = TestAPI.Repository(configuration: configuration)
    let endpoint = Endpoint<Void>.get("flaky/numeric-\(UUID().uuidString)", parameters: parameters).withoutSession()
    return SettingOutcome(await repository.performRequest(endpoint))
}

/// A logged-in call to `users/me` with a token that has a known expiry and a refresher.
///
/// The refresher logs in again instead of calling `auth/refresh`: other suites count the test
/// API's refresh calls, and must not see these.
private func refreshing(_ servers: TestServers, policy: RefreshPolicy) async throws -> SettingOutcome {
    let configuration = try apiConfiguration(servers)
    let anonymous = TestAPI.Repository(configuration: configuration)
    let refresher = ClosureRefresher { credential in
        await anonymous.login().map { Credential(accessToken: $0.token, refreshToken: credential.refreshToken) }
    }
    let session = SessionManager<TestAPI.User>(refresher: refresher, refreshPolicy: policy)
    let repository = TestAPI.Repository(configuration: configuration, sessionManager: session)
    let login = try await anonymous.login().get()
    try session.login(
        user: login.user,
        credential: Credential(
            accessToken: login.token, refreshToken: login.refreshToken, expiresAt: Date().addingTimeInterval(login.expiresIn ?? 3600)))
    return SettingOutcome(await repository.fetchCurrentUser())
}

private func isExcessiveRefresh(_ outcome: SettingOutcome) -> Bool {
    if case .repository(.sessionRefreshFailed(.excessiveRefresh, _)) = outcome { return true }
    return false
}

private func isTooLarge(_ outcome: SettingOutcome) -> Bool {
    if case .repository(.responseTooLarge(limit: 1, _)) = outcome { return true }
    return false
}

private func isTooManyRedirects(_ outcome: SettingOutcome) -> Bool {
    if case .repository(.invalidResponse(let reason, _)) = outcome { return reason.contains("too many redirects") }
    return false
}

extension NumericSettingCase {
    static let all: [NumericSettingCase] = configurationCases + retryCases + requestCases + sessionCases + transportCases

    static let configurationCases: [NumericSettingCase] =
        doubles.map { value in
            NumericSettingCase(setting: "timeout", value: describe(value)) { servers in
                var configuration = try apiConfiguration(servers)
                configuration.timeout = value
                return await health(configuration)
            }
        }
        + doubles.map { value in
            NumericSettingCase(
                setting: "secondsBetweenPolls", value: describe(value),
                run: { servers in
                    var configuration = try apiConfiguration(servers)
                    configuration.secondsBetweenPolls = value
                    return await poll(configuration, readyAfter: 1)
                },
                // A huge interval leaves no time for a second try within the timeout.
                alsoAccepts: { if case .repository(.pollingExhausted(attempts: 1, _)) = $0 { value > 1 } else { false } })
        }
        + integers.map { value in
            NumericSettingCase(
                setting: "maximumPollingRetries", value: "\(value)",
                run: { servers in
                    var configuration = try apiConfiguration(servers)
                    configuration.maximumPollingRetries = value
                    return await poll(configuration, readyAfter: 1)
                },
                alsoAccepts: { if case .repository(.pollingExhausted(attempts: 1, _)) = $0 { value == 0 } else { false } })
        }
        + integers.map { value in
            NumericSettingCase(setting: "port", value: "\(value)") { servers in
                var configuration = try apiConfiguration(servers)
                configuration.port = value
                return await health(configuration)
            }
        }
        + integers.map { value in
            NumericSettingCase(setting: "logging.bodyLimit", value: "\(value)") { servers in
                var configuration = try apiConfiguration(servers)
                let logger = RecordingLogger()
                configuration.logging = LoggingConfiguration(level: .debug, logger: logger, bodyLimit: value)
                let repository = TestAPI.Repository(configuration: configuration)
                let json = await repository.performRequest(Endpoint<Void>.post("echo", parameters: ["text": "hello"]).withoutSession())
                let binary = await repository.performRequest(Endpoint<Void>.get("bytes/3000").withoutSession())
                if case .failure(let error) = json { return .repository(error) }
                if case .failure(let error) = binary { return .repository(error) }
                // Two requests and two responses were logged.
                return logger.records.count == 4 ? .success : .unexpected("\(logger.records.count) log records")
            }
        }

    static let retryCases: [NumericSettingCase] =
        integers.map { value in
            NumericSettingCase(setting: "retryPolicy.maximumAttempts", value: "\(value)") { servers in
                var configuration = try apiConfiguration(servers)
                configuration.retryPolicy = RetryPolicy(maximumAttempts: value)
                return await flaky(configuration)
            }
        }
        + doubles.map { value in
            NumericSettingCase(setting: "retryPolicy.baseDelay", value: describe(value)) { servers in
                var configuration = try apiConfiguration(servers)
                configuration.retryPolicy = RetryPolicy(baseDelay: value)
                return await flaky(configuration)
            }
        }
        + doubles.map { value in
            NumericSettingCase(setting: "retryPolicy.maximumDelay", value: describe(value)) { servers in
                var configuration = try apiConfiguration(servers)
                configuration.retryPolicy = RetryPolicy(baseDelay: 1e6, maximumDelay: value)
                return await flaky(configuration)
            }
        }
        + doubles.map { value in
            NumericSettingCase(
                setting: "retryPolicy.maximumRetryAfter", value: describe(value),
                run: { servers in
                    var configuration = try apiConfiguration(servers)
                    configuration.retryPolicy = RetryPolicy(maximumRetryAfter: value)
                    return await flaky(configuration, retryAfter: 5)
                },
                // A Retry-After of 5 s beyond the maximum ends the retries with the 503.
                alsoAccepts: {
                    if case .repository(.requestError(let context)) = $0 { value < 5 && context.statusCode == 503 } else { false }
                })
        }

    static let requestCases: [NumericSettingCase] =
        doubles.map { value in
            NumericSettingCase(setting: "Endpoint.timeout", value: describe(value)) { servers in
                let repository = TestAPI.Repository(configuration: try apiConfiguration(servers))
                return SettingOutcome(await repository.performRequest(Endpoint<Void>(.get, "health", timeout: value).withoutSession()))
            }
        }
        + doubles.map { value in
            NumericSettingCase(
                setting: "performBlockingRequest(maximumWait:)", value: describe(value),
                run: { servers in
                    let repository = TestAPI.Repository(configuration: try apiConfiguration(servers))
                    let result = await onPlainThread {
                        repository.performBlockingRequest(Endpoint<Void>.get("health").withoutSession(), maximumWait: value)
                    }
                    return SettingOutcome(result)
                },
                // No time at all to wait is a clear timeout.
                alsoAccepts: { if case .repository(.timeout) = $0 { value == 0 } else { false } })
        }

    static let sessionCases: [NumericSettingCase] =
        doubles.map { value in
            NumericSettingCase(setting: "NetworkActivity(slowCallDelay:)", value: describe(value)) { servers in
                // A call marked preventUserInteraction, which arms the slow-call timer.
                var configuration = try apiConfiguration(servers)
                configuration.activity = NetworkActivity(slowCallDelay: value)
                configuration.routes = try RouteTable([
                    Route(name: "health", path: "health", requiresSession: false, preventUserInteraction: true)
                ])
                let repository = TestAPI.Repository(configuration: configuration)
                return SettingOutcome(await repository.performRequest(Endpoint<Void>.route("health")))
            }
        }
        + doubles.map { value in
            NumericSettingCase(setting: "RefreshPolicy.leeway", value: describe(value)) { servers in
                try await refreshing(servers, policy: RefreshPolicy(leeway: value))
            }
        }
        + integers.map { value in
            NumericSettingCase(
                setting: "RefreshWindow.maximumRefreshes", value: "\(value)",
                run: { servers in
                    // An infinite leeway makes the token count as expired: one refresh is needed.
                    try await refreshing(servers, policy: RefreshPolicy(leeway: .infinity, window: RefreshWindow(maximumRefreshes: value)))
                },
                alsoAccepts: { isExcessiveRefresh($0) && value < 1 })
        }
        + doubles.map { value in
            NumericSettingCase(
                setting: "RefreshWindow.interval", value: describe(value),
                run: { servers in
                    // No refresh allowed at all: the window's error, with its interval, is described.
                    try await refreshing(
                        servers, policy: RefreshPolicy(leeway: .infinity, window: RefreshWindow(maximumRefreshes: 0, interval: value)))
                },
                alsoAccepts: isExcessiveRefresh)
        }

    static let transportCases: [NumericSettingCase] =
        integers.map { value in
            NumericSettingCase(
                setting: "LibcurlTransport(maximumResponseSize:)", value: "\(value)",
                run: { servers in
                    let repository = TestAPI.Repository(
                        configuration: try apiConfiguration(servers), transport: LibcurlTransport(maximumResponseSize: value))
                    return SettingOutcome(await repository.performRequest(Endpoint<Void>.get("bytes/100").withoutSession()))
                },
                alsoAccepts: { isTooLarge($0) && value < 1 })
        }
        + integers.map { value in
            NumericSettingCase(
                setting: "LibcurlTransport(maximumRedirects:)", value: "\(value)",
                run: { servers in
                    let repository = TestAPI.Repository(
                        configuration: try apiConfiguration(servers), transport: LibcurlTransport(maximumRedirects: value))
                    return SettingOutcome(
                        await repository.performRequest(
                            Endpoint<Void>.get("redirect/302", parameters: ["to": "/api/v1/health"]).withoutSession()))
                },
                alsoAccepts: { isTooManyRedirects($0) && value < 1 })
        }
        + doubles.map { value in
            NumericSettingCase(setting: "LibcurlTransport(connectTimeout:)", value: describe(value)) { servers in
                await health(try apiConfiguration(servers), transport: LibcurlTransport(connectTimeout: value))
            }
        }
        + integers.map { value in
            NumericSettingCase(setting: "LibcurlTransport(maximumResponseHeadSize:)", value: "\(value)") { servers in
                await health(try apiConfiguration(servers), transport: LibcurlTransport(maximumResponseHeadSize: value))
            }
        }
        + integers.map { value in
            NumericSettingCase(
                setting: "URLSessionTransport(maximumResponseSize:)", value: "\(value)",
                run: { servers in
                    let repository = TestAPI.Repository(
                        configuration: try apiConfiguration(servers), transport: URLSessionTransport(maximumResponseSize: value))
                    return SettingOutcome(await repository.performRequest(Endpoint<Void>.get("bytes/100").withoutSession()))
                },
                alsoAccepts: { isTooLarge($0) && value < 1 })
        }
        + integers.map { value in
            NumericSettingCase(
                setting: "URLSessionTransport(maximumRedirects:)", value: "\(value)",
                run: { servers in
                    let repository = TestAPI.Repository(
                        configuration: try apiConfiguration(servers), transport: URLSessionTransport(maximumRedirects: value))
                    return SettingOutcome(
                        await repository.performRequest(
                            Endpoint<Void>.get("redirect/302", parameters: ["to": "/api/v1/health"]).withoutSession()))
                },
                alsoAccepts: { isTooManyRedirects($0) && value < 1 })
        }
        + integers.map { value in
            NumericSettingCase(setting: "CookieStorage(maximumCookiesPerDomain:maximumCookies:)", value: "\(value)") { servers in
                var configuration = try TestServers.configuration(servers.httpbinURL, timeout: 15)
                let storage = CookieStorage(maximumCookiesPerDomain: value, maximumCookies: value)
                configuration.cookieStorage = storage
                let repository = TestAPI.Repository(configuration: configuration)
                let result = await repository.performRequest(
                    Endpoint<JSONValue>.get("cookies/set", parameters: ["a": "1", "b": "2"]).withoutSession())
                guard case .success(let echo) = result else { return SettingOutcome(result) }
                let kept = storage.allCookies.count
                // A limit below 1 keeps 1 cookie; a huge one keeps both; the server saw what was kept.
                let expected = value < 1 ? 1 : 2
                guard kept == expected, echo["cookies"]?.objectCount == kept else {
                    return .unexpected("kept \(kept) cookies, the server saw \(String(describing: echo["cookies"]))")
                }
                return .success
            }
        }
        + [TransportUnderTest.libcurl, .urlSession].flatMap { kind in
            [Double.nan, -1, 0, .infinity].map { value in
                NumericSettingCase(
                    setting: "TransportRequest.timeout on \(kind)", value: describe(value),
                    run: { servers in
                        let request = try Wire.request(servers.apiURL + "/health", timeout: value)
                        return SettingOutcome(await Wire.send(request, over: kind.make()))
                    },
                    // A timeout at or below zero has passed already.
                    alsoAccepts: { if case .transport(.timedOut) = $0 { value <= 0 } else { false } })
            }
        }
}

extension JSONValue {
    /// The number of members of an object, or `nil`.
    fileprivate var objectCount: Int? {
        if case .object(let members) = self { return members.count }
        return nil
    }
}

/// No numeric setting traps or hangs: every value gives a clear error or a sane result.
@Suite("Numeric settings never trap or hang", .serialized, .timeLimit(.minutes(2)))
struct NumericSettingsIntegrationTests {
    @Test("Each numeric setting at negative, zero, huge, infinite and NaN values", arguments: NumericSettingCase.all)
    func setting(_ setting: NumericSettingCase) async throws {
        // Given
        let servers = try TestServers.require()
        // When: the call, bounded so that a hang fails the test instead of stalling it
        let outcome = await withTaskGroup(of: SettingOutcome?.self) { group in
            group.addTask {
                do {
                    return try await setting.run(servers)
                } catch let error as RepositoryError {
                    return .repository(error)
                } catch {
                    Issue.record("the setup failed: \(error)")
                    return .success
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(20))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        // Then
        let finished = try #require(outcome, "\(setting.testDescription) hung")
        #expect(setting.accepts(finished), "\(setting.testDescription) ended with \(finished)")
    }

    @Test("The initializer names an invalid timeout, poll interval or retry count; valid huge values are accepted")
    func initializer() throws {
        for value in doubles {
            let valid = value > 0 && value.isFinite
            do throws(RepositoryError) {
                _ = try NetworkingConfiguration(domainURL: "api.test", timeout: value)
                #expect(valid, "timeout \(value) was accepted")
            } catch {
                #expect(!valid && "\(error)".contains("timeout"), "timeout \(value): \(error)")
            }
            let validInterval = value >= 0 && value.isFinite
            do throws(RepositoryError) {
                _ = try NetworkingConfiguration(domainURL: "api.test", secondsBetweenPolls: value)
                #expect(validInterval, "secondsBetweenPolls \(value) was accepted")
            } catch {
                #expect(!validInterval && "\(error)".contains("secondsBetweenPolls"), "secondsBetweenPolls \(value): \(error)")
            }
        }
        for value in integers {
            let configuration = try? NetworkingConfiguration(domainURL: "api.test", maximumPollingRetries: value)
            #expect((configuration != nil) == (value >= 0), "maximumPollingRetries \(value)")
            if let configuration { #expect((0...Int.max).contains(configuration.pollingRetries)) }
        }
    }

    @Test("Excessive-refresh descriptions hold any interval", arguments: doubles)
    func refreshFailureDescription(interval: Double) {
        let text = RefreshFailure.excessiveRefresh(maximum: .max, interval: interval).description
        #expect(text.contains("refreshes within"))
    }
}

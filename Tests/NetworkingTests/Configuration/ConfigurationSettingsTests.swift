import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// A setting changed to an invalid value, how to fix it, and what the error must name.
struct InvalidSetting: Sendable, CustomTestStringConvertible {
    let name: String
    let named: String
    let breakIt: @Sendable (inout NetworkingConfiguration) -> Void
    let fixIt: @Sendable (inout NetworkingConfiguration) -> Void

    var testDescription: String { name }

    static let all: [InvalidSetting] = [
        InvalidSetting(name: "empty domainURL", named: "domainURL", breakIt: { $0.domainURL = "" }, fixIt: { $0.domainURL = "api.test" }),
        InvalidSetting(
            name: "domainURL with a scheme", named: "domainURL", breakIt: { $0.domainURL = "https://api.test" },
            fixIt: { $0.domainURL = "api.test" }),
        InvalidSetting(name: "port 70000", named: "port", breakIt: { $0.port = 70000 }, fixIt: { $0.port = 8080 }),
        InvalidSetting(name: "port 0", named: "port", breakIt: { $0.port = 0 }, fixIt: { $0.port = nil }),
        InvalidSetting(
            name: "subdomainURL without a slash", named: "subdomainURL", breakIt: { $0.subdomainURL = "api/v2" },
            fixIt: { $0.subdomainURL = "/api/v2" }),
        InvalidSetting(name: "timeout -1", named: "timeout", breakIt: { $0.timeout = -1 }, fixIt: { $0.timeout = 5 }),
        InvalidSetting(name: "timeout NaN", named: "timeout", breakIt: { $0.timeout = .nan }, fixIt: { $0.timeout = 5 }),
        InvalidSetting(
            name: "secondsBetweenPolls -1", named: "secondsBetweenPolls", breakIt: { $0.secondsBetweenPolls = -1 },
            fixIt: { $0.secondsBetweenPolls = 0 }),
        InvalidSetting(
            name: "maximumPollingRetries -1", named: "maximumPollingRetries", breakIt: { $0.maximumPollingRetries = -1 },
            fixIt: { $0.maximumPollingRetries = nil }),
        InvalidSetting(
            name: "a header value with CR LF", named: "defaultHeaders",
            breakIt: { $0.defaultHeaders["X-Injected"] = "a\r\nX-Evil: 1" }, fixIt: { $0.defaultHeaders["X-Injected"] = nil }),
        InvalidSetting(
            name: "a header name with a space", named: "defaultHeaders", breakIt: { $0.defaultHeaders["Bad Name"] = "x" },
            fixIt: { $0.defaultHeaders = [:] }),
        InvalidSetting(
            name: "pinning on without pins", named: "usePinningCertificate", breakIt: { $0.usePinningCertificate = true },
            fixIt: { $0.usePinningCertificate = false }),
        InvalidSetting(
            name: "a missing pinned certificate file", named: "/no/such/pinned.pem",
            breakIt: { $0.pinnedCertificateFiles = [URL(fileURLWithPath: "/no/such/pinned.pem")] },
            // The file turned pinning on; removing it leaves pinning on with no pins, so it is turned off too.
            fixIt: {
                $0.pinnedCertificateFiles = []
                $0.usePinningCertificate = false
            }),
        InvalidSetting(
            name: "a missing certificate authority file", named: "certificateAuthorityFile",
            breakIt: { $0.certificateAuthorityFile = URL(fileURLWithPath: "/no/such/ca.pem") },
            fixIt: { $0.certificateAuthorityFile = nil }),
        InvalidSetting(
            name: "retryPolicy.maximumAttempts 0", named: "maximumAttempts", breakIt: { $0.retryPolicy.maximumAttempts = 0 },
            fixIt: { $0.retryPolicy = .default }),
        InvalidSetting(
            name: "retryPolicy.baseDelay NaN", named: "baseDelay", breakIt: { $0.retryPolicy.baseDelay = .nan },
            fixIt: { $0.retryPolicy.baseDelay = 0.1 }),
        InvalidSetting(
            name: "logging.bodyLimit -1", named: "bodyLimit", breakIt: { $0.logging.bodyLimit = -1 },
            fixIt: { $0.logging.bodyLimit = 10 }),
    ]
}

@Suite("NetworkingConfiguration settings a user can change")
struct ConfigurationSettingsTests {
    private static let bookJSON = #"{"id": 1, "title": "Dune", "genre": "fiction"}"#

    @Test("Every setting can be assigned after init")
    func everySettingIsVar() throws {
        // Given
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        let storage = CookieStorage()
        let decoder = JSONDecoder()
        let encoder = JSONEncoder()
        let clock = TestClock()
        // When
        configuration.useSecureConnection = false
        configuration.domainURL = "127.0.0.1"
        configuration.port = 8080
        configuration.subdomainURL = "/api/v2"
        configuration.usePinningCertificate = false
        configuration.pinnedPublicKeys = []
        configuration.pinnedCertificateFiles = []
        configuration.certificateAuthorityFile = nil
        configuration.timeout = 12
        configuration.secondsBetweenPolls = 0.25
        configuration.maximumPollingRetries = 4
        configuration.defaultHeaders = ["X-App": "books"]
        configuration.queryEncodedMethods = [.get, .post]
        configuration.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric)
        configuration.cookieStorage = storage
        configuration.jsonDecoder = decoder
        configuration.jsonEncoder = encoder
        configuration.decodingFailureHandler = { _ in }
        configuration.retryPolicy = .default
        configuration.logging = LoggingConfiguration(level: .info, logger: RecordingLogger())
        configuration.interceptors = []
        configuration.activity = NetworkActivity()
        configuration.clock = clock.networkingClock
        configuration.secretFields = ["x-app"]
        // Then
        #expect(configuration.validationError == nil)
        #expect(configuration.baseURL.absoluteString == "http://127.0.0.1:8080/api/v2")
        #expect(configuration.timeout == 12)
        #expect(configuration.pollingRetries == 4)
        #expect(configuration.defaultHeaders["X-App"] == "books")
        #expect(configuration.queryEncodedMethods == [.get, .post])
        #expect(configuration.queryEncodingStyle == QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric))
        #expect(configuration.cookieStorage === storage)
        #expect(configuration.jsonDecoder === decoder)
        #expect(configuration.jsonEncoder === encoder)
        #expect(configuration.decodingFailureHandler != nil)
        #expect(configuration.logging.level == .info)
        #expect(configuration.secretFields == ["x-app"])
    }

    @Test("A changed setting applies to repositories made afterwards; those made before keep their copy")
    func changesApplyAfterwards() async throws {
        // Given
        let transport = StubTransport(routes: [.json(.post, "books", Self.bookJSON), .json(.get, "books", "[]")])
        var configuration = try makeConfiguration()
        let before = TestRepository(configuration: configuration, transport: transport)
        // When
        configuration.domainURL = "other.test"
        configuration.port = 8443
        configuration.subdomainURL = "/v2"
        configuration.timeout = 7
        configuration.defaultHeaders = ["X-App": "books"]
        configuration.queryEncodedMethods = [.get, .post]
        configuration.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric)
        let after = TestRepository(configuration: configuration, transport: transport)
        let parameters: Parameters = ["ids": [1, 2], "draft": true]
        _ = try await before.performRequest(Endpoint<Book>.post("books", parameters: parameters)).get()
        _ = try await after.performRequest(Endpoint<Book>.post("books", parameters: parameters)).get()
        // Then
        let (old, new) = (transport.requests[0], transport.requests[1])
        #expect(old.url.absoluteString == "http://api.test/api/v1/books")
        #expect(old.timeout == NetworkingConfiguration.defaultTimeout)
        #expect(old.headers["X-App"] == nil)
        #expect(try jsonBody(of: old) == ["draft": true, "ids": [1, 2]])
        #expect(new.url.absoluteString == "http://other.test:8443/v2/books?draft=1&ids=1&ids=2")
        #expect(new.timeout == 7)
        #expect(new.headers["X-App"] == "books")
        #expect(new.body == nil)
    }

    @Test("A new decoder with other strategies applies to repositories made afterwards")
    func newDecoder() async throws {
        // Given
        struct Stamped: Decodable, Sendable {
            let createdAt: Date
        }
        let transport = StubTransport(routes: [.json(.get, "stamp", #"{"created_at": "2024-01-02T03:04:05Z"}"#)])
        var configuration = try makeConfiguration()
        let before = TestRepository(configuration: configuration, transport: transport)
        // When
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        configuration.jsonDecoder = decoder
        let after = TestRepository(configuration: configuration, transport: transport)
        let old = await before.performRequest(Endpoint<Stamped>.get("stamp"))
        let new = await after.performRequest(Endpoint<Stamped>.get("stamp"))
        // Then
        #expect(try new.get().createdAt == Date(timeIntervalSince1970: 1_704_164_645))
        guard case .decodeError? = old.failure else {
            Issue.record("the repository made before keeps the plain decoder, got \(old)")
            return
        }
    }

    @Test("Changing the decoder's strategies in place after a repository was made does not change that repository")
    func decoderChangedInPlace() async throws {
        // Given
        struct Stamped: Decodable, Sendable {
            let createdAt: String
        }
        let transport = StubTransport(routes: [.json(.get, "stamp", #"{"created_at": "2024"}"#)])
        let configuration = try makeConfiguration()
        let before = TestRepository(configuration: configuration, transport: transport)
        // When: the configuration is a value, and its copy was given to the repository
        let changed = configuration
        changed.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
        let after = TestRepository(configuration: changed, transport: transport)
        let old = await before.performRequest(Endpoint<Stamped>.get("stamp"))
        let new = await after.performRequest(Endpoint<Stamped>.get("stamp"))
        // Then
        #expect(try new.get().createdAt == "2024")
        #expect(old.failure != nil, "the repository made before changed with the copy: its decoder is shared")
        // The decoder is a class: the configuration's copies share it, as documented.
        #expect(!configuration.jsonDecoder.keyDecodingStrategy.isDefault)
    }

    @Test(
        "An invalid value: validationError is set, validate() throws naming it, every request fails before sending; fixing clears it",
        arguments: InvalidSetting.all)
    func invalidValue(setting: InvalidSetting) async throws {
        // Given
        let transport = StubTransport(routes: [
            .json(.get, "books", "[]"), .json(.get, "books/1", Self.bookJSON), .json(.post, "books", Self.bookJSON),
        ])
        var configuration = try makeConfiguration()
        // When
        setting.breakIt(&configuration)
        // Then
        let reason = try #require(configuration.validationError.flatMap(Self.reason), "validationError is nil")
        #expect(reason.contains(setting.named), "\(reason)")
        do throws(RepositoryError) {
            try configuration.validate()
            Issue.record("validate() did not throw")
        } catch {
            #expect(Self.reason(error) == reason)
        }
        let repository = TestRepository(configuration: configuration, transport: transport)
        let failures: [RepositoryError?] = [
            await repository.performRequest(Endpoint<Book>.get("books/1")).failure,
            await repository.performRequest(Endpoint<Void>.get("books")).failure,
            await repository.performRequest(Endpoint<RepositoryResponse<Book>>.get("books/1")).failure,
            await repository.performRequest(Endpoint<TransportResponse>.get("books")).failure,
            await repository.performRequest(Endpoint<String>.get("books").decoding { _ in "x" }).failure,
            await repository.performPollingRequest(Endpoint<Book>.get("books/1")).failure,
            await repository.performAuthenticationRequest(Endpoint<Book>.post("books", parameters: ["a": 1])).failure,
        ]
        for failure in failures {
            #expect(failure.flatMap(Self.reason) == reason, "\(String(describing: failure))")
        }
        let blocking = await onPlainThread { repository.performBlockingRequest(Endpoint<Book>.get("books/1"), maximumWait: 5) }
        #expect(blocking.failure.flatMap(Self.reason) == reason, "\(blocking)")
        #expect(transport.requests.isEmpty)
        // When fixed
        setting.fixIt(&configuration)
        // Then
        #expect(configuration.validationError == nil)
        let fixed = TestRepository(configuration: configuration, transport: transport)
        #expect(throws: Never.self) { try configuration.validate() }
        _ = try await fixed.performRequest(Endpoint<Book>.get("books/1")).get()
        #expect(transport.requests.count == 1)
    }

    @Test("The initializer rejects the same values, naming the setting", arguments: InvalidSetting.all)
    func initializerRejects(setting: InvalidSetting) throws {
        // Given a configuration changed to an invalid value
        var configuration = try makeConfiguration()
        setting.breakIt(&configuration)
        // When it is made again with its values
        do throws(RepositoryError) {
            _ = try NetworkingConfiguration(
                useSecureConnection: configuration.useSecureConnection, domainURL: configuration.domainURL,
                port: configuration.port, subdomainURL: configuration.subdomainURL,
                usePinningCertificate: configuration.usePinningCertificate, pinnedPublicKeys: configuration.pinnedPublicKeys,
                pinnedCertificateFiles: configuration.pinnedCertificateFiles,
                certificateAuthorityFile: configuration.certificateAuthorityFile, timeout: configuration.timeout,
                secondsBetweenPolls: configuration.secondsBetweenPolls, maximumPollingRetries: configuration.maximumPollingRetries,
                defaultHeaders: configuration.defaultHeaders)
            // Retry and logging settings are not initializer arguments.
            #expect(setting.named == "maximumAttempts" || setting.named == "baseDelay" || setting.named == "bodyLimit")
        } catch {
            // Then
            #expect(Self.reason(error)?.contains(setting.named) == true, "\(error)")
        }
    }

    @Test("While the domain is invalid, baseURL keeps its last valid value")
    func baseURLKeepsLastValid() throws {
        // Given
        var configuration = try makeConfiguration()
        // When
        configuration.domainURL = ""
        // Then
        #expect(configuration.baseURL.absoluteString == "http://api.test/api/v1")
        configuration.domainURL = "fixed.test"
        #expect(configuration.baseURL.absoluteString == "http://fixed.test/api/v1")
    }

    @Test("Of several problems, fixing one leaves the other reported")
    func severalProblems() throws {
        // Given
        var configuration = try makeConfiguration()
        configuration.port = 70000
        configuration.timeout = -1
        // When
        configuration.port = 8080
        // Then
        #expect(configuration.validationError.flatMap(Self.reason)?.contains("timeout") == true)
        configuration.timeout = 1
        #expect(configuration.validationError == nil)
    }

    @Test("A session host given with a scheme, a port or a path, which no call's host would match, is refused saying so")
    func sessionHostsAreHosts() throws {
        var configuration = try makeConfiguration()
        configuration.sessionHosts = ["files.example.com", "10.0.0.7", "fd00::7", "FILES.example.org."]
        #expect(configuration.validationError == nil)
        for entry in ["https://files.example.com", "files.example.com:8443", "files.example.com/v1", "", "ci:s3cret@files.example.com"] {
            configuration.sessionHosts = ["files.example.com", entry]
            let reason = configuration.validationError.flatMap(Self.reason)
            #expect(reason?.hasPrefix("sessionHosts: ") == true, "\(entry): \(reason ?? "nil")")
            #expect(reason?.contains("s3cret") == false)
        }
    }

    private static func reason(_ error: RepositoryError) -> String? {
        if case .invalidConfiguration(let reason) = error { return reason }
        return nil
    }
}

extension JSONDecoder.KeyDecodingStrategy {
    /// Whether this is `.useDefaultKeys`.
    fileprivate var isDefault: Bool {
        if case .useDefaultKeys = self { return true }
        return false
    }
}

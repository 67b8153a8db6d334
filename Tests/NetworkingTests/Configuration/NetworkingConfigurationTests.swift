import Foundation
import Networking
import Testing

@Suite("NetworkingConfiguration")
struct NetworkingConfigurationTests {
    /// The reason of the `invalidConfiguration` error `make` throws; records an issue otherwise.
    private func rejection(_ make: () throws(RepositoryError) -> NetworkingConfiguration) -> String? {
        do {
            let configuration = try make()
            Issue.record("expected a rejection, got \(configuration.baseURL)")
            return nil
        } catch {
            guard case .invalidConfiguration(let reason) = error else {
                Issue.record("expected invalidConfiguration, got \(error)")
                return nil
            }
            return reason
        }
    }

    // MARK: - A base URL written whole

    @Test(
        "A base URL written whole gives the same configuration as its parts",
        arguments: [
            ("http://127.0.0.1:8000/api/v1", "http://127.0.0.1:8000/api/v1"),
            ("https://api.example.com", "https://api.example.com"),
            ("HTTPS://API.example.com/", "https://API.example.com"),
            ("https://api.example.com/v1/", "https://api.example.com/v1"),
            ("http://[::1]:8080/v2", "http://[::1]:8080/v2"),
            ("https://intranet.example.com/sites/Team%20Site/_api", "https://intranet.example.com/sites/Team%20Site/_api"),
            ("https://api.example.com/caf%C3%A9", "https://api.example.com/caf%C3%A9"),
            // An international host given in punycode stays so (Foundation's `host` decodes it).
            ("https://xn--bcher-kva.example/v1", "https://xn--bcher-kva.example/v1"),
            ("https://bücher.example/v1", "https://xn--bcher-kva.example/v1"),
            ("https://api.example.com:/v1", "https://api.example.com/v1"),
        ])
    func wholeBaseURL(text: String, expected: String) throws {
        #expect(try NetworkingConfiguration(baseURL: text).baseURL.absoluteString == expected)
        let url = try #require(URL(string: text))
        #expect(try NetworkingConfiguration(baseURL: url).baseURL.absoluteString == expected)
    }

    @Test(
        "A base URL that is not http(s) with a host, or that has a user, query or fragment, is refused saying so",
        arguments: [
            ("api.example.com", "not an http or https URL"),
            ("ftp://api.example.com", "not an http or https URL"),
            ("https://", "has no host"),
            ("https://user:pw@api.example.com", "user, a query or a fragment"),
            ("https://api.example.com/v1?key=1", "user, a query or a fragment"),
            ("https://api.example.com/#top", "user, a query or a fragment"),
            ("https://api.example.com:70000", "port"),
            ("https://api.example.com/tenants/a%2Fb", "encoded \"/\" (%2F)"),
            // Parts Foundation reads as none: a port too large for any number, escapes that are not UTF-8.
            ("https://api.example.com:99999999999999999999/v1", "port outside 1...65535"),
            ("https://intranet.example.com/sites/Caf%E9", "not UTF-8"),
            ("https://api.example.com/v1?k=%FF", "user, a query or a fragment"),
            ("https://api.example.com/v1#%FF", "user, a query or a fragment"),
            ("https://api.example.com%FF@other.example/v1", "user, a query or a fragment"),
        ])
    func rejectsWholeBaseURL(text: String, expected: String) {
        let reason = rejection { () throws(RepositoryError) in try NetworkingConfiguration(baseURL: text) }
        #expect(reason?.contains(expected) == true, "\(reason ?? "nil")")
    }

    // MARK: - Rejections

    @Test(
        "A domain that is not a bare host is rejected with a reason naming the problem",
        arguments: [
            ("", "empty"),
            ("https://api.example.com", "scheme"),
            ("api.example.com/v1", "path"),
            ("api.example.com:8080", "port"),
            ("api example.com", "not a valid host name"),
            ("api_ex$mple.com", "not a valid host name"),
            ("-api.example.com", "not a valid host name"),
            ("api-.example.com", "not a valid host name"),
            ("api..example.com", "not a valid host name"),
            (String(repeating: "a", count: 64) + ".com", "not a valid host name"),
            ("exämple.com", "punycode"),
        ])
    func rejectsDomain(domain: String, expected: String) {
        // Given a domain that is not a plain host
        // When a configuration is made with it
        let reason = rejection { () throws(RepositoryError) in try NetworkingConfiguration(domainURL: domain) }
        // Then it is rejected, saying why
        #expect(reason?.contains(expected) == true, "\(reason ?? "nil")")
    }

    @Test(
        "A rejected domain or subdomain is quoted without a password or key it holds",
        arguments: [
            ("https://admin:s3cret@api.example.com", "/v1"), ("admin:s3cret@api.example.com", "/v1"),
            ("api.example.com", "/v1?api_key=s3cret"), ("api.example.com", "v1/token=s3cret"),
        ])
    func rejectionsAreRedacted(domain: String, subdomain: String) {
        let reason = rejection { () throws(RepositoryError) in
            try NetworkingConfiguration(domainURL: domain, subdomainURL: subdomain)
        }
        #expect(reason != nil && reason?.contains("s3cret") == false, "\(reason ?? "nil")")
    }

    @Test("A port outside 1...65535 is rejected", arguments: [0, 65536, -1])
    func rejectsPort(port: Int) {
        // Given / When
        let reason = rejection { () throws(RepositoryError) in
            try NetworkingConfiguration(domainURL: "api.example.com", port: port)
        }
        // Then
        #expect(reason?.contains("port \(port)") == true, "\(reason ?? "nil")")
        #expect(reason?.contains("1...65535") == true)
    }

    @Test(
        "A subdomain that is not a plain absolute path is rejected",
        arguments: [
            ("api/v1", "must start with \"/\""),
            ("/api?v=1", "contains \"?\""),
            ("/api#top", "contains \"#\""),
            ("/api/v1 ", "starts or ends with a space"),
            ("/ api/v1", "starts or ends with a space"),
            ("/api\tv1", "plain path"),
            ("/api\nv1", "plain path"),
        ])
    func rejectsSubdomain(subdomain: String, expected: String) {
        // Given / When
        let reason = rejection { () throws(RepositoryError) in
            try NetworkingConfiguration(domainURL: "api.example.com", subdomainURL: subdomain)
        }
        // Then
        #expect(reason?.contains("subdomainURL") == true)
        #expect(reason?.contains(expected) == true, "\(reason ?? "nil")")
    }

    @Test("A timeout that is not a positive finite number is rejected", arguments: [0, -1, .infinity, .nan] as [Double])
    func rejectsTimeout(timeout: Double) {
        // Given / When
        let reason = rejection { () throws(RepositoryError) in
            try NetworkingConfiguration(domainURL: "api.example.com", timeout: timeout)
        }
        // Then
        #expect(reason?.contains("timeout must be a positive number") == true, "\(reason ?? "nil")")
    }

    @Test("A negative or non-finite poll interval is rejected", arguments: [-0.5, -.infinity, .nan] as [Double])
    func rejectsPollInterval(seconds: Double) {
        // Given / When
        let reason = rejection { () throws(RepositoryError) in
            try NetworkingConfiguration(domainURL: "api.example.com", secondsBetweenPolls: seconds)
        }
        // Then
        #expect(reason?.contains("secondsBetweenPolls") == true, "\(reason ?? "nil")")
    }

    @Test("A negative polling retry count is rejected")
    func rejectsNegativeRetries() {
        // Given / When
        let reason = rejection { () throws(RepositoryError) in
            try NetworkingConfiguration(domainURL: "api.example.com", maximumPollingRetries: -1)
        }
        // Then
        #expect(reason?.contains("maximumPollingRetries must not be negative") == true, "\(reason ?? "nil")")
    }

    @Test(
        "Default headers that would split the request are rejected",
        arguments: [
            (["X-Trace": "a\r\nInjected: yes"], "line break"),
            (["X-Trace": "a\nb"], "line break"),
            (["X-Trace": "a\u{0B}b"], "control character"),
            (["X-Trace": "a\u{7F}"], "control character"),
            (["Bad\r\nName": "a"], "not a valid header name"),
            (["Bad Name": "a"], "not a valid header name"),
            (["": "a"], "not a valid header name"),
        ] as [([String: String], String)])
    func rejectsHeaders(headers: [String: String], expected: String) {
        // Given / When
        let reason = rejection { () throws(RepositoryError) in
            try NetworkingConfiguration(domainURL: "api.example.com", defaultHeaders: HTTPHeaders(headers))
        }
        // Then
        #expect(reason?.contains("defaultHeaders") == true)
        #expect(reason?.contains(expected) == true, "\(reason ?? "nil")")
    }

    @Test("Pinning without pins is rejected")
    func rejectsPinningWithoutPins() {
        // Given / When
        let reason = rejection { () throws(RepositoryError) in
            try NetworkingConfiguration(domainURL: "api.example.com", usePinningCertificate: true)
        }
        // Then
        #expect(reason?.contains("no pins were given") == true, "\(reason ?? "nil")")
    }

    // MARK: - Base URL

    @Test(
        "The base URL is scheme, host, port and subdomain",
        arguments: [
            (true, "api.example.com", nil, nil, "https://api.example.com"),
            (false, "api.example.com", nil, nil, "http://api.example.com"),
            (false, "127.0.0.1", 8000, "/api/v1", "http://127.0.0.1:8000/api/v1"),
            (true, "api.example.com", 8443, "/v2/", "https://api.example.com:8443/v2"),
            (true, "api.example.com", nil, "/", "https://api.example.com"),
            (false, "localhost", 80, "/a//b", "http://localhost:80/a/b"),
            (true, "intranet.example.com", nil, "/sites/Team Site", "https://intranet.example.com/sites/Team%20Site"),
            (false, "::1", 8080, nil, "http://[::1]:8080"),
            (false, "[::1]", nil, "/api", "http://[::1]/api"),
            (true, "2001:db8::42", nil, nil, "https://[2001:db8::42]"),
            (true, "api.example.com.", nil, nil, "https://api.example.com."),
            (true, "my_service.internal", nil, nil, "https://my_service.internal"),
        ] as [(Bool, String, Int?, String?, String)])
    func baseURL(secure: Bool, domain: String, port: Int?, subdomain: String?, expected: String) throws {
        // Given / When
        let configuration = try NetworkingConfiguration(
            useSecureConnection: secure, domainURL: domain, port: port, subdomainURL: subdomain)
        // Then
        #expect(configuration.baseURL.absoluteString == expected)
    }

    // MARK: - Defaults

    @Test("Defaults are as documented")
    func defaults() throws {
        // Given / When
        let configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        // Then
        #expect(configuration.useSecureConnection)
        #expect(configuration.port == nil)
        #expect(configuration.subdomainURL == nil)
        #expect(configuration.timeout == 75)
        #expect(NetworkingConfiguration.defaultTimeout == 75)
        #expect(configuration.secondsBetweenPolls == 1)
        #expect(configuration.maximumPollingRetries == nil)
        #expect(configuration.pollingRetries == 75)
        #expect(configuration.queryEncodedMethods == [.get, .head, .delete])
        #expect(configuration.defaultHeaders.isEmpty)
        #expect(!configuration.usePinningCertificate)
        #expect(configuration.security == .default)
        #expect(configuration.decodingFailureHandler == nil)
    }

    @Test(
        "Polling retries follow timeout / secondsBetweenPolls, capped, and never crash",
        arguments: [
            (75, 1, nil, 75),
            (10, 0.5, nil, 20),
            (10, 3, nil, 3),
            (75, 0, nil, 75),
            (1, 1_000_000, nil, 0),
            (Double.greatestFiniteMagnitude, 0.000_001, nil, 10_000),
            (1e300, 1e-300, nil, 10_000),
            (75, 1, 2, 2),
            (75, 0, 0, 0),
        ] as [(Double, Double, Int?, Int)])
    func pollingRetries(timeout: Double, seconds: Double, maximum: Int?, expected: Int) throws {
        // Given / When
        let configuration = try NetworkingConfiguration(
            domainURL: "api.example.com", timeout: timeout, secondsBetweenPolls: seconds, maximumPollingRetries: maximum)
        // Then
        #expect(configuration.pollingRetries == expected)
    }

    @Test("Pins are carried only when pinning is on")
    func securityCarriesPins() throws {
        // Given
        let pin = try PublicKeyPin(sha256Digest: Data(repeating: 7, count: 32))
        // When
        let pinning = try NetworkingConfiguration(
            domainURL: "api.example.com", usePinningCertificate: true, pinnedPublicKeys: [pin])
        let notPinning = try NetworkingConfiguration(
            domainURL: "api.example.com", usePinningCertificate: false, pinnedPublicKeys: [pin])
        // Then
        #expect(pinning.security.pinnedPublicKeys == [pin])
        #expect(pinning.security.requiresPinning)
        #expect(notPinning.security.pinnedPublicKeys.isEmpty)
        #expect(!notPinning.security.requiresPinning)
    }

    @Test("Public-key pins accept the base64 digest with or without the sha256// prefix")
    func publicKeyPins() throws {
        // Given
        let digest = Data(repeating: 1, count: 32).base64EncodedString()
        // When
        let plain = try PublicKeyPin(digest)
        let prefixed = try PublicKeyPin("sha256//\(digest)")
        // Then
        #expect(plain == prefixed)
        #expect(plain.description == "sha256//\(digest)")
        #expect(throws: RepositoryError.self) { try PublicKeyPin("not base64") }
        #expect(throws: RepositoryError.self) { try PublicKeyPin(sha256Digest: Data(count: 31)) }
    }
}

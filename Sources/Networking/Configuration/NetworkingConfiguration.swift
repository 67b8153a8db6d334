import Foundation

/// Where an API lives and how to talk to it: a `Sendable` value, validated once when it is made.
///
/// The base URL is `scheme://domainURL[:port][subdomainURL]`, for example
/// `NetworkingConfiguration(useSecureConnection: false, domainURL: "127.0.0.1", port: 8000, subdomainURL: "/api/v1")`
/// gives `http://127.0.0.1:8000/api/v1`. Every invalid value is rejected by the initializer with
/// ``RepositoryError/invalidConfiguration(reason:)``, never at the first request.
///
/// Defaults: HTTPS, no port (the scheme's), no path prefix, no pinning, the system's certificate
/// authorities, a 75-second timeout,
/// one second between polls and `timeout / secondsBetweenPolls` poll retries, no default headers,
/// parameters in the query for `GET`, `HEAD` and `DELETE` and in a JSON body otherwise.
public struct NetworkingConfiguration: Sendable {
    /// The timeout used when none is given: 75 seconds.
    public static let defaultTimeout: TimeInterval = 75

    /// `https` when `true`, `http` otherwise.
    public let useSecureConnection: Bool
    /// The host: a name such as `api.example.com`, an IPv4 address, or an IPv6 address.
    public let domainURL: String
    /// The port, or `nil` for the scheme's default.
    public let port: Int?
    /// A path prefix for every request, starting with `/` (for example `/api/v1`), or `nil`.
    public let subdomainURL: String?
    /// Whether requests must check the server's public key against ``pinnedPublicKeys``.
    ///
    /// A transport that cannot check pins fails every request with
    /// ``RepositoryError/pinningUnsupported(transport:context:)``; it never passes silently.
    public let usePinningCertificate: Bool
    /// The accepted server keys when pinning; give several to rotate keys without an outage.
    /// It holds the pins given to the initializer followed by those of ``pinnedCertificateFiles``.
    public let pinnedPublicKeys: [PublicKeyPin]
    /// PEM or DER certificate files whose public keys were added to ``pinnedPublicKeys`` when
    /// the configuration was made. Default none.
    public let pinnedCertificateFiles: [URL]
    /// A PEM file of certificate authorities to trust instead of the system's, for private PKI.
    public let certificateAuthorityFile: URL?
    /// The longest a request may take, in seconds. Default 75.
    public let timeout: TimeInterval
    /// How long to wait before sending each poll again after a 202, in seconds. Default 1.
    public let secondsBetweenPolls: TimeInterval
    /// How many times a polling request is sent again after the first 202 before failing with
    /// ``RepositoryError/timeout(_:)``; `nil` means `timeout / secondsBetweenPolls` (75 by default).
    public let maximumPollingRetries: Int?
    /// Header fields sent with every request. They win over per-call headers and over the
    /// session's `Authorization` (see ``AbstractRepository``).
    public let defaultHeaders: HTTPHeaders
    /// The methods whose parameters go in the query string; the others send them as a JSON body.
    /// Default `GET`, `HEAD` and `DELETE`.
    public let queryEncodedMethods: Set<HTTPMethod>
    /// The decoder for response bodies. Default: a plain `JSONDecoder`.
    public let jsonDecoder: JSONDecoder
    /// The encoder for `Encodable` parameters and bodies. Default: a `JSONEncoder` with sorted keys.
    public let jsonEncoder: JSONEncoder
    /// Told about every decoding failure of this configuration's repositories; when `nil`,
    /// ``DecodingFailure/defaultHandler`` is told instead.
    public let decodingFailureHandler: DecodingFailureHandler?
    /// `scheme://domainURL[:port][subdomainURL]`.
    public let baseURL: URL

    // Settings with no invalid values; change them after making the configuration.

    /// When failed requests are sent again. Default ``RetryPolicy/never``; set
    /// ``RetryPolicy/default`` to retry idempotent requests on 408, 429, 5xx, lost connections
    /// and timeouts.
    public var retryPolicy: RetryPolicy = .never
    /// What network activity is logged, and where. Default off.
    public var logging: LoggingConfiguration = .off
    /// Interceptors every repository of this configuration runs, outermost first, between the
    /// session step and logging (see ``Interceptor``).
    public var interceptors: [any Interceptor] = []
    /// Counts this configuration's requests in flight. Default ``NetworkActivity/shared``.
    public var activity: NetworkActivity = .shared
    /// The time source for retries, polling and log timings. Default ``NetworkingClock/live``.
    public var clock: NetworkingClock = .live
    /// More header, query and JSON field names to redact in logs and decoding reports, beyond the
    /// built-in ones (any name containing token, password, secret, authorization, cookie,
    /// api key, signature or session).
    public var secretFields: Set<String> = []

    /// Creates and validates a configuration.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` for an empty or malformed
    ///   domain, a scheme, path or port written inside the domain, a port outside 1...65535, a
    ///   subdomain that does not start with `/`, a timeout that is not positive, a negative poll
    ///   interval or retry count, a header that cannot be sent, pinning without pins, a pinned
    ///   certificate file that cannot be read or is not a PEM or DER certificate (the reason names
    ///   the file), or a certificate authority file that cannot be read.
    public init(
        useSecureConnection: Bool = true,
        domainURL: String,
        port: Int? = nil,
        subdomainURL: String? = nil,
        usePinningCertificate: Bool = false,
        pinnedPublicKeys: [PublicKeyPin] = [],
        pinnedCertificateFiles: [URL] = [],
        certificateAuthorityFile: URL? = nil,
        timeout: TimeInterval = NetworkingConfiguration.defaultTimeout,
        secondsBetweenPolls: TimeInterval = 1,
        maximumPollingRetries: Int? = nil,
        defaultHeaders: HTTPHeaders = [:],
        queryEncodedMethods: Set<HTTPMethod> = [.get, .head, .delete],
        jsonDecoder: JSONDecoder = JSONDecoder(),
        jsonEncoder: JSONEncoder = NetworkingConfiguration.makeDefaultEncoder(),
        decodingFailureHandler: DecodingFailureHandler? = nil
    ) throws(RepositoryError) {
        let host = try Self.validatedHost(domainURL)
        let path = try Self.validatedSubdomain(subdomainURL)
        if let port, !(1...65535).contains(port) {
            throw .invalidConfiguration(reason: "port \(port) is outside 1...65535")
        }
        guard timeout > 0, timeout.isFinite else {
            throw .invalidConfiguration(reason: "timeout must be a positive number of seconds, not \(timeout)")
        }
        guard secondsBetweenPolls >= 0, secondsBetweenPolls.isFinite else {
            throw .invalidConfiguration(
                reason: "secondsBetweenPolls must be zero or a positive number of seconds, not \(secondsBetweenPolls)")
        }
        if let maximumPollingRetries, maximumPollingRetries < 0 {
            throw .invalidConfiguration(reason: "maximumPollingRetries must not be negative, not \(maximumPollingRetries)")
        }
        if let problem = HeaderValidation.problem(in: defaultHeaders) {
            throw .invalidConfiguration(reason: "defaultHeaders: \(problem)")
        }
        var pins = pinnedPublicKeys
        for file in pinnedCertificateFiles {
            pins += try PublicKeyPin.pins(fromCertificateFile: file)
        }
        if let certificateAuthorityFile, !FileManager.default.isReadableFile(atPath: certificateAuthorityFile.path) {
            throw .invalidConfiguration(
                reason: "certificateAuthorityFile \(certificateAuthorityFile.path) does not exist or cannot be read")
        }
        if usePinningCertificate, pins.isEmpty {
            throw .invalidConfiguration(
                reason: "usePinningCertificate is true but no pins were given: pass pinnedPublicKeys or pinnedCertificateFiles")
        }
        let scheme = useSecureConnection ? "https" : "http"
        let authority = port.map { "\(host):\($0)" } ?? host
        guard let baseURL = URL(string: "\(scheme)://\(authority)\(path)") else {
            throw .invalidConfiguration(reason: "\(scheme)://\(authority)\(path) is not a valid URL")
        }
        self.useSecureConnection = useSecureConnection
        self.domainURL = domainURL
        self.port = port
        self.subdomainURL = subdomainURL
        self.usePinningCertificate = usePinningCertificate
        self.pinnedPublicKeys = pins
        self.pinnedCertificateFiles = pinnedCertificateFiles
        self.certificateAuthorityFile = certificateAuthorityFile
        self.timeout = timeout
        self.secondsBetweenPolls = secondsBetweenPolls
        self.maximumPollingRetries = maximumPollingRetries
        self.defaultHeaders = defaultHeaders
        self.queryEncodedMethods = queryEncodedMethods
        self.jsonDecoder = jsonDecoder
        self.jsonEncoder = jsonEncoder
        self.decodingFailureHandler = decodingFailureHandler
        self.baseURL = baseURL
    }

    /// A `JSONEncoder` with sorted keys, so request bodies are deterministic.
    public static func makeDefaultEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// How many times a polling request is sent again after the first 202.
    public var pollingRetries: Int {
        if let maximumPollingRetries { return maximumPollingRetries }
        guard secondsBetweenPolls > 0 else { return 75 }
        return Int(min((timeout / secondsBetweenPolls).rounded(), 10_000))
    }

    /// The TLS requirements every request of this configuration carries.
    public var security: TransportSecurity {
        TransportSecurity(
            pinnedPublicKeys: usePinningCertificate ? pinnedPublicKeys : [],
            certificateAuthorityFile: certificateAuthorityFile)
    }
}

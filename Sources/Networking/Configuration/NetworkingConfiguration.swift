import Foundation

/// Where an API lives and how to talk to it: a `Sendable` value, validated when it is made and
/// whenever a setting changes.
///
/// The base URL is `scheme://domainURL[:port][subdomainURL]`, for example
/// `NetworkingConfiguration(useSecureConnection: false, domainURL: "127.0.0.1", port: 8000, subdomainURL: "/api/v1")`
/// gives `http://127.0.0.1:8000/api/v1`.
///
/// Every setting can be changed after the configuration is made (it is a value: repositories keep
/// the copy they were given). The initializer rejects an invalid value with
/// ``RepositoryError/invalidConfiguration(reason:)``; a setting changed to an invalid value later
/// is kept in ``validationError``, and every request of a repository made with that configuration
/// fails with that error before anything is sent — never a crash. ``validate()`` checks at once.
///
/// Defaults: HTTPS, no port (the scheme's), no path prefix, no pinning, the system's certificate
/// authorities, a 75-second timeout, one second between polls and `timeout / secondsBetweenPolls`
/// poll retries, no default headers, parameters in the query for `GET`, `HEAD` and `DELETE` and in
/// a JSON body otherwise, arrays as `ids[]=` and booleans as `true`/`false` in queries, no cookies,
/// no retries, no logging.
public struct NetworkingConfiguration: Sendable {
    /// The timeout used when none is given: 75 seconds.
    public static let defaultTimeout: TimeInterval = 75

    // MARK: Where the API is

    /// `https` when `true`, `http` otherwise. Default `true`.
    public var useSecureConnection: Bool { didSet { updateBaseURL() } }
    /// The host: a name such as `api.example.com`, an IPv4 address, or an IPv6 address.
    public var domainURL: String { didSet { updateBaseURL() } }
    /// The port (1...65535), or `nil` for the scheme's default.
    public var port: Int? { didSet { updateBaseURL() } }
    /// A path prefix for every request, starting with `/` (for example `/api/v1`), or `nil`.
    public var subdomainURL: String? { didSet { updateBaseURL() } }
    /// `scheme://domainURL[:port][subdomainURL]`; it keeps its last valid value while the
    /// settings it is made of are invalid.
    public private(set) var baseURL: URL

    // MARK: TLS

    /// Whether requests must check the server's public key against ``pinnedPublicKeys`` and the
    /// keys of ``pinnedCertificateFiles``. Pinning needs `https`: a pinned request to plain `http`
    /// is refused by every transport rather than sent unpinned.
    ///
    /// A transport that cannot check pins fails every request with
    /// ``RepositoryError/pinningUnsupported(transport:context:)``; it never passes silently.
    /// While it is `false`, the pins are kept but not checked (a debugging proxy, say).
    ///
    /// Until it is given (to the initializer) or set, pins turn it on: setting
    /// ``pinnedPublicKeys`` or ``pinnedCertificateFiles`` on a configuration made without them
    /// makes it `true`, so they are checked, never silently ignored. Removing them all never
    /// turns it off: with no pins left, every request fails (``validationError``) rather than go
    /// unpinned.
    public var usePinningCertificate: Bool {
        get { chosenPinning ?? hasHadPins }
        set {
            chosenPinning = newValue
            updateProblems()
        }
    }
    /// Accepted server keys when pinning; give several to rotate keys without an outage. Setting
    /// them turns pinning on unless ``usePinningCertificate`` was chosen.
    public var pinnedPublicKeys: [PublicKeyPin] {
        didSet {
            notePins()
            updateProblems()
        }
    }
    /// PEM or DER certificate files whose public keys are pinned too (read when set). Default none.
    /// Setting them turns pinning on unless ``usePinningCertificate`` was chosen.
    public var pinnedCertificateFiles: [URL] {
        didSet {
            notePins()
            readCertificateFiles()
        }
    }
    /// A PEM file of certificate authorities to trust instead of the system's, for private PKI
    /// (read and checked when set).
    public var certificateAuthorityFile: URL? { didSet { checkCertificateAuthorityFile() } }
    /// The certificate presented when a server asks for one (mutual TLS), or `nil` (the
    /// default), from files or memory. Its files are read by each new connection, not when it is set: one written
    /// after the app started (a secrets sidecar), or renewed, is picked up, and one that cannot
    /// be read fails that connection's handshake. See ``ClientCertificate`` for which transport
    /// presents which format.
    public var clientCertificate: ClientCertificate?

    // MARK: Time

    /// The longest a request may take, in seconds (positive and finite). Default 75. A file's
    /// transfer (a download to a file, a body read from a file or a stream) with no timeout of
    /// its own is bounded by ``idleTimeout`` instead, when there is one: it takes as long as the
    /// link needs, as long as bytes keep moving.
    public var timeout: TimeInterval { didSet { updateProblems() } }
    /// The longest an exchange with no time limit (a file's transfer, an endpoint or route
    /// `timeout: .infinity`) may go with no byte arriving or leaving, in seconds (positive),
    /// or `nil` for no limit. Default 60, URLSession's idle timeout. A server that goes silent
    /// mid-body, or never answers, then fails the call with ``RepositoryError/timeout(_:)``
    /// instead of holding it until it is cancelled; a resumable download keeps its partial file
    /// (and resumes under a retry policy). Exchanges with a finite timeout are bounded by it
    /// alone; streams (``ResponseChunks``, ``ServerSentEvents``) wait through silence as their
    /// own timeouts say. An endpoint's ``Endpoint/idleTimeout`` overrides it for one call. Unlike
    /// URLSession's `timeoutIntervalForRequest`, it never shortens a finite timeout. See
    /// ``TransportRequest/idleTimeout`` for how the transports count.
    public var idleTimeout: TimeInterval? = 60 { didSet { updateProblems() } }
    /// How long to wait before sending a poll again after a 202, in seconds (zero or more,
    /// finite). Default 1.
    public var secondsBetweenPolls: TimeInterval { didSet { updateProblems() } }
    /// How many times a polling request is sent again after its first 202 before the call fails
    /// with ``RepositoryError/pollingExhausted(attempts:context:)``; `nil` means the
    /// configuration's `timeout / secondsBetweenPolls` (75 by default; an endpoint's or route's
    /// own timeout bounds each poll, not their number), at most 10,000, and 75 when
    /// `secondsBetweenPolls` is 0 (see ``pollingRetries``). So a polling call is sent at most
    /// `pollingRetries + 1` times: `0` sends it once and fails on its first 202.
    public var maximumPollingRetries: Int? { didSet { updateProblems() } }

    // MARK: Requests

    /// Header fields sent with every request. They win over per-call headers and over the
    /// session's `Authorization` (see ``AbstractRepository``) — not over the fields a feature
    /// needs to work: a form's `Content-Type` (multipart or URL-encoded), an event stream's `Accept`, `Cache-Control` and
    /// `Last-Event-ID`, a download's `Range`, `If-Range` and `Accept-Encoding` (a default one of
    /// these is not sent with them), an upload's `Content-Type`. Fields named like a credential
    /// (`Authorization`, `X-Api-Key`) go only to the API's hosts (``domainURL``'s and
    /// ``sessionHosts``), never to a call's absolute URL on another host; see
    /// ``defaultHeaders(for:)``.
    public var defaultHeaders: HTTPHeaders { didSet { updateProblems() } }
    /// The methods whose parameters go in the query string; the others send them as a JSON body.
    /// Default `GET`, `HEAD` and `DELETE`.
    public var queryEncodedMethods: Set<HTTPMethod>
    /// How arrays and booleans are written in queries and form bodies. Default
    /// ``QueryEncodingStyle/default`` (`ids[]=1&ids[]=2`, `true`/`false`); an endpoint's own
    /// ``Endpoint/queryEncodingStyle`` wins.
    public var queryEncodingStyle: QueryEncodingStyle = .default
    /// More hosts the session's credential may be sent to, besides ``domainURL``, for APIs spread
    /// over several hosts (`files.example.com`); the default headers named like a credential go to
    /// them too (``defaultHeaders(for:)``). A call to any other host — an absolute route path
    /// — goes without the session's `Authorization`. When ``useSecureConnection`` is on, a call
    /// that needs the session and goes to one of these hosts over plain `http` fails with
    /// ``RepositoryError/invalidRequest(reason:request:)``: the credential goes over `https` only.
    /// Each is a host name or address alone, as in ``domainURL``: one with a scheme, a port or a
    /// path would never match a call's host, so it makes every request fail with
    /// ``RepositoryError/invalidConfiguration(reason:)`` instead. Default none.
    public var sessionHosts: [String] = [] { didSet { updateProblems() } }
    /// The API's named routes and object routes, called with ``Endpoint/route(_:pathVariables:parameters:query:headers:)-(_,_,_,_,HTTPHeaders)``
    /// and the repositories' object methods. Default none.
    public var routes = RouteTable.empty
    /// Where cookies are kept between requests, or `nil` (the default): none are kept or added
    /// (a `Cookie` field a call sets itself is sent as it is). Give several configurations the same ``CookieStorage`` to share cookies.
    public var cookieStorage: CookieStorage?

    // MARK: Bodies

    /// The decoder for response bodies. Default: a plain `JSONDecoder`. A class: copies of the
    /// configuration share it until one is given a new decoder; a repository keeps a copy of it
    /// made when the repository is made.
    public var jsonDecoder: JSONDecoder
    /// Whether bodies are decoded by Foundation's `JSONDecoder` itself rather than by the
    /// library's own decoder. Default `false`: the library's decoder — several times faster, with
    /// the same results and the same errors (it honours every strategy of ``jsonDecoder``, whose
    /// settings it copies when a repository is made). Set it to rule the library's decoder out.
    /// A subclass of `JSONDecoder` given as ``jsonDecoder`` decodes the bodies itself either way,
    /// since its `decode(_:from:)` may do more than its settings say; repositories share it rather
    /// than copy it, so do not change it once they are made.
    /// With it set, a body holding a number `JSONDecoder` would stop the process on (a whole
    /// number of 2^53 or more written with hundreds of digits and a fraction or an exponent) fails
    /// to decode, whatever the model reads; the library's decoder refuses it only where it is
    /// read as an integer.
    public var usesFoundationJSONDecoder = false
    /// The encoder for `Encodable` parameters and bodies. Default: a `JSONEncoder` with sorted keys.
    /// Shared and copied like ``jsonDecoder``.
    public var jsonEncoder: JSONEncoder
    /// Told about every decoding failure of this configuration's repositories; when `nil`,
    /// ``DecodingFailure/defaultHandler`` is told instead.
    public var decodingFailureHandler: DecodingFailureHandler?

    // MARK: Around the wire

    /// When failed requests are sent again. Default ``RetryPolicy/never``; set
    /// ``RetryPolicy/default`` to retry idempotent requests on 408, 429, 5xx, lost connections
    /// and timeouts. An endpoint may have its own (``Endpoint/retrying(_:)``), which replaces it.
    public var retryPolicy: RetryPolicy = .never { didSet { updateProblems() } }
    /// What network activity is logged, and where. Default off.
    public var logging: LoggingConfiguration = .off { didSet { updateProblems() } }
    /// Interceptors every repository of this configuration runs, each at its
    /// ``Interceptor/position``, before the repository's own (see ``Interceptor``).
    public var interceptors: [any Interceptor] = []
    /// Counts this configuration's requests in flight. Default ``NetworkActivity/shared``.
    public var activity: NetworkActivity = .shared
    /// The time source for retries, polling and log timings. Default ``NetworkingClock/live``.
    public var clock: NetworkingClock = .live
    /// More header, query and JSON field names to redact in logs, cURL descriptions and decoding
    /// reports, beyond the built-in ones (any name containing token, password, passwd, passphrase,
    /// pwd, secret, authorization, cookie, credential, api key, access key, private key,
    /// subscription key, auth key, functions key, master key, signature, session or sessid, and
    /// the names key, sig, auth, pass, sid, otp, jwt, assertion, client_assertion,
    /// code_verifier, x-auth and x-authentication). These match whole names, ignoring case:
    /// `"email"` hides `email`, not `user_email`. An error's own `description` knows only the
    /// built-in names (an error does not carry its configuration); the log line of a failure
    /// applies these too.
    ///
    /// A name here is a credential's everywhere the library draws that line: a default header of
    /// that name goes only to the API's hosts, and not over `http` when the API is `https`
    /// (``defaultHeaders(for:)``); the offline queue keeps it off disk when it is a default header
    /// (a call's own value is stored as sent); and a response cache keys its entries per value,
    /// storing answers to such calls only with an explicit permission (`private`, `public`…), as
    /// for an `X-Auth-Token`. Name a field that says who calls (`X-User`), not one that changes
    /// with every request (`X-Request-Id`), which would keep answers from being cached.
    public var secretFields: Set<String> = []

    // MARK: Validation state

    /// Why the settings cannot be used, or `nil` when they are valid. Requests of repositories
    /// made with an invalid configuration fail with this error before anything is sent.
    public var validationError: RepositoryError? {
        problem.map { .invalidConfiguration(reason: $0) }
    }

    private var problem: String?
    private var baseURLProblem: String?
    private var filePins: Result<[PublicKeyPin], RepositoryError> = .success([])
    private var certificateAuthorityProblem: String?
    /// ``usePinningCertificate`` as given or set; `nil` while the pins decide it.
    private var chosenPinning: Bool?
    /// Whether pins or pinned files were ever given or set: until pinning is chosen, they turn it
    /// on for good.
    private var hasHadPins: Bool

    /// Creates and validates a configuration.
    ///
    /// Pins turn pinning on: `usePinningCertificate` is `true` when it is not given and
    /// `pinnedPublicKeys` or `pinnedCertificateFiles` are, so pins are never set and then
    /// silently ignored, nor are pins set later. Pass `false`, or set the property later, to keep
    /// pins but not check them.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` for an empty or malformed
    ///   domain, a scheme, path or port written inside the domain, a port outside 1...65535, a
    ///   subdomain that does not start with `/`, a timeout that is not positive and finite, a
    ///   negative or infinite poll interval, a negative retry count, a header that cannot be sent,
    ///   pinning without pins, a pinned certificate file that cannot be read or is not a PEM or DER
    ///   certificate (the reason names the file), or a certificate authority file that cannot be
    ///   read or is not PEM certificates.
    public init(
        useSecureConnection: Bool = true,
        domainURL: String,
        port: Int? = nil,
        subdomainURL: String? = nil,
        usePinningCertificate: Bool? = nil,
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
        self.useSecureConnection = useSecureConnection
        self.domainURL = domainURL
        self.port = port
        self.subdomainURL = subdomainURL
        chosenPinning = usePinningCertificate
        hasHadPins = !(pinnedPublicKeys.isEmpty && pinnedCertificateFiles.isEmpty)
        self.pinnedPublicKeys = pinnedPublicKeys
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
        baseURL = URL(fileURLWithPath: "/")
        updateBaseURL()
        readCertificateFiles()
        checkCertificateAuthorityFile()
        if let problem { throw .invalidConfiguration(reason: problem) }
    }

    /// Throws the ``validationError``, if any.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` naming the setting to fix.
    public func validate() throws(RepositoryError) {
        if let validationError { throw validationError }
    }

    /// A `JSONEncoder` with sorted keys, so request bodies are deterministic.
    public static func makeDefaultEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// How many times a polling request is sent again after the first 202 (see
    /// ``maximumPollingRetries``).
    public var pollingRetries: Int {
        if let maximumPollingRetries { return max(0, maximumPollingRetries) }
        // The timeout is finite (the configuration refuses another); a copy not yet checked gets 75.
        guard secondsBetweenPolls > 0, timeout.isFinite else { return 75 }
        return Int(min(max((timeout / secondsBetweenPolls).rounded(), 0), 10_000))
    }

    /// The TLS requirements every request of this configuration carries: the pins (given and
    /// read from files) when pinning, the certificate authority file and the client certificate.
    public var security: TransportSecurity {
        TransportSecurity(
            pinnedPublicKeys: usePinningCertificate ? pinnedPublicKeys + ((try? filePins.get()) ?? []) : [],
            certificateAuthorityFile: certificateAuthorityFile, clientCertificate: clientCertificate)
    }

    // MARK: - Keeping derived state current

    private mutating func updateBaseURL() {
        do throws(RepositoryError) {
            baseURL = try Self.makeBaseURL(useSecureConnection, domainURL, port, subdomainURL)
            baseURLProblem = nil
        } catch {
            baseURLProblem = error.configurationReason
        }
        updateProblems()
    }

    /// Remembers that there were pins, which turn pinning on (see ``usePinningCertificate``).
    private mutating func notePins() {
        if !(pinnedPublicKeys.isEmpty && pinnedCertificateFiles.isEmpty) { hasHadPins = true }
    }

    private mutating func readCertificateFiles() {
        var pins: [PublicKeyPin] = []
        do throws(RepositoryError) {
            for file in pinnedCertificateFiles { pins += try PublicKeyPin.pins(fromCertificateFile: file) }
            filePins = .success(pins)
        } catch {
            filePins = .failure(error)
        }
        updateProblems()
    }

    private mutating func checkCertificateAuthorityFile() {
        certificateAuthorityProblem = certificateAuthorityFile.flatMap(CertificatePins.authorityProblem(inFile:))
        updateProblems()
    }

    private mutating func updateProblems() {
        problem = baseURLProblem ?? pinningProblem ?? certificateAuthorityProblem ?? Self.settingsProblem(of: self)
    }

    private var pinningProblem: String? {
        switch filePins {
        case .failure(let error): return error.configurationReason
        case .success(let pins):
            guard usePinningCertificate, pinnedPublicKeys.isEmpty, pins.isEmpty else { return nil }
            return "usePinningCertificate is true but no pins were given: pass pinnedPublicKeys or pinnedCertificateFiles"
        }
    }
}

extension RepositoryError {
    /// The reason of an ``invalidConfiguration(reason:)``, or the description of any other error.
    var configurationReason: String {
        if case .invalidConfiguration(let reason) = self { return reason }
        return description
    }
}

// swift-format-ignore-file
// The documentation's code, kept as the articles and the README show it (their drift tests compare
// line by line), so the formatter leaves this folder alone.
import Foundation
import Networking
import NetworkingTestSupport
import Testing

// Every ```swift block of the Networking catalog's articles (Sources/Networking/Networking.docc),
// as it is there, so the documentation cannot drift from the API: ArticleCodeBlocksTests checks
// that each line of each block is in this folder. Types live in one namespace per article so they
// do not clash with other tests; top-level statements are wrapped in functions.

// MARK: Getting started (and the landing page)

enum GettingStartedArticle {
    struct User: Codable, Sendable { let id: Int; let name: String }
    struct Book: Decodable, Sendable { let id: Int; let title: String }
    struct BooksPage: Decodable, Sendable { let data: [Book] }
    struct NewBook: Encodable, Sendable { let title: String; let author: String; let genre: String; let year: Int }
    struct Login: Decodable, Sendable { let user: User; let token: String }

    final class BooksRepository: AbstractRepository, CurrentUserFetcher, @unchecked Sendable {
        func logIn(email: String, password: String) async -> Result<Login, RepositoryError> {
            await performAuthenticationRequest(.post("auth/login", parameters: ["email": email, "password": password]))
        }

        func fetchCurrentUser() async -> Result<User, RepositoryError> {
            await performRequest(.get("users/me"))
        }

        func fetchBooks(page: Int) async -> Result<BooksPage, RepositoryError> {
            await performRequest(.get("books", parameters: ["page": page]))
        }

        func addBook(_ book: NewBook) async -> Result<Void, RepositoryError> {
            await performRequest(.post("books", body: book))
        }
    }

    static func quickStart() async throws {
        // The project's test API: `script/server start` writes its address to .servers/env.
        let address = ProcessInfo.processInfo.environment["NETWORKING_TEST_API_URL"] ?? "http://127.0.0.1:8000/api/v1"
        let configuration = try NetworkingConfiguration(baseURL: address)
        let session = SessionManager<User>(store: FileCredentialStore(applicationName: "books"))
        let books = BooksRepository(configuration: configuration, sessionManager: session)

        await session.bootstrap(fetchingUserWith: books)    // restores a saved session, ended if its token is refused
        if !session.isLoggedIn {
            let login = try await books.logIn(email: "reader@example.com", password: "secret123").get()
            try session.login(user: login.user, token: login.token)
        }
        switch await books.fetchBooks(page: 1) {
        case .success(let page): print(page.data.map(\.title))
        case .failure(let error): print(error.localizedDescription)
        }
    }

    static func stagingConfiguration() throws -> NetworkingConfiguration {
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.domainURL = "staging.example.com"
        configuration.timeout = 30
        configuration.defaultHeaders["X-Client"] = "books-cli"
        configuration.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric)
        try configuration.validate()   // or let the first request report it
        return configuration
    }

    struct LoginResponse: Decodable, Sendable { let token: String }
    struct ExportResult: Decodable, Sendable { let url: URL }

    final class LibraryRepository: AbstractRepository, @unchecked Sendable {
        // An entity, or a collection ([Book] is Decodable too).
        func book(id: Int) async -> Result<Book, RepositoryError> {
            await performRequest(.get("books/\(id)"))
        }

        // The value at a key path of the JSON: {"data": [...], "page": {...}}.
        func titles(page: Int) async -> Result<[Book], RepositoryError> {
            await performRequest(.get("books", parameters: ["page": page], keyPath: "data"))
        }

        // Void: the body is empty or ignored (204, or a body you do not need).
        func markRead(userID: Int) async -> Result<Void, RepositoryError> {
            await performRequest(.post("users/\(userID)/notifications/read_all"))
        }

        // The raw response: status, headers and bytes (a non-2xx is a failure whose context holds it).
        func cover(id: Int) async -> Result<TransportResponse, RepositoryError> {
            await performRawRequest(.get("books/\(id)/cover", headers: ["Accept": "image/png"]))
        }

        // An array body and a per-call timeout (or `.post(…).timingOut(after: 120)`).
        func importBooks(_ books: [NewBook]) async -> Result<Void, RepositoryError> {
            await performRequest(Endpoint(.post, "books/import", body: books, timeout: 120))
        }

        // Login and sign-up need no session.
        func login(email: String, password: String) async -> Result<LoginResponse, RepositoryError> {
            await performAuthenticationRequest(.post("auth/login", parameters: ["email": email, "password": password]))
        }

        // 202 Accepted: wait secondsBetweenPolls, send again (same parameters and headers), until another 2xx.
        func export() async -> Result<ExportResult, RepositoryError> {
            await performPollingRequest(.get("exports/latest"))
        }

        // The value with its status, headers and final URL: pagination links, ETags, rate limits.
        func page(_ number: Int) async -> Result<RepositoryResponse<BooksPage>, RepositoryError> {
            await performRequest(.get("books", parameters: ["page": number]))
        }

        // A decoding step of your own, for bodies shaped unlike the model (or models that are not Decodable).
        func bookTitles() async -> Result<[String], RepositoryError> {
            await performRequest(Endpoint.get("books").decoding { input in
                try input.decode([Book].self, at: "data").map(\.title)
            })
        }
    }

    static func firstPages(_ library: LibraryRepository) async throws {
        let first = try await library.page(1).get()
        print(first.value.data.count, first.statusCode, first.headers["X-Total-Count"] ?? "?", first.source)
        if let next = first.link(rel: "next") { print("next page:", next) }   // RFC 8288 Link header
    }

    // MARK: JSON that arrives another way

    static func fastDecoding(pageData: Data, bookData: Data) throws -> ([Book], Book) {
        let snakeCase = JSONDecoder()
        snakeCase.keyDecodingStrategy = .convertFromSnakeCase
        let fast = FastJSONDecoder(snakeCase)
        let firstPage = try fast.decode([Book].self, from: pageData, at: "data")
        let oneBook = try fast.decode(Book.self, from: bookData)
        return (firstPage, oneBook)
    }
}

// MARK: Errors and custom errors

enum ErrorsArticle {
    typealias BooksRepository = GettingStartedArticle.BooksRepository

    enum BooksError: CustomRepositoryErrorType {
        case notFound
        case duplicateISBN
        case validation([String: [String]])

        // A fixed name for logs and analytics: never the user's data a case carries.
        var name: String {
            switch self {
            case .notFound: "not_found"
            case .duplicateISBN: "duplicate_isbn"
            case .validation: "validation"
            }
        }
    }

    struct ValidationBody: Decodable, Sendable { let fields: [String: [String]] }

    static let booksErrors: CustomErrorMapping = [
        .status(404, BooksError.notFound),
        .status(409, apiCode: "duplicate_isbn", BooksError.duplicateISBN),
        .status(422, decoding: ValidationBody.self) { BooksError.validation($0.fields) },
    ]

    static func describe(_ error: RepositoryError) -> String {
        switch error.customError(as: BooksError.self) {
        case .validation(let fields)?: "Please fix: \(fields.keys.sorted().joined(separator: ", "))"
        case .notFound?: "That book does not exist."
        default: error.localizedDescription
        }
    }

    static func repository(
        _ configuration: NetworkingConfiguration, session: SessionManager<GettingStartedArticle.User>
    ) -> GettingStartedArticle.BooksRepository {
        // In place of Getting Started's `let books = …`: the same repository, with the mapping.
        let books = BooksRepository(configuration: configuration, sessionManager: session, customErrors: booksErrors)
        return books
    }

    static func installHook() {
        DecodingFailure.defaultHandler = { failure in
            // e.g. "BooksPage at data[3].genre: Cannot initialize Genre from invalid String value cyberpunk (found a string \"cyberpunk\")"
            print("\(failure.entityType) at \(failure.codingPath): \(failure.reason)")
            print(failure.context.request, failure.statusCode ?? 0, failure.bodyExcerpt)
        }
    }
}

// MARK: Sessions and token refresh

enum SessionsArticle {
    typealias User = GettingStartedArticle.User

    final class UsersRepository: AbstractRepository, CurrentUserFetcher, @unchecked Sendable {
        func fetchCurrentUser() async -> Result<User, RepositoryError> {
            await performRequest(.get("users/me"))
        }
    }

    static func startUp(configuration: NetworkingConfiguration) async throws {
        let session = SessionManager<User>(store: FileCredentialStore(applicationName: "books"))
        let users = UsersRepository(configuration: configuration, sessionManager: session)

        Task {
            for await event in session.events() { print("session:", event) }
        }

        // At launch: restore the stored session and fetch its user.
        switch await session.bootstrap(fetchingUserWith: users) {
        case .restored(let user): print("welcome back", user?.name ?? "")
        case .noSession, .expired, .storeFailed: print("please log in")
        case .userUnavailable(let error): print("offline:", error.localizedDescription)
        }

        // After the user logs in: logIn(email:password:users:session:) below.
    }

    struct LoginResponse: Decodable, Sendable { let user: User; let token: String; let refreshToken: String; let expiresIn: Double }

    static func logIn(email: String, password: String, users: UsersRepository, session: SessionManager<User>) async throws {
        let response: LoginResponse = try await users.performAuthenticationRequest(
            .post("auth/login", parameters: ["email": email, "password": password])).get()
        let credential = Credential(
            accessToken: response.token, refreshToken: response.refreshToken, expiresAt: Date().addingTimeInterval(response.expiresIn))
        try session.login(user: response.user, credential: credential)
    }

    struct TokenResponse: Decodable, Sendable { let token: String; let refreshToken: String?; let expiresIn: Double }

    final class AuthRepository: AbstractRepository, TokenRefresher, @unchecked Sendable {
        func refreshCredential(_ credential: Credential) async -> Result<Credential, RepositoryError> {
            let response: Result<TokenResponse, RepositoryError> = await performAuthenticationRequest(
                .post("auth/refresh", parameters: ["refresh_token": credential.refreshToken ?? ""]).timingOut(after: 20))
            return response.map {
                Credential(accessToken: $0.token, refreshToken: $0.refreshToken ?? credential.refreshToken, expiresAt: Date().addingTimeInterval($0.expiresIn))
            }
        }
    }

    static func makeSession(configuration: NetworkingConfiguration) -> SessionManager<User> {
        SessionManager<User>(
            store: FileCredentialStore(applicationName: "books"),
            refresher: AuthRepository(configuration: configuration),
            refreshPolicy: RefreshPolicy(leeway: 30, window: RefreshWindow(maximumRefreshes: 5, interval: 30), failureCoolDown: 1))
    }
}

// MARK: Routes

enum RoutesArticle {
    typealias Book = GettingStartedArticle.Book
    typealias NewBook = GettingStartedArticle.NewBook

    struct BookID: Encodable, Sendable { let id: Int }

    final class RoutedRepository: AbstractRepository, @unchecked Sendable {
        func book(id: Int) async -> Result<Book, RepositoryError> {
            await performRequest(.route("book", pathVariables: ["id": id]))
        }

        func create(_ book: NewBook) async -> Result<Book, RepositoryError> {
            await performRequest(.route("createBook", body: book))   // wrapped as {"book": {…}}
        }

        func refresh(_ book: BookID) async -> Result<Book, RepositoryError> {
            await getObject(book)                                    // the object router finds books/:id
        }
    }

    static func routedConfiguration(routeFile: URL) throws -> NetworkingConfiguration {
        var configuration = try NetworkingConfiguration(baseURL: "https://api.example.com/api/v1")
        var routes = try RouteTable(contentsOf: routeFile)
        try routes.add(Route(name: "export", method: .post, path: "exports/{format}", timeout: 120))
        try routes.register(BookID.self, methods: [.get, .put, .delete], path: "books/:id")
        try routes.setMapping(forRoute: "book") { (book: Book) in book }   // a step after decoding
        configuration.routes = routes
        return configuration
    }
}

// MARK: Uploads and downloads

enum UploadsArticle {
    typealias Book = GettingStartedArticle.Book
    typealias NewBook = GettingStartedArticle.NewBook
    typealias LibraryRepository = GettingStartedArticle.LibraryRepository

    final class FilesRepository: AbstractRepository, @unchecked Sendable {
        // A file, read as it is sent; digests the server can check (base64 Content-MD5, RFC 9530 Content-Digest).
        func uploadPhoto(_ file: URL) async -> Result<Void, RepositoryError> {
            await performRequest(Endpoint.upload(.put, "photos/1", body: .file(file)).withContentDigests([.md5, .sha256]))
        }

        // multipart/form-data: fields, in-memory files and files from disk (streamed); parameters become fields.
        // A file that cannot be read throws a MultipartError here, before anything is sent.
        func submit(report: URL, title: String) async throws -> Result<Void, RepositoryError> {
            var form = MultipartFormData()
            try form.append(fileAt: report, name: "report")          // Content-Type from the extension
            form.append(Data("notes".utf8), name: "notes", fileName: "notes.txt", contentType: "text/plain")
            return await performRequest(Endpoint.upload(.post, "reports", form: form, parameters: ["title": title]))
        }

        // A large JSON body, gzip-compressed on the way (Content-Encoding: gzip; the server must inflate it).
        func importBooks(_ books: [NewBook]) async -> Result<Void, RepositoryError> {
            await performRequest(Endpoint.post("books/import", body: books).gzipped())
        }

        // A download to a file: resumable, checked, moved into place atomically.
        func fetchExport(to file: URL, sha256: String) async -> Result<DownloadedFile, RepositoryError> {
            await performRequest(Endpoint.get("exports/latest.csv").downloading(to: file, resumable: true, expectedSHA256: sha256))
        }

        // A body read while it arrives.
        func follow() async throws {
            // The timeout covers the whole exchange: a body that never ends needs none.
            let log = try await performRequest(Endpoint<ResponseChunks>(.get, "logs/live", timeout: .infinity)).get()
            for try await chunk in log { print(String(decoding: chunk, as: UTF8.self), terminator: "") }
        }

        // Newline-delimited JSON, one object per line.
        func watch() async throws {
            let changes = try await performRequest(Endpoint<ResponseChunks>(.get, "books/changes", timeout: .infinity)).get()
            for try await line in changes.lines where !line.isEmpty {
                let book = try FastJSONDecoder().decode(Book.self, from: Data(line.utf8))
                print(book.title)
            }
        }
    }

    final class FeedRepository: AbstractRepository, @unchecked Sendable {
        struct Change: Decodable { var id: Int; var title: String }

        // A completion streamed over POST: read once, never sent again.
        func complete(_ prompt: String) async throws {
            let events = try await performRequest(
                Endpoint<ServerSentEvents>(.post, "completions", parameters: ["prompt": prompt, "stream": true])).get()
            for try await event in events where event.data != "[DONE]" { print(event.data, terminator: "") }
        }

        // A feed that survives a dropped connection: it reconnects with Last-Event-ID and resumes.
        func followChanges(_ handle: (Change) -> Void) async throws {
            let events = try await performRequest(Endpoint<ServerSentEvents>.get("changes").reconnecting(after: .seconds(3))).get()
            for try await event in events where event.type == "change" { handle(try event.decoded(as: Change.self, using: FastJSONDecoder(configuration.jsonDecoder))) }
        }

        // In FeedRepository: the same feed, telling the user while it reconnects.
        static func changesWithStatus(_ status: @escaping @Sendable (String?) -> Void) -> Endpoint<ServerSentEvents> {
            Endpoint<ServerSentEvents>.get("changes").reconnecting(after: .seconds(3)) { change in
                switch change {
                case .reconnecting(let attempt, let wait, _): status("Reconnecting in \(wait) (attempt \(attempt))…")
                case .reconnected: status(nil)
                }
            }
        }
    }

    static func observe(_ books: LibraryRepository) async {
        // Requests in flight, for a spinner: the current count first, then every change.
        Task {
            for await count in NetworkActivity.shared.updates() { print(count == 0 ? "idle" : "\(count) in flight") }
        }

        // Upload and download progress of one call, on either transport. A file download counts the
        // bytes in the file, those an earlier attempt left included: call it again to resume.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latest.csv")
        let download = Endpoint<DownloadedFile>.get("exports/latest.csv").downloading(to: file, resumable: true)
            .reportingProgress { progress in
                print("\(progress.bytesReceived) of \(progress.totalBytesToReceive ?? -1) bytes")
            }
        _ = await books.performRequest(download)

        // An upload's: bytes sent of the body's length. Handlers run on a transport's thread: hop to
        // the main actor before touching the UI.
        let photo = FileManager.default.temporaryDirectory.appendingPathComponent("photo.jpg")
        let upload = Endpoint<Void>.upload(.put, "photos/1", body: .file(photo))
            .reportingProgress { progress in print("\((progress.uploadFraction ?? 0) * 100) % sent") }
        _ = await books.performRequest(upload)

        // Cancelling the task cancels the request on the wire, its retries and its wait for a refresh.
        let call = Task { await books.book(id: 1) }
        call.cancel()
        if case .failure(.cancelled) = await call.value { print("cancelled") }
    }
}

// MARK: Pinning and TLS on Linux

enum PinningArticle {
    static func pinnedConfiguration() throws -> NetworkingConfiguration {
        try NetworkingConfiguration(
            domainURL: "api.example.com",
            usePinningCertificate: true,
            pinnedPublicKeys: [
                try PublicKeyPin("s9E+ccPCNuubiNHA4/2UfpBr4ra53YWcTV/1yP9QRaI="),   // current key
                try PublicKeyPin("haeTERVz6CdUOhkI2+HHiQn3eKbHt9Kzene8NHZ+4gU="),   // next key, for rotation
            ],
            pinnedCertificateFiles: [URL(fileURLWithPath: "/etc/books/api.pem")],  // PEM or DER; its key is pinned too
            certificateAuthorityFile: URL(fileURLWithPath: "/etc/books/private-ca.pem"))  // private PKI
    }

    static func mutualTLSConfiguration() throws -> NetworkingConfiguration {
        var configuration = try NetworkingConfiguration(
            domainURL: "internal.example.com",
            certificateAuthorityFile: URL(fileURLWithPath: "/etc/books/private-ca.pem"))
        configuration.clientCertificate = .pem(
            certificate: URL(fileURLWithPath: "/etc/books/client.pem"),
            privateKey: URL(fileURLWithPath: "/etc/books/client.key"))
        // Or: .pkcs12(URL(fileURLWithPath: "/etc/books/client.p12"), password: archivePassword)
        return configuration
    }

    #if os(Linux) && canImport(CCurl)
        static func proxiedTransport(password: String) -> LibcurlTransport {
            // Or ProxyServer(url:), from a URL such as "http://ci:secret@proxy.internal:3128".
            let proxy = ProxyServer(
                .http, host: "proxy.internal", port: 3128, username: "ci", password: password,
                excludedHosts: ["localhost", "internal.example.com"])
            return LibcurlTransport(proxy: proxy)
        }

        final class DockerRepository: AbstractRepository, @unchecked Sendable {
            struct Container: Decodable { var Id: String; var Image: String }

            convenience init() throws {
                // The host names the server only: every connection goes to the socket.
                let transport = LibcurlTransport(unixSocket: URL(fileURLWithPath: "/var/run/docker.sock"))
                self.init(configuration: try NetworkingConfiguration(baseURL: "http://localhost/v1.47"), transport: transport)
            }

            func containers() async -> Result<[Container], RepositoryError> {
                await performRequest(Endpoint.get("containers/json").withoutSession())
            }
        }
    #endif
}

// MARK: Interceptors, retries and logging

enum PipelineArticle {
    typealias Book = GettingStartedArticle.Book
    typealias LibraryRepository = GettingStartedArticle.LibraryRepository

    struct RequestIDInterceptor: Interceptor {
        func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
            async throws(RepositoryError) -> TransportResponse {
            var request = request
            request.headers["X-Request-ID"] = context.id.uuidString
            let response = try await next(request)
            if let token = response.headers["X-Refreshed-Token"] { print("the server rotated the token:", token.count) }
            return response
        }
    }

    /// Sees each request once, however often the retry step repeats it.
    struct CallTracer: Interceptor {
        var position: InterceptorPosition { .outsideRetries }

        func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
            async throws(RepositoryError) -> TransportResponse {
            let response = try await next(request)
            print("\(context.name ?? request.url.path): \(response.statusCode) after \(context.attempt) attempt(s)")
            return response
        }
    }

    /// Endpoints with retry policies of their own, whatever the configuration's.
    static func endpointsWithTheirOwnRetries() -> (Endpoint<[Book]>, Endpoint<Book>, Endpoint<Void>) {
        let search = Endpoint<[Book]>.get("books", parameters: ["q": "dune"]).retrying(.never)
        let report = Endpoint<Book>.get("reports/daily").retrying(RetryPolicy(maximumAttempts: 5))
        var deduplicated = RetryPolicy.default
        deduplicated.retryableMethods.insert(.post)     // the server keys the charge on the call's Idempotency-Key
        let charge = Endpoint<Void>.post("charges", parameters: ["amount": 42], headers: ["Idempotency-Key": UUID().uuidString])
            .retrying(deduplicated)
        return (search, report, charge)
    }

    static func retryingConfiguration() throws -> NetworkingConfiguration {
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.retryPolicy = .default            // off (RetryPolicy.never) unless you ask
        configuration.retryPolicy.retryableMethods.insert(.post)   // only if your POSTs are idempotent
        return configuration
    }

    static func withCookies(_ configuration: NetworkingConfiguration) -> (NetworkingConfiguration, CookieStorage) {
        var configuration = configuration
        let cookies = CookieStorage()
        configuration.cookieStorage = cookies
        return (configuration, cookies)
    }
    // cookies.cookies(for: url), or repository.cookies(forPath: "cart")

    static func loggingConfiguration() throws -> NetworkingConfiguration {
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.logging = LoggingConfiguration(level: .debug)   // .off, .error, .info, .debug
        configuration.secretFields = ["email", "card_number"]         // redacted by exact name
        return configuration
    }

    /// The article's `import Logging` brings swift-log, which this package does not depend on: a
    /// stand-in with swift-log's `Logger` API lets the bridge compile as it is written.
    enum SwiftLog {
        struct Logger: Sendable {
            enum Level { case debug, info, error }
            let label: String
            func log(level: Level, _ message: @autoclosure () -> String) { _ = (level, message()) }
        }

        struct SwiftLogBridge: NetworkLogging {
            let logger: Logger

            func log(_ record: LogRecord) {
                logger.log(level: record.level == .error ? .error : .info, "\(record.message)")
            }
        }

        static func bridged() -> LoggingConfiguration {
            // configuration.logging = LoggingConfiguration(level: .info, logger: SwiftLogBridge(logger: Logger(label: "api")))
            LoggingConfiguration(level: .info, logger: SwiftLogBridge(logger: Logger(label: "api")))
        }
    }

    // In a script or a command-line tool without async code:
    static func fetchSynchronously(_ books: LibraryRepository) -> Result<Book, RepositoryError> {
        books.performBlockingRequest(.get("books/1"), maximumWait: 10)
    }
}

// MARK: Performance

#if os(Linux) && canImport(CCurl)
    enum PerformanceArticle {
        typealias Book = GettingStartedArticle.Book
        typealias LibraryRepository = GettingStartedArticle.LibraryRepository

        static func makeLibrary(configuration: NetworkingConfiguration) -> (LibcurlTransport, LibraryRepository) {
            // Linux (LibcurlTransport); `configuration` and `ids` are the app's.
            // One transport for the app's life (it owns a thread and a connection pool).
            let transport = LibcurlTransport()
            let library = LibraryRepository(configuration: configuration, transport: transport)
            return (transport, library)
        }

        static func manyInFlight(_ library: LibraryRepository, on transport: LibcurlTransport, ids: [Int]) async -> [Book] {
            // Later, many small requests at once:
            let books = await withTaskExecutorPreference(transport.taskExecutor) {
                await withTaskGroup(of: Book?.self) { group in
                    for id in ids { group.addTask { try? await library.book(id: id).get() } }
                    return await group.reduce(into: [Book]()) { books, book in if let book { books.append(book) } }
                }
            }
            return books
        }
    }
#endif

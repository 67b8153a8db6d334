import Foundation
import Networking
import NetworkingTestSupport
import Testing

// Every code block of README.md, so the documentation cannot drift from the API. Types live in a
// namespace so they do not clash with other tests; top-level statements are wrapped in functions.
enum Readme {
    // MARK: Quick start

    struct User: Codable, Sendable { let id: Int; let name: String }
    struct Book: Decodable, Sendable { let id: Int; let title: String }
    struct BooksPage: Decodable, Sendable { let data: [Book] }
    struct NewBook: Encodable, Sendable { let title: String; let author: String }

    final class BooksRepository: AbstractRepository, @unchecked Sendable {
        func fetchBooks(page: Int) async -> Result<BooksPage, RepositoryError> {
            await performRequest(.get("books", parameters: ["page": page]))
        }

        func addBook(_ book: NewBook) async -> Result<Void, RepositoryError> {
            await performRequest(.post("books", body: book))
        }
    }

    static func quickStart() async throws {
        let configuration = try NetworkingConfiguration(
            useSecureConnection: false, domainURL: "127.0.0.1", port: 8000, subdomainURL: "/api/v1")
        let session = SessionManager<User>(store: FileCredentialStore(applicationName: "books"))
        let books = BooksRepository(configuration: configuration, sessionManager: session)

        switch await books.fetchBooks(page: 1) {
        case .success(let page): print(page.data.map(\.title))
        case .failure(let error): print(error.localizedDescription)
        }
    }

    // MARK: Writing a repository

    struct LoginResponse: Decodable, Sendable { let token: String }
    struct ExportResult: Decodable, Sendable { let url: URL }

    final class LibraryRepository: AbstractRepository, @unchecked Sendable {
        func book(id: Int) async -> Result<Book, RepositoryError> {
            await performRequest(.get("books/\(id)"))
        }

        func titles(page: Int) async -> Result<[Book], RepositoryError> {
            await performRequest(.get("books", parameters: ["page": page], keyPath: "data"))
        }

        func markRead(userID: Int) async -> Result<Void, RepositoryError> {
            await performRequest(.post("users/\(userID)/notifications/read_all"))
        }

        func cover(id: Int) async -> Result<TransportResponse, RepositoryError> {
            await performRawRequest(.get("books/\(id)/cover", headers: ["Accept": "image/png"]))
        }

        func importBooks(_ books: [NewBook]) async -> Result<Void, RepositoryError> {
            await performRequest(Endpoint(.post, "books/import", body: books, timeout: 120))
        }

        func login(email: String, password: String) async -> Result<LoginResponse, RepositoryError> {
            await performAuthenticationRequest(.post("auth/login", parameters: ["email": email, "password": password]))
        }

        func export() async -> Result<ExportResult, RepositoryError> {
            await performPollingRequest(.get("exports/latest"))
        }

        func page(_ number: Int) async -> Result<RepositoryResponse<BooksPage>, RepositoryError> {
            await performRequest(.get("books", parameters: ["page": number]))
        }

        func bookTitles() async -> Result<[String], RepositoryError> {
            await performRequest(Endpoint.get("books").decoding { input in
                try input.decode([Book].self, at: "data").map(\.title)
            })
        }
    }

    static func firstPages(_ library: LibraryRepository) async throws {
        let first = try await library.page(1).get()
        print(first.value.data.count, first.statusCode, first.headers["X-Total-Count"] ?? "?", first.source)
        if let next = first.link(rel: "next") { print("next page:", next) }
    }

    static func stagingConfiguration() throws -> NetworkingConfiguration {
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.domainURL = "staging.example.com"
        configuration.timeout = 30
        configuration.defaultHeaders["X-Client"] = "books-cli"
        configuration.queryEncodingStyle = QueryEncodingStyle(arrays: .noBrackets, booleans: .numeric)
        try configuration.validate()
        return configuration
    }

    // MARK: Routes

    struct BookID: Encodable, Sendable { let id: Int }

    final class RoutedRepository: AbstractRepository, @unchecked Sendable {
        func book(id: Int) async -> Result<Book, RepositoryError> {
            await performRequest(.route("book", pathVariables: ["id": id]))
        }

        func create(_ book: NewBook) async -> Result<Book, RepositoryError> {
            await performRequest(.route("createBook", body: book))
        }

        func refresh(_ book: BookID) async -> Result<Book, RepositoryError> {
            await getObject(book)
        }
    }

    static func routedConfiguration(routeFile: URL) throws -> NetworkingConfiguration {
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com", subdomainURL: "/api/v1")
        var routes = try RouteTable(contentsOf: routeFile)
        try routes.add(Route(name: "export", method: .post, path: "exports/{format}", timeout: 120))
        try routes.register(BookID.self, methods: [.get, .put, .delete], path: "books/:id")
        try routes.setMapping(forRoute: "book") { (book: Book) in book }
        configuration.routes = routes
        return configuration
    }

    /// The README's JSON code blocks, in order.
    static func jsonBlocks() throws -> [String] {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("README.md").path) { folder.deleteLastPathComponent() }
        let text = try String(contentsOf: folder.appendingPathComponent("README.md"), encoding: .utf8)
        return text.components(separatedBy: "```json\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
    }

    // MARK: Transfers

    final class FilesRepository: AbstractRepository, @unchecked Sendable {
        func uploadPhoto(_ file: URL) async -> Result<Void, RepositoryError> {
            await performRequest(Endpoint.upload(.put, "photos/1", body: .file(file)).withContentDigests([.md5, .sha256]))
        }

        func submit(report: URL, title: String) async throws -> Result<Void, RepositoryError> {
            var form = MultipartFormData()
            try form.append(fileAt: report, name: "report")
            form.append(Data("notes".utf8), name: "notes", fileName: "notes.txt", contentType: "text/plain")
            return await performRequest(Endpoint.upload(.post, "reports", form: form, parameters: ["title": title]))
        }

        func importBooks(_ books: [NewBook]) async -> Result<Void, RepositoryError> {
            await performRequest(Endpoint.post("books/import", body: books).gzipped())
        }

        func fetchExport(to file: URL, sha256: String) async -> Result<DownloadedFile, RepositoryError> {
            await performRequest(Endpoint.get("exports/latest.csv").downloading(to: file, resumable: true, expectedSHA256: sha256))
        }

        func follow() async throws {
            let log = try await performRequest(Endpoint<ResponseChunks>.get("logs/live")).get()
            for try await chunk in log { print(String(decoding: chunk, as: UTF8.self), terminator: "") }
        }
    }

    // MARK: Errors

    enum BooksError: CustomRepositoryErrorType {
        case notFound
        case duplicateISBN
        case validation([String: [String]])

        var name: String { "\(self)" }
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

    static func installHook() {
        DecodingFailure.defaultHandler = { failure in
            print("\(failure.entityType) at \(failure.codingPath): \(failure.reason)")
            print(failure.context.request, failure.statusCode ?? 0, failure.bodyExcerpt)
        }
    }

    // MARK: Sessions

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

        switch await session.bootstrap(fetchingUserWith: users) {
        case .restored(let user): print("welcome back", user?.name ?? "")
        case .noSession, .expired, .storeFailed: print("please log in")
        case .userUnavailable(let error): print("offline:", error.localizedDescription)
        }
    }

    // MARK: Transports and pinning

    static func pinnedConfiguration() throws -> NetworkingConfiguration {
        try NetworkingConfiguration(
            domainURL: "api.example.com",
            usePinningCertificate: true,
            pinnedPublicKeys: [
                try PublicKeyPin("s9E+ccPCNuubiNHA4/2UfpBr4ra53YWcTV/1yP9QRaI="),
                try PublicKeyPin("haeTERVz6CdUOhkI2+HHiQn3eKbHt9Kzene8NHZ+4gU="),
            ],
            pinnedCertificateFiles: [URL(fileURLWithPath: "/etc/books/api.pem")],
            certificateAuthorityFile: URL(fileURLWithPath: "/etc/books/private-ca.pem"))
    }

    // MARK: Token refresh

    struct TokenResponse: Decodable, Sendable { let token: String; let refreshToken: String; let expiresIn: Double }

    final class AuthRepository: AbstractRepository, TokenRefresher, @unchecked Sendable {
        func refreshCredential(_ credential: Credential) async -> Result<Credential, RepositoryError> {
            let response: Result<TokenResponse, RepositoryError> = await performAuthenticationRequest(
                .post("auth/refresh", parameters: ["refresh_token": credential.refreshToken ?? ""]))
            return response.map {
                Credential(accessToken: $0.token, refreshToken: $0.refreshToken, expiresAt: Date().addingTimeInterval($0.expiresIn))
            }
        }
    }

    static func makeSession(configuration: NetworkingConfiguration) -> SessionManager<User> {
        SessionManager<User>(
            store: FileCredentialStore(applicationName: "books"),
            refresher: AuthRepository(configuration: configuration),
            refreshPolicy: RefreshPolicy(leeway: 30, window: RefreshWindow(maximumRefreshes: 5, interval: 30)))
    }

    // MARK: Retries, interceptors, logging

    static func retryingConfiguration() throws -> NetworkingConfiguration {
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.retryPolicy = .default
        configuration.retryPolicy.retryableMethods.insert(.post)
        return configuration
    }

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

    struct CallTracer: Interceptor {
        var position: InterceptorPosition { .outsideRetries }

        func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
            async throws(RepositoryError) -> TransportResponse {
            let response = try await next(request)
            print("\(context.name ?? request.url.path): \(response.statusCode) after \(context.attempt) attempt(s)")
            return response
        }
    }

    static func withCookies(_ configuration: NetworkingConfiguration) -> (NetworkingConfiguration, CookieStorage) {
        var configuration = configuration
        let cookies = CookieStorage()
        configuration.cookieStorage = cookies
        return (configuration, cookies)
    }

    static func loggingConfiguration() throws -> NetworkingConfiguration {
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.logging = LoggingConfiguration(level: .debug)
        configuration.secretFields = ["email", "card_number"]
        return configuration
    }

    /// A stand-in with swift-log's `Logger` API, so the README's bridge compiles without the package.
    enum SwiftLog {
        struct Logger: Sendable {
            enum Level { case debug, info, error }
            let label: String
            func log(level: Level, _ message: @autoclosure () -> String) { _ = (level, message()) }
        }

        struct SwiftLogBridge: NetworkLogging {
            let logger: Logger

            func log(_ record: LogRecord) {
                logger.log(level: record.level == .error ? .error : record.level == .debug ? .debug : .info, "\(record.message)")
            }
        }
    }

    // MARK: Activity, progress, cancellation, blocking calls

    static func observe(_ books: LibraryRepository) async {
        Task {
            for await count in NetworkActivity.shared.updates() { print(count == 0 ? "idle" : "\(count) in flight") }
        }

        let download = Endpoint<TransportResponse>.get("exports/latest.csv").reportingProgress { progress in
            print("\(progress.bytesReceived) of \(progress.totalBytesToReceive ?? -1) bytes")
        }
        _ = await books.performRawRequest(download)

        let call = Task { await books.book(id: 1) }
        call.cancel()
        if case .failure(.cancelled) = await call.value { print("cancelled") }
    }

    static func fetchSynchronously(_ books: LibraryRepository) -> Result<Book, RepositoryError> {
        books.performBlockingRequest(.get("books/1"), maximumWait: 10)
    }

    // MARK: Testing your repositories

    static func testNotFound() async throws {
        let transport = StubTransport(routes: [
            .json(.get, "books", #"{"data": [{"id": 1, "title": "Dune"}]}"#),
            .status(.get, "books/99", 404, json: #"{"code": "not_found"}"#),
            .failure(.post, "books/import", .network(.connectionRefused)),
        ])
        let configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        let books = LibraryRepository(configuration: configuration, transport: transport, customErrors: booksErrors)
        let missing = await books.book(id: 99)
        assert(missing.failure?.customError(as: BooksError.self) != nil)
        assert(transport.requests.first?.url.path == "/books/99")
    }
}

@Suite("README samples")
struct ReadmeSamplesTests {
    @Test("the stub-transport sample behaves as the README says")
    func stubSample() async throws {
        let transport = StubTransport(routes: [
            .json(.get, "books", #"{"data": [{"id": 1, "title": "Dune"}]}"#),
            .status(.get, "books/99", 404, json: #"{"code": "not_found"}"#),
            .failure(.post, "books/import", .network(.connectionRefused)),
        ])
        let configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        let books = Readme.LibraryRepository(configuration: configuration, transport: transport, customErrors: Readme.booksErrors)
        let missing = await books.book(id: 99)
        let titles = await books.titles(page: 1)
        let imported = await books.importBooks([])
        #expect(missing.failure.map(Readme.describe) == "That book does not exist.")
        #expect(transport.requests.first?.url.path == "/books/99")
        #expect((try? titles.get())?.map(\.title) == ["Dune"])
        guard case .noNetworkConnection(.connectionRefused, _)? = imported.failure else {
            Issue.record("expected connection refused, got \(String(describing: imported.failure))")
            return
        }
    }

    @Test("metadata on success, a decoding step, a changed setting and an interceptor position, as the README shows them")
    func seamSamples() async throws {
        let transport = StubTransport(routes: [
            .status(
                .get, "books", 200, json: #"{"data": [{"id": 1, "title": "Dune"}]}"#,
                headers: ["X-Total-Count": "41", "Link": #"<https://staging.example.com/books?page=2>; rel="next""#])
        ])
        let configuration = try Readme.stagingConfiguration()
        #expect(configuration.baseURL.absoluteString == "https://staging.example.com")
        let books = Readme.LibraryRepository(configuration: configuration, transport: transport, interceptors: [Readme.CallTracer()])
        let page = try await books.page(1).get()
        #expect(page.value.data.map(\.title) == ["Dune"])
        #expect(page.statusCode == 200 && page.headers["X-Total-Count"] == "41" && page.source == .network)
        #expect(page.link(rel: "next")?.absoluteString == "https://staging.example.com/books?page=2")
        #expect(try await books.bookTitles().get() == ["Dune"])
        #expect(transport.requests.first?.headers["X-Client"] == "books-cli")
        var broken = configuration
        broken.timeout = -1
        #expect(throws: RepositoryError.self) { try broken.validate() }
        let refused = await Readme.LibraryRepository(configuration: broken, transport: transport).page(1)
        guard case .invalidConfiguration(let reason)? = refused.failure else {
            Issue.record("expected invalidConfiguration, got \(refused)")
            return
        }
        #expect(reason.contains("timeout"))
        #expect(transport.requests.count == 2)
    }

    @Test("the README's route file loads, and its routes work through a stub")
    func routeSamples() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("readme-routes-\(UUID().uuidString).json")
        try Data(try #require(Readme.jsonBlocks().first).utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let configuration = try Readme.routedConfiguration(routeFile: file)
        #expect(configuration.routes.names == ["book", "books", "cover", "createBook", "export", "login"])
        let transport = StubTransport(routes: [
            .json(.get, "books/7", #"{"id": 7, "title": "Dune"}"#),
            .json(.post, "books", status: 201, #"{"id": 8, "title": "New"}"#),
        ])
        let repository = Readme.RoutedRepository(configuration: configuration, transport: transport)
        #expect(try await repository.book(id: 7).get().title == "Dune")
        #expect(try await repository.refresh(Readme.BookID(id: 7)).get().id == 7)
        #expect(try await repository.create(Readme.NewBook(title: "New", author: "A")).get().id == 8)
        let sent = try #require(transport.requests.last?.body?.inMemoryData)
        #expect(try JSONValue(parsing: sent) == ["book": ["title": "New", "author": "A"]])
    }

    @Test("the quick-start configuration gives the documented base URL")
    func quickStartConfiguration() throws {
        let configuration = try NetworkingConfiguration(
            useSecureConnection: false, domainURL: "127.0.0.1", port: 8000, subdomainURL: "/api/v1")
        #expect(configuration.baseURL.absoluteString == "http://127.0.0.1:8000/api/v1")
    }
}

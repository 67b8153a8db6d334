import Foundation
import Networking
import NetworkingCache
import NetworkingOffline
import NetworkingTestSupport
import Synchronization

// The Networking demo: a books client against the project's test API (it uses the test API's
// own control routes, so another API will not do). `script/demo` starts the test API and passes
// its URL; run by hand, after
// `set -a; eval "$(script/server start)"; set +a`, with `swift run Demo` (it then reads
// NETWORKING_TEST_API_URL) or `swift run Demo --base-url URL`.

let report = DemoReport()

func baseURL() -> String? {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: "--base-url"), index + 1 < arguments.count { return arguments[index + 1] }
    let environment = ProcessInfo.processInfo.environment
    return environment["NETWORKING_BASE_URL"] ?? environment["NETWORKING_TEST_API_URL"]
}

func makeConfiguration(_ text: String, hook: @escaping DecodingFailureHandler) throws -> NetworkingConfiguration {
    var configuration = try NetworkingConfiguration(baseURL: text)
    configuration.timeout = 10
    configuration.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
    configuration.jsonDecoder.dateDecodingStrategy = .iso8601
    configuration.jsonEncoder.keyEncodingStrategy = .convertToSnakeCase
    configuration.decodingFailureHandler = hook
    return configuration
}

guard let base = baseURL() else {
    print("Give the API's base URL: script/demo (starts the local test API), or swift run Demo --base-url URL")
    exit(2)
}

let hookReports = Mutex<[DecodingFailure]>([])
let storeFolder = FileManager.default.temporaryDirectory.appendingPathComponent("networking-demo-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: storeFolder) }

do {
    report.begin("Configure")
    let configuration = try makeConfiguration(base) { failure in hookReports.withLock { $0.append(failure) } }
    report.ok(
        "base URL \(configuration.baseURL.absoluteString), timeout \(Int(configuration.timeout)) s, transport \(type(of: DefaultTransport.shared))"
    )

    let store = FileCredentialStore(fileURL: storeFolder.appendingPathComponent("session.json"))
    let session = SessionManager<User>(store: store)
    let authentication = AuthenticationRepository(configuration: configuration)
    let control = TestControlRepository(configuration: configuration)

    report.begin("Sign in")
    var token = ""
    switch await authentication.login(email: "reader@example.com", password: "secret123") {
    case .success(let login):
        try session.login(user: login.user, credential: login.credential)
        token = login.token
        report.ok("signed in as \(login.user.name) <\(login.user.email)>; session stored in \(store.fileURL.lastPathComponent) (mode 0600)")
    case .failure(let error):
        report.fail("login failed: \(error.localizedDescription)")
    }

    report.begin("Bootstrap the session in a new SessionManager over the same store (as after a restart)")
    let restored = SessionManager<User>(store: store, refresher: authentication)
    let eventNames = restored.events().map { "\($0)".components(separatedBy: "(").first ?? "" }
    let eventLog = Task {
        var seen: [String] = []
        for await name in eventNames {
            seen.append(name)
            if name == "loggedOut" { break }
        }
        return seen
    }
    let users = UsersRepository(configuration: configuration, sessionManager: restored)
    switch await restored.bootstrap(fetchingUserWith: users) {
    case .restored(let user?):
        report.ok("restored: logged in = \(restored.isLoggedIn), current user = \(user.name) (fetched from GET users/me)")
    case let outcome:
        report.fail("expected a restored session with its user, got \(outcome)")
    }

    report.begin("Fetch the current user")
    switch await users.fetchCurrentUser() {
    case .success(let user):
        report.ok("#\(user.id) \(user.name), member since \(user.createdAt.formatted(date: .abbreviated, time: .omitted))")
    case .failure(let error): report.fail(error.localizedDescription)
    }

    let books = BooksRepository(configuration: configuration, sessionManager: restored, customErrors: BooksRepository.errors)
    report.begin("List a page of books")
    switch await books.fetchBooks(page: 1) {
    case .success(let page):
        report.ok("page \(page.page.current) of \(page.page.totalPages) (\(page.page.totalCount) books):")
        for book in page.data.prefix(3) { report.info("- \(book.title) by \(book.author) (\(book.genre.rawValue), \(book.year))") }
    case .failure(let error): report.fail(error.localizedDescription)
    }

    report.begin("Create a book")
    switch await books.addBook(NewBook(title: "The Demo Book", author: "A. Swift", genre: "science", year: 2026)) {
    case .success: report.ok("created \"The Demo Book\" (POST books → 201)")
    case .failure(let error): report.fail(error.localizedDescription)
    }

    report.begin("A 422 becomes a custom error")
    switch await books.addBook(NewBook(title: "", author: "Nobody", genre: "cookbook", year: 2026)) {
    case .failure(let error):
        if case .validation(let fields)? = error.customError(as: BooksError.self) {
            report.ok("BooksError.validation with \(fields.count) fields:")
            for (field, messages) in fields.sorted(by: { $0.key < $1.key }) {
                report.info("- \(field): \(messages.joined(separator: ", "))")
            }
        } else {
            report.fail("expected BooksError.validation, got \(error)")
        }
    case .success: report.fail("an invalid book was accepted")
    }

    report.begin("A model/API mismatch fires the decode-error hook")
    switch await books.fetchBookWithUnknownGenre() {
    case .failure(.decodeError(let failure)):
        let heard = hookReports.withLock { $0.count }
        if heard == 1 {
            report.ok("hook heard: \(failure.entityType) at \(failure.codingPath): \(failure.reason)")
        } else {
            report.fail("the hook heard \(heard) reports instead of 1")
        }
    case let other: report.fail("expected .decodeError, got \(other)")
    }

    report.begin("Routes from routes.json: named calls and the object router, no paths in code")
    var routed = configuration
    routed.routes = try RoutedBooksRepository.routes()
    routed.activity = NetworkActivity()
    let routedBooks = RoutedBooksRepository(configuration: routed, sessionManager: restored)
    let activity = routed.activity.events()
    switch await routedBooks.books(page: 2) {
    case .success(let page):
        report.ok("route \"books\" (GET books, key path data): \(page.count) books, first \"\(page.first?.title ?? "-")\"")
    case .failure(let error): report.fail(error.localizedDescription)
    }
    switch await routedBooks.book(id: 3) {
    case .success(let book):
        report.ok("route \"book\" (GET books/:id) with id 3: \"\(book.title)\"")
        switch await routedBooks.refreshed(book) {
        case .success(let fresh): report.ok("object router: GET \(type(of: fresh)) #\(fresh.id) found books/:id from the object itself")
        case .failure(let error): report.fail(error.localizedDescription)
        }
    case .failure(let error): report.fail(error.localizedDescription)
    }
    switch await routedBooks.create(NewBook(title: "Routed", author: "A. Route", genre: "novel", year: 2026)) {
    case .success(let created): report.ok("route \"createBook\": \(created.statusCode), book #\(created.value.id)")
    case .failure(let error): report.fail(error.localizedDescription)
    }
    switch await routedBooks.echo(NewBook(title: "Rooted", author: "A. Key", genre: "poetry", year: 2026)) {
    case .success(let echoed) where echoed["title"] == "Rooted":
        report.ok("route \"echoRoot\": sent {\"book\": …} to echo/books.json, read json.book back")
    case let other: report.fail("expected the book back under json.book, got \(other)")
    }
    var blocking: [String] = []
    for await event in activity where event.preventsUserInteraction {
        blocking.append("\(event.kind) \(event.name ?? "?")")
        if event.kind == .finished { break }
    }
    report.ok("activity of the call marked preventUserInteraction: \(blocking.joined(separator: ", "))")

    report.begin("Answers are cached as the server's Cache-Control says (NetworkingCache)")
    let cache = try ResponseCache(configuration: .init(diskFolder: storeFolder.appendingPathComponent("responses")))
    var caching = configuration
    caching.interceptors.append(cache)
    let resources = CachedResourcesRepository(configuration: caching)
    let key = UUID().uuidString
    let first = await resources.resource(key)
    let second = await resources.resource(key)
    let served = await resources.requests(for: key)
    switch (first, second) {
    case (.success(let fetched), .success(let stored)) where fetched.source == .network && stored.source == .cache && served == 1:
        report.ok("fetched once from the network, then answered from the cache (max-age=60): the API saw 1 request")
    case let other: report.fail("expected a network answer, then a cached one, and 1 request: got \(other), \(String(describing: served))")
    }
    switch await resources.storedResource("never-fetched-\(key)") {
    case .failure(let error) where error.isCacheMiss:
        report.ok("a cache-only read of an answer never stored is a miss, without touching the network")
    case let other: report.fail("expected a cache miss, got \(other)")
    }

    report.begin("Writes made while the API is down are queued on disk, then flushed when it is back")
    let host = configuration.baseURL.host ?? ""
    if let apiPort = configuration.baseURL.port, ["127.0.0.1", "localhost"].contains(host) {
        // The API goes "down" behind a local proxy (the test API itself keeps running).
        let proxy = try OutageProxy(upstreamPort: apiPort)
        let outbox = storeFolder.appendingPathComponent("outbox")
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: outbox, retryDelay: 3600))
        var offline = configuration
        offline.domainURL = "127.0.0.1"
        offline.port = proxy.port
        offline.interceptors = [queue]
        let notes = BooksRepository(configuration: offline, sessionManager: restored, customErrors: BooksRepository.errors)
        queue.connect(notes)
        proxy.goDown()
        var tickets: [OfflineTicket] = []
        for title in ["Offline One", "Offline Two"] {
            let write = Endpoint<Void>.post("books", body: NewBook(title: title, author: "A. Queue", genre: "novel", year: 2026))
            switch await queue.perform(write, with: notes) {
            case .queued(let later):
                tickets.append(later.ticket)
                report.info("- \(title): queued as \(later.ticket) (the API is unreachable)")
            case .sent: report.fail("\(title) was sent while the API was down")
            case .failed(let error): report.fail("\(title) was neither sent nor kept: \(error.localizedDescription)")
            }
        }
        if tickets.count == 2 {
            report.ok("2 writes kept in \(outbox.lastPathComponent)/ (stored unsigned, each with an Idempotency-Key)")
        }
        try proxy.comeUp()
        let flushed = await queue.flush()
        if tickets.count == 2, flushed.delivered == tickets, queue.count == 0 {
            // The API accepts a new book only from a signed request.
            report.ok("the API is back: both delivered in the order queued, signed with the current session")
        } else {
            let why = flushed.stoppedBy.map { ": \($0.localizedDescription)" } ?? ""
            report.fail("expected 2 deliveries in order, got \(flushed.delivered.count) (\(queue.count) still queued)\(why)")
        }
    } else {
        report.info(
            "(skipped: the proxy that takes the API down runs on this machine, so the base URL must be a local IPv4 one with a port)")
    }

    report.begin("An expired access token is refreshed once and the call replayed")
    _ = await control.expireToken(token)
    let refreshesBefore = await control.refreshCalls()
    let concurrentUsers = await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<10 { group.addTask { (try? await users.fetchCurrentUser().get()) != nil } }
        var successes = 0
        for await success in group where success { successes += 1 }
        return successes
    }
    let refreshesAfter = await control.refreshCalls()
    if concurrentUsers == 10, let refreshesBefore, let refreshesAfter, refreshesAfter - refreshesBefore == 1 {
        report.ok("10 concurrent calls met the expired token: 1 refresh (POST auth/refresh), 10 successes after replay")
    } else {
        report.fail(
            "expected 10 successes and 1 refresh, got \(concurrentUsers) and \(String(describing: refreshesAfter.flatMap { a in refreshesBefore.map { a - $0 } }))"
        )
    }

    report.begin("A flaky endpoint is retried with backoff (logging at .info shows each attempt)")
    var retrying = configuration
    retrying.retryPolicy = RetryPolicy(baseDelay: 0.2)
    retrying.logging = LoggingConfiguration(level: .info, logger: DemoLogger())
    switch await TestControlRepository(configuration: retrying).flaky(failures: 2) {
    case .success(let flaky) where flaky.attempts == 3: report.ok("succeeded on attempt 3 after two 503 answers")
    case let other: report.fail("expected success on attempt 3, got \(other)")
    }

    report.begin("Without a refresh, an expired token ends the session with a clear message")
    // Kept in memory: ending it must not remove the stored session the restored manager uses.
    let plainSession = SessionManager<User>()
    if let user = session.currentUser { try plainSession.login(user: user, token: token) }
    let plainUsers = UsersRepository(configuration: configuration, sessionManager: plainSession)
    switch await plainUsers.fetchCurrentUser() {
    case .failure(.unauthenticatedSession(let context?)):
        report.ok(RepositoryError.unauthenticatedSession(context).localizedDescription)
        if plainSession.isLoggedIn { report.fail("the session is still active") } else { report.ok("session expired: logged in = false") }
    case let other: report.fail("expected .unauthenticatedSession, got \(other)")
    }
    switch await plainUsers.fetchCurrentUser() {
    case .failure(.unauthenticatedSession(nil)): report.ok("the next call fails at once, without touching the network")
    case let other: report.fail("expected .unauthenticatedSession(nil), got \(other)")
    }

    report.begin("Mark notifications read, then log out")
    if let user = restored.currentUser {
        switch await users.markNotificationsRead(userID: user.id) {
        case .success: report.ok("notifications marked read (204, empty body)")
        case .failure(let error): report.fail(error.localizedDescription)
        }
    } else {
        report.fail("the restored session has no user")
    }
    let storedBefore = FileManager.default.fileExists(atPath: store.fileURL.path)
    try restored.logout()
    let storedAfter = FileManager.default.fileExists(atPath: store.fileURL.path)
    if !restored.isLoggedIn, storedBefore, !storedAfter {
        report.ok("logged out: logged in = false; the stored session was removed")
    } else {
        report.fail(
            "expected a logout that removes the stored session: logged in = \(restored.isLoggedIn), stored before \(storedBefore), after \(storedAfter)"
        )
    }

    report.begin("Session events, as the restored manager streamed them")
    let events = await withTaskGroup(of: [String]?.self) { group in
        group.addTask { await eventLog.value }
        group.addTask {
            try? await Task.sleep(for: .seconds(2))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        eventLog.cancel()
        return first
    }
    let expected = ["restored", "userUpdated", "credentialUpdated", "loggedOut"]
    if let events, events == expected {
        report.ok(events.joined(separator: " → "))
    } else {
        report.fail(
            "expected \(expected.joined(separator: " → ")), got \(events.map { $0.joined(separator: " → ") } ?? "nothing within 2 s")")
    }
} catch {
    report.fail("\(error)")
}

if report.failures.isEmpty {
    print("\nEvery step behaved as expected.")
} else {
    print("\n\(report.failures.count) step(s) behaved unexpectedly:")
    for failure in report.failures { print("  - \(failure)") }
    // `exit` skips the `defer` above: the folder holds a session's tokens.
    try? FileManager.default.removeItem(at: storeFolder)
    exit(1)
}

import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// Routes end to end, continued: the object router's CRUD, root keys, mapping steps and the
/// activity events of blocking routes.
extension RoutesIntegrationTests {
    // MARK: - Object router

    struct RoutedBook: Codable, Sendable, Equatable {
        var id: Int
        var title: String
        var author: String
        var genre: String
        var year: Int
    }

    struct RoutedNewBook: Codable, Sendable {
        var title: String
        var author: String
        var genre: String
        var year: Int
    }

    @Test("The object router creates, reads, replaces, updates and deletes a book; an object route's mapping step runs")
    func objectCRUD() async throws {
        // Given
        var routes = RouteTable.empty
        try routes.register(RoutedNewBook.self, methods: [.post], path: "books")
        try routes.register(RoutedBook.self, methods: [.get, .put, .patch, .delete], path: "books/:id")
        try routes.setMapping(forRoute: "RoutedBook PATCH") { (book: RoutedBook) in
            var shouted = book
            shouted.genre = book.genre.uppercased()
            return shouted
        }
        let (repository, _) = try await loggedIn(routes)
        // When / Then
        let created: RoutedBook = try await repository.postObject(
            RoutedNewBook(title: "Objects", author: "Ann", genre: "poetry", year: 1999)
        ).get()
        #expect(created.title == "Objects")
        let read: RoutedBook = try await repository.getObject(created).get()
        #expect(read == created)
        var replacement = created
        replacement.title = "Objects, Replaced"
        let replaced: RoutedBook = try await repository.putObject(replacement).get()
        #expect(replaced == replacement)
        var change = replaced
        change.year = 2000
        let patched: RoutedBook = try await repository.patchObject(change).get()
        #expect(patched.year == 2000)
        #expect(patched.genre == "POETRY")
        #expect(patched.title == "Objects, Replaced")
        try await repository.deleteObject(patched).get()
        let gone: Result<RoutedBook, RepositoryError> = await repository.getObject(patched)
        #expect(gone.failure?.customError(as: TestAPI.BooksError.self) == .notFound)
    }

    @Test("Object routes of a protocol and of a base class, with a root key, as the server sees them")
    func objectRoutesOnTheWire() async throws {
        var routes = RouteTable.empty
        try routes.register(
            (any Archivable).self, methods: [.post], path: "echo/archive/:id", requestRootKey: "item", requiresSession: false)
        try routes.register(Vehicle.self, methods: [.get, .delete], path: "echo/vehicles/:id", requiresSession: false)
        let repository = TestAPI.Repository(configuration: try configuration(routes))
        let archived: TestAPI.Echo = try await repository.postObject(Memo(id: 4)).get()
        let vehicle: TestAPI.Echo = try await repository.getObject(SportsCar(id: 5)).get()
        #expect(archived.path == "/api/v1/echo/archive/4")
        #expect(archived.json == ["item": ["id": 4]])
        #expect(vehicle.path == "/api/v1/echo/vehicles/5")
        #expect(vehicle.method == "GET")
        #expect(vehicle.data.isEmpty)
        #expect(vehicle.query.isEmpty)
        #expect(await repository.deleteObject(Car(id: 6)).failure == nil)
    }

    // MARK: - Root keys and mapping

    struct Person: Codable, Sendable, Equatable {
        let name: String
        let age: Int
    }

    @Test("Request root keys wrap the body as the server sees it; response key paths unwrap it")
    func rootKeys() async throws {
        let repository = try anonymous([
            Route(
                name: "user", method: .post, path: "echo/users", requestRootKey: "user", responseKeyPath: "json.user",
                requiresSession: false),
            Route(name: "nested", method: .post, path: "echo/users", requestRootKey: "a.b", requiresSession: false),
        ])
        let person = Person(name: "Ann", age: 3)
        let back: Person = try await repository.performRequest(.route("user", body: person)).get()
        let nested: TestAPI.Echo = try await repository.performRequest(.route("nested", body: person)).get()
        #expect(back == person)
        #expect(nested.json == ["a": ["b": ["name": "Ann", "age": 3]]])
    }

    @Test("A missing response key is a .decodeError naming the path, heard by the hook")
    func missingResponseKey() async throws {
        let heard = Recorder<DecodingFailure>()
        let routes = try RouteTable([
            Route(name: "echo", method: .post, path: "echo/k", responseKeyPath: "json.items", requiresSession: false)
        ])
        let repository = TestAPI.Repository(configuration: try configuration(routes, decodingFailureHandler: { heard.record($0) }))
        let result: Result<[Person], RepositoryError> = await repository.performRequest(.route("echo", parameters: ["other": 1]))
        let failure = try #require(decodeFailure(result))
        #expect(failure.codingPath == "json.items")
        #expect(failure.description.contains("json.items"))
        #expect(heard.all.count == 1)
        #expect(heard.all.first?.context.request.url.path == "/api/v1/echo/k")
    }

    struct Child: Codable, Sendable, Equatable {
        var id: Int
        var parentId: Int?
    }

    struct Parent: Codable, Sendable, Equatable {
        var id: Int
        var children: [Child]
    }

    @Test("A mapping step wires children to their parent after decoding the server's answer")
    func mapping() async throws {
        var routes = try RouteTable([
            Route(name: "parent", method: .post, path: "echo/parents", responseKeyPath: "json", requiresSession: false)
        ])
        try routes.setMapping(forRoute: "parent") { (parent: Parent) in
            Parent(id: parent.id, children: parent.children.map { Child(id: $0.id, parentId: parent.id) })
        }
        let repository = TestAPI.Repository(configuration: try configuration(routes))
        let parent: Parent = try await repository.performRequest(
            .route("parent", parameters: ["id": 9, "children": [["id": 1], ["id": 2]]])
        ).get()
        #expect(parent.children == [Child(id: 1, parentId: 9), Child(id: 2, parentId: 9)])
    }

    // MARK: - Activity

    @Test("A blocking route reports started, slow and finished; fast and unmarked calls no slow")
    func activity() async throws {
        // Given: routes on the test API's /slow. Timers can lag by seconds on a loaded machine, so
        // the slow timer runs on a test clock (its wait returns at once) and the blocking call
        // reaches the server only once its slow event was reported (or after 10 s, to fail).
        let servers = try TestServers.require()
        let routes = try RouteTable([
            Route(name: "slowBlocking", path: "slow", requiresSession: false, preventUserInteraction: true),
            Route(name: "slowPlain", path: "slow", requiresSession: false),
            Route(name: "health", path: "health", requiresSession: false, preventUserInteraction: true),
        ])
        func repository(slowCallDelay: TimeInterval, clock: NetworkingClock, transport: (any Transport)? = nil) throws
            -> (TestAPI.Repository, NetworkActivity)
        {
            var configuration = try TestServers.configuration(servers.apiURL)
            configuration.routes = routes
            configuration.clock = clock
            configuration.activity = NetworkActivity(slowCallDelay: slowCallDelay)
            return (TestAPI.Repository(configuration: configuration, transport: transport), configuration.activity)
        }
        let slowSeen = Gate()
        let blockingClock = TestClock()
        let plainClock = TestClock()
        let (blockingRepository, blockingActivity) = try repository(
            slowCallDelay: 0.1, clock: blockingClock.networkingClock, transport: GatedTransport(gate: slowSeen))
        let (plainRepository, plainActivity) = try repository(slowCallDelay: 0.1, clock: plainClock.networkingClock)
        let (fastRepository, fastActivity) = try repository(slowCallDelay: 60, clock: .live)
        let blockingEvents = blockingActivity.events()
        let plainEvents = plainActivity.events()
        let fastEvents = fastActivity.events()
        let slowEvents = blockingActivity.events()
        let watcher = Task {
            for await event in slowEvents where event.kind == .slow { break }
            slowSeen.open()
        }
        let fallback = Task {
            try await Task.sleep(for: .seconds(10))
            slowSeen.open()
        }
        defer { fallback.cancel() }
        // When
        #expect(await blockingRepository.performRequest(Endpoint<Void>.route("slowBlocking", parameters: ["seconds": 0.2])).failure == nil)
        #expect(await plainRepository.performRequest(Endpoint<Void>.route("slowPlain", parameters: ["seconds": 0.3])).failure == nil)
        #expect(await fastRepository.performRequest(Endpoint<Void>.route("health")).failure == nil)
        // Then
        let blocking = await Self.events(of: blockingEvents, until: "slowBlocking")
        let plain = await Self.events(of: plainEvents, until: "slowPlain")
        let fast = await Self.events(of: fastEvents, until: "health")
        #expect(blocking.map(\.kind) == [.started, .slow, .finished])
        #expect(blocking.allSatisfy { $0.preventsUserInteraction && $0.name == "slowBlocking" })
        #expect(blockingClock.sleeps == [.milliseconds(100)])
        #expect(plain.map(\.kind) == [.started, .finished])
        #expect(plain.allSatisfy { !$0.preventsUserInteraction })
        #expect(plainClock.sleeps.isEmpty)
        #expect(fast.map(\.kind) == [.started, .finished])
        #expect(blockingActivity.inFlight == 0)
        await watcher.value
    }

    /// The events up to and including the `.finished` of the call named `name`.
    private static func events(of stream: AsyncStream<ActivityEvent>, until name: String) async -> [ActivityEvent] {
        var seen: [ActivityEvent] = []
        for await event in stream {
            seen.append(event)
            if event.kind == .finished, event.name == name { break }
        }
        return seen
    }
}

/// Sends through the default transport once its gate is open.
final class GatedTransport: Transport {
    private let gate: Gate

    init(gate: Gate) {
        self.gate = gate
    }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        await gate.wait()
        return try await DefaultTransport.shared.send(request)
    }
}

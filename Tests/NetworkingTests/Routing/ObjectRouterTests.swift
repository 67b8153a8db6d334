import Foundation
import Networking
import Synchronization
import Testing

/// The object router (WANetworkRouting's): which route an object's type finds, and what is sent.
/// CRUD against the test API is in `RoutesIntegrationTests`.
@Suite("Object router")
struct ObjectRouterTests {
    private func repository(
        _ routes: RouteTable, transport: AnsweringTransport, session: SessionManager<User>? = nil,
        interceptors: [any Interceptor] = []
    ) throws -> TestRepository {
        TestRepository(
            configuration: try routedConfiguration(routes), sessionManager: session, transport: transport,
            interceptors: interceptors)
    }

    // MARK: - What is sent

    @Test("POST, PUT and PATCH send the object (in the root key) as the body; GET and DELETE send nothing")
    func bodies() async throws {
        // Given
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.get, .post, .put, .patch, .delete], path: "notes/:id", requestRootKey: "note")
        let transport = AnsweringTransport(json: #"{"id": 7, "text": "saved"}"#)
        let repository = try repository(routes, transport: transport)
        let note = Note(id: 7, text: "hello")
        // When
        let got: Note = try await repository.getObject(note).get()
        let posted: Note = try await repository.postObject(note).get()
        let put: Note = try await repository.putObject(note).get()
        let patched: Note = try await repository.patchObject(note).get()
        try await repository.deleteObject(note).get()
        // Then
        #expect([got, posted, put, patched].allSatisfy { $0 == Note(id: 7, text: "saved") })
        let requests = transport.requests
        #expect(requests.map(\.method) == [.get, .post, .put, .patch, .delete])
        #expect(requests.allSatisfy { $0.pathAfterBase == "notes/7" })
        for request in requests where [.post, .put, .patch].contains(request.method) {
            #expect(try jsonBody(of: request) == ["note": ["id": 7, "text": "hello"]])
            #expect(request.headers["Content-Type"] == "application/json")
        }
        for request in requests where [.get, .delete].contains(request.method) {
            #expect(request.body == nil)
            #expect(request.url.query == nil)
            #expect(request.headers["Content-Type"] == nil)
        }
    }

    @Test(
        "An object route takes a mapping step by its name; a named route of that name comes first; a name two object routes share is refused"
    )
    func objectRouteMapping() async throws {
        // Given
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.get, .put], path: "notes/:id")
        try routes.setMapping(forRoute: "Note GET") { (note: Note) in Note(id: note.id, text: note.text.uppercased()) }
        let transport = AnsweringTransport(json: #"{"id": 7, "text": "saved"}"#)
        let repository = try repository(routes, transport: transport)
        let note = Note(id: 7, text: "hello")
        // When
        let got: Note = try await repository.getObject(note).get()
        let put: Note = try await repository.putObject(note).get()
        let optional: Result<Note?, RepositoryError> = await repository.getObject(note)
        // Then: the GET route's step only; a call of another type is refused before sending
        #expect(got.text == "SAVED")
        #expect(put.text == "saved")
        guard case .invalidRequest(let reason, _)? = optional.failure else {
            Issue.record("expected the mapping's type to be refused, got \(optional)")
            return
        }
        #expect(reason.contains("mapping step for Note"))
        #expect(transport.requests.count == 2)
        // A named route of the name takes the step; two object routes of one name refuse it
        var both = try RouteTable([Route(name: "Note GET", path: "elsewhere")])
        try both.register(Note.self, methods: [.get], path: "notes/:id")
        try both.setMapping(forRoute: "Note GET") { (note: Note) in Note(id: note.id, text: note.text.uppercased()) }
        let unmapped: Note = try await self.repository(both, transport: transport).getObject(note).get()
        #expect(unmapped.text == "saved")
        var shared = RouteTable.empty
        try shared.register(Note.self, methods: [.get], path: "notes/:id", name: "item")
        try shared.register(Book.self, methods: [.get], path: "books/:id", name: "item")
        #expect {
            try shared.setMapping(forRoute: "item") { (note: Note) in note }
        } throws: { error in
            "\(error)".contains("2 object routes are named \"item\" (for Note, Book)")
        }
    }

    @Test("An optional object finds its value's route; nil is refused as nil, before sending")
    func optionalObjects() async throws {
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.get], path: "notes/:id")
        let transport = AnsweringTransport(json: #"{"id": 7, "text": "saved"}"#)
        let repository = try repository(routes, transport: transport)
        let selected: Note? = Note(id: 7, text: "hello")
        let got: Note = try await repository.getObject(selected).get()
        #expect(got == Note(id: 7, text: "saved"))
        #expect(transport.requests.map(\.pathAfterBase) == ["notes/7"])
        let none: Note? = nil
        let refused: Result<Note, RepositoryError> = await repository.getObject(none)
        guard case .invalidRequest(let reason, _)? = refused.failure else {
            Issue.record("expected an invalid request, got \(refused)")
            return
        }
        #expect(reason == "the object to GET is nil (an Optional<Note>)")
        #expect(transport.requests.count == 1)
    }

    @Test("Without a root key the object itself is the body")
    func bodyWithoutRootKey() async throws {
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.post], path: "notes")
        let transport = AnsweringTransport(json: #"{"id": 1, "text": "x"}"#)
        let _: Note = try await repository(routes, transport: transport).postObject(Note(id: 1, text: "x")).get()
        #expect(try jsonBody(of: try #require(transport.requests.first)) == ["id": 1, "text": "x"])
        #expect(transport.requests.first?.pathAfterBase == "notes")
    }

    @Test("A dotted root key nests the body, and the response key path is honoured")
    func rootKeyAndKeyPath() async throws {
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.put], path: "notes/{id}", requestRootKey: "data.note", responseKeyPath: "data.note")
        let transport = AnsweringTransport(json: #"{"data": {"note": {"id": 2, "text": "back"}}}"#)
        let answer: Note = try await repository(routes, transport: transport).putObject(Note(id: 2, text: "out")).get()
        #expect(answer == Note(id: 2, text: "back"))
        #expect(try jsonBody(of: try #require(transport.requests.first)) == ["data": ["note": ["id": 2, "text": "out"]]])
    }

    @Test("Object routes that need no session are not signed")
    func withoutSession() async throws {
        // Given
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.get], path: "public/notes/:id", requiresSession: false)
        try routes.register(Memo.self, methods: [.get], path: "memos/:id")
        let session = SessionManager<User>()
        try session.login(user: User(id: 1, name: "Ann"), token: "t0k3n")
        let transport = AnsweringTransport(json: #"{"id": 1, "text": "x"}"#)
        let repository = try repository(routes, transport: transport, session: session)
        // When
        let _: Note = try await repository.getObject(Note(id: 1, text: "x")).get()
        let _: Memo = try await repository.getObject(Memo(id: 1)).get()
        // Then
        #expect(transport.requests.map { $0.headers["Authorization"] } == [nil, "Bearer t0k3n"])
    }

    @Test("Routes are named \"<Type> <METHOD>\", or by the name given")
    func names() async throws {
        // Given
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.get, .put], path: "notes/:id")
        try routes.register(Memo.self, methods: [.get], path: "memos/:id", name: "memo")
        try routes.register(Photo.self, methods: [.get, .delete], path: "photos/:id", name: "photo")
        let names = NameRecorder()
        let transport = AnsweringTransport(json: #"{"id": 1, "text": "x"}"#)
        let repository = try repository(routes, transport: transport, interceptors: [names])
        // When
        let _: Note = try await repository.getObject(Note(id: 1, text: "x")).get()
        let _: Note = try await repository.putObject(Note(id: 1, text: "x")).get()
        let _: Memo = try await repository.getObject(Memo(id: 1)).get()
        try await repository.deleteObject(Photo(id: 1)).get()
        // Then
        #expect(names.all == ["Note GET", "Note PUT", "memo", "photo DELETE"])
    }

    @Test("Object calls can carry the response's metadata")
    func withMetadata() async throws {
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.get], path: "notes/:id")
        let transport = AnsweringTransport(json: #"{"id": 3, "text": "t"}"#)
        let response = try await repository(routes, transport: transport).performRequest(
            Endpoint<RepositoryResponse<Note>>.object(Note(id: 3, text: "t"), method: .get)
        ).get()
        #expect(response.value == Note(id: 3, text: "t"))
        #expect(response.request.url.absoluteString == "http://api.test/api/v1/notes/3")
    }

    // MARK: - Which route an object finds

    @Test("An object of a subclass finds its base class's route")
    func subclass() async throws {
        var routes = RouteTable.empty
        try routes.register(Vehicle.self, methods: [.get], path: "vehicles/:id")
        let transport = AnsweringTransport(json: #"{"id": 2}"#)
        let repository = try repository(routes, transport: transport)
        let car: Vehicle = Car(id: 2)
        let _: Vehicle = try await repository.getObject(Car(id: 1)).get()
        let _: Vehicle = try await repository.getObject(car).get()
        let _: Vehicle = try await repository.getObject(SportsCar(id: 3)).get()
        #expect(transport.requests.map(\.pathAfterBase) == ["vehicles/1", "vehicles/2", "vehicles/3"])
    }

    @Test("An exact type match wins over a base class's route")
    func exactMatchWins() async throws {
        var routes = RouteTable.empty
        try routes.register(Vehicle.self, methods: [.get], path: "vehicles/:id")
        try routes.register(Car.self, methods: [.get], path: "cars/:id")
        let transport = AnsweringTransport(json: #"{"id": 2}"#)
        let repository = try repository(routes, transport: transport)
        let _: Vehicle = try await repository.getObject(Car(id: 1)).get()
        let _: Vehicle = try await repository.getObject(Vehicle(id: 2)).get()
        let typedAsBase: Vehicle = Car(id: 3)
        let _: Vehicle = try await repository.getObject(typedAsBase).get()
        #expect(transport.requests.map(\.pathAfterBase) == ["cars/1", "vehicles/2", "cars/3"])
    }

    @Test("The nearest registered superclass wins over a farther one")
    func nearestSuperclassWins() async throws {
        // Given: routes for the base class and for the class in between
        var routes = RouteTable.empty
        try routes.register(Vehicle.self, methods: [.get], path: "vehicles/:id")
        try routes.register(Car.self, methods: [.get], path: "cars/:id")
        let transport = AnsweringTransport(json: #"{"id": 2}"#)
        // When: an object of a subclass of that class
        let result: Result<Vehicle, RepositoryError> = try await repository(routes, transport: transport).getObject(SportsCar(id: 4))
        // Then: the class in between is the better match, not an equally good one
        #expect(result.failure == nil)
        #expect(transport.requests.map(\.pathAfterBase) == ["cars/4"])
    }

    @Test("The closest class is found by the type system, not by a mirror a class may customise")
    func customMirror() async throws {
        // Given: routes for a base class with a custom mirror and for its subclass
        var routes = RouteTable.empty
        try routes.register(Mirrored.self, methods: [.get], path: "base/:id")
        try routes.register(MirroredChild.self, methods: [.get], path: "child/:id")
        let transport = AnsweringTransport(json: #"{"id": 2}"#)
        // When
        let result: Result<Mirrored, RepositoryError> = try await repository(routes, transport: transport).getObject(MirroredChild(id: 4))
        // Then: the subclass's own route, though its mirror names the base class
        #expect(result.failure == nil)
        #expect(transport.requests.map(\.pathAfterBase) == ["child/4"])
    }

    @Test("An object of a type conforming to a registered protocol finds the protocol's route")
    func protocolConformer() async throws {
        var routes = RouteTable.empty
        try routes.register((any Archivable).self, methods: [.get, .delete], path: "archive/:id")
        let transport = AnsweringTransport(json: #"{"id": 5}"#)
        let repository = try repository(routes, transport: transport)
        let memo: Memo = try await repository.getObject(Memo(id: 5)).get()
        try await repository.deleteObject(Memo(id: 6)).get()
        #expect(memo == Memo(id: 5))
        #expect(transport.requests.map(\.pathAfterBase) == ["archive/5", "archive/6"])
    }

    @Test("An exact type match wins over a protocol's route")
    func exactOverProtocol() async throws {
        var routes = RouteTable.empty
        try routes.register((any Archivable).self, methods: [.get], path: "archive/:id")
        try routes.register((any Shareable).self, methods: [.get], path: "shared/:id")
        try routes.register(Photo.self, methods: [.get], path: "photos/:id")
        let transport = AnsweringTransport(json: #"{"id": 5}"#)
        let _: Photo = try await repository(routes, transport: transport).getObject(Photo(id: 5)).get()
        #expect(transport.requests.map(\.pathAfterBase) == ["photos/5"])
    }

    @Test("Two matching routes (two protocols) are refused, naming both; nothing is sent")
    func ambiguous() async throws {
        var routes = RouteTable.empty
        try routes.register((any Archivable).self, methods: [.get], path: "archive/:id")
        try routes.register((any Shareable).self, methods: [.get], path: "shared/:id")
        let transport = AnsweringTransport(json: #"{"id": 5}"#)
        let result: Result<Photo, RepositoryError> = try await repository(routes, transport: transport).getObject(Photo(id: 5))
        let reason = invalidRequestReason(result)
        #expect(reason.hasPrefix("2 object routes match Photo and GET ("))
        #expect(reason.contains("Archivable"))
        #expect(reason.contains("Shareable"))
        #expect(reason.hasSuffix("): register Photo itself to choose"))
        #expect(transport.requests.isEmpty)
    }

    @Test("No route for the type and method is refused, naming both; nothing is sent")
    func noRoute() async throws {
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.get], path: "notes/:id")
        let transport = AnsweringTransport()
        let repository = try repository(routes, transport: transport)
        let patched: Result<Note, RepositoryError> = await repository.patchObject(Note(id: 1, text: "x"))
        let memo: Result<Memo, RepositoryError> = await repository.getObject(Memo(id: 1))
        #expect(
            invalidRequestReason(patched)
                == "no object route for Note and PATCH: register one with routes.register(Note.self, methods: [.patch], path: …)")
        #expect(
            invalidRequestReason(memo)
                == "no object route for Memo and GET: register one with routes.register(Memo.self, methods: [.get], path: …)")
        #expect(transport.requests.isEmpty)
    }

    @Test("A placeholder the object does not fill is refused, naming the route")
    func missingVariable() async throws {
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.get], path: "notes/:slug")
        let transport = AnsweringTransport()
        let result: Result<Note, RepositoryError> = try await repository(routes, transport: transport).getObject(Note(id: 1, text: "x"))
        #expect(invalidRequestReason(result) == #"route "Note GET" (notes/:slug): the path variable "slug" is missing (or null)"#)
        #expect(transport.requests.isEmpty)
    }

    // MARK: - Registration

    @Test("A method registered twice for the same type is refused")
    func registeredTwice() throws {
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.get, .put], path: "notes/:id")
        let reason = invalidConfigurationReason { () throws(RepositoryError) in
            try routes.register(Note.self, methods: [.get], path: "other/:id")
        }
        #expect(reason == "Note has two routes for GET")
        let invalidPath = invalidConfigurationReason { () throws(RepositoryError) in
            try routes.register(Memo.self, methods: [.get], path: "memos/{id")
        }
        #expect(invalidPath == #"route "Memo GET": the path "memos/{id" has a "{" without its "}""#)
    }

    @Test("A refused registration leaves the table as it was")
    func refusedRegistrationChangesNothing() async throws {
        // Given
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.get], path: "notes/:id")
        // When: DELETE is new, GET is taken
        _ = invalidConfigurationReason { () throws(RepositoryError) in
            try routes.register(Note.self, methods: [.delete, .get], path: "other/:id")
        }
        // Then: DELETE was not registered either
        let transport = AnsweringTransport()
        let deleted = try await repository(routes, transport: transport).deleteObject(Note(id: 1, text: "x"))
        #expect(deleted.failure != nil)
        #expect(transport.requests.isEmpty)
    }

    @Test("Merging a table that routes the same type and method again is refused")
    func mergeDuplicateObjectRoute() throws {
        var routes = RouteTable.empty
        try routes.register(Note.self, methods: [.get], path: "notes/:id")
        var other = RouteTable.empty
        try other.register(Note.self, methods: [.get], path: "other/:id")
        let reason = invalidConfigurationReason { () throws(RepositoryError) in try routes.merge(other) }
        #expect(reason == "both tables have a route for Note and GET")
    }
}

// MARK: - Models

/// A class hierarchy for the object router. Immutable (`let` only), so `@unchecked Sendable` is honest.
class Vehicle: Codable, @unchecked Sendable {
    let id: Int

    init(id: Int) { self.id = id }
}

class Car: Vehicle, @unchecked Sendable {}

final class SportsCar: Car, @unchecked Sendable {}

/// A base class whose custom mirror names itself for every subclass, as a debugging aid might.
class Mirrored: Codable, CustomReflectable, @unchecked Sendable {
    let id: Int

    init(id: Int) { self.id = id }

    var customMirror: Mirror { Mirror(self, children: []) }
}

final class MirroredChild: Mirrored, @unchecked Sendable {}

protocol Archivable: Sendable {}
protocol Shareable: Sendable {}

struct Memo: Codable, Sendable, Hashable, Archivable {
    var id: Int
}

struct Photo: Codable, Sendable, Hashable, Archivable, Shareable {
    var id: Int
}

/// Records the name each call's context carries.
final class NameRecorder: Interceptor {
    private let names = Mutex<[String?]>([])

    var all: [String?] { names.withLock { $0 } }

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext) async throws(RepositoryError)
        -> TransportResponse
    {
        names.withLock { $0.append(context.name) }
        return try await next(request)
    }
}

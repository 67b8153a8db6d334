import Foundation
import Networking
import Testing

/// A route's request root key, response key path and mapping step, through the pipeline.
@Suite("Route root keys, key paths and mapping steps")
struct RouteMappingTests {
    private func repository(_ routes: [Route], transport: AnsweringTransport, hook: DecodingFailureHandler? = nil) throws
        -> TestRepository
    {
        TestRepository(
            configuration: try routedConfiguration(RouteTable(routes), decodingFailureHandler: hook), transport: transport)
    }

    // MARK: - Root keys

    @Test(
        "The request root key wraps the body; a dotted one nests it",
        arguments: [
            ("user", ["user": ["name": "Ann", "age": 3]] as JSONValue), ("a.b", ["a": ["b": ["name": "Ann", "age": 3]]] as JSONValue),
            ("data.user.attributes", ["data": ["user": ["attributes": ["name": "Ann", "age": 3]]]] as JSONValue),
        ])
    func requestRootKey(rootKey: String, expected: JSONValue) async throws {
        struct Person: Encodable, Sendable {
            let name: String
            let age: Int
        }
        let transport = AnsweringTransport()
        let repository = try repository(
            [Route(name: "r", method: .post, path: "users", requestRootKey: rootKey)], transport: transport)
        try await repository.performRequest(Endpoint<Void>.route("r", body: Person(name: "Ann", age: 3))).get()
        try await repository.performRequest(Endpoint<Void>.route("r", parameters: ["name": "Ann", "age": 3])).get()
        #expect(try transport.requests.map { try jsonBody(of: $0) } == [expected, expected])
    }

    @Test(
        "The response key path finds the model: a key, a dotted path, an array index",
        arguments: [
            ("data", #"{"data": {"id": 1, "text": "a"}}"#), ("data.items", #"{"data": {"items": {"id": 1, "text": "a"}}}"#),
            ("data.0", #"{"data": [{"id": 1, "text": "a"}, {"id": 2, "text": "b"}]}"#),
            ("data.1.note", #"{"data": [{}, {"note": {"id": 1, "text": "a"}}]}"#),
        ])
    func responseKeyPath(keyPath: String, json: String) async throws {
        let transport = AnsweringTransport(json: json)
        let repository = try repository([Route(name: "r", path: "x", responseKeyPath: keyPath)], transport: transport)
        let note: Note = try await repository.performRequest(.route("r")).get()
        #expect(note == Note(id: 1, text: "a"))
    }

    @Test("A missing response key is a .decodeError naming the path, and the decode-error hook hears it")
    func missingResponseKey() async throws {
        // Given
        let heard = Recorder<DecodingFailure>()
        let transport = AnsweringTransport(json: #"{"data": {"other": {}}}"#)
        let repository = try repository(
            [Route(name: "r", path: "x", responseKeyPath: "data.items")], transport: transport, hook: { heard.record($0) })
        // When
        let result: Result<[Note], RepositoryError> = await repository.performRequest(.route("r"))
        // Then
        let failure = try #require(decodeFailure(result))
        #expect(failure.codingPath == "data.items")
        #expect(failure.description.contains("data.items"))
        #expect(heard.all.map(\.codingPath) == ["data.items"])
    }

    // MARK: - Mapping steps

    struct Child: Codable, Sendable, Hashable {
        var id: Int
        var parentID: Int?
    }

    struct Parent: Codable, Sendable, Hashable {
        var id: Int
        var children: [Child]
    }

    @Test("A route's mapping step runs after decoding, for every typed call")
    func mapping() async throws {
        // Given: a step wiring children to their parent
        var routes = try RouteTable([Route(name: "parent", path: "parents/:id", responseKeyPath: "data")])
        try routes.setMapping(forRoute: "parent") { (parent: Parent) in
            var wired = parent
            wired.children = parent.children.map { Child(id: $0.id, parentID: parent.id) }
            return wired
        }
        let transport = AnsweringTransport(json: #"{"data": {"id": 9, "children": [{"id": 1}, {"id": 2}]}}"#)
        let repository = TestRepository(configuration: try routedConfiguration(routes), transport: transport)
        // When
        let parent: Parent = try await repository.performRequest(.route("parent", pathVariables: ["id": 9])).get()
        let response = try await repository.performRequest(Endpoint<RepositoryResponse<Parent>>.route("parent", pathVariables: ["id": 9]))
            .get()
        // Then
        #expect(parent.children.map(\.parentID) == [9, 9])
        #expect(response.value == parent)
    }

    struct Refused: Error, CustomStringConvertible {
        var description: String { "the parent has no children" }
    }

    @Test("A mapping step that throws is a .decodeError reaching the hook, with a reason naming the route")
    func mappingThrows() async throws {
        // Given
        let heard = Recorder<DecodingFailure>()
        var routes = try RouteTable([Route(name: "parent", path: "parents/1")])
        try routes.setMapping(forRoute: "parent") { (parent: Parent) throws -> Parent in
            guard !parent.children.isEmpty else { throw Refused() }
            return parent
        }
        let transport = AnsweringTransport(json: #"{"id": 1, "children": []}"#)
        let repository = TestRepository(
            configuration: try routedConfiguration(routes, decodingFailureHandler: { heard.record($0) }), transport: transport)
        // When
        let result: Result<Parent, RepositoryError> = await repository.performRequest(.route("parent"))
        // Then
        let failure = try #require(decodeFailure(result))
        #expect(failure.reason == #"the mapping step of route "parent" failed: the parent has no children"#)
        #expect(failure.entityType == "Parent")
        #expect(failure.context.statusCode == 200)
        #expect(heard.all.map(\.reason) == [failure.reason])
    }

    @Test("A mapping step that throws a DecodingError is reported naming the route too")
    func mappingThrowsDecodingError() async throws {
        var routes = try RouteTable([Route(name: "parent", path: "parents/1")])
        try routes.setMapping(forRoute: "parent") { (parent: Parent) throws -> Parent in
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a parent needs children"))
        }
        let transport = AnsweringTransport(json: #"{"id": 1, "children": []}"#)
        let repository = TestRepository(configuration: try routedConfiguration(routes), transport: transport)
        let result: Result<Parent, RepositoryError> = await repository.performRequest(.route("parent"))
        let failure = try #require(decodeFailure(result))
        #expect(failure.reason.contains("a parent needs children"))
        #expect(failure.reason.contains(#"route "parent""#))
    }

    @Test("A mapping step for another type than the call decodes is refused before sending, naming both types")
    func mappingTypeMismatch() async throws {
        let heard = Recorder<DecodingFailure>()
        var routes = try RouteTable([Route(name: "parent", path: "parents/1")])
        try routes.setMapping(forRoute: "parent") { (parent: Parent) in parent }
        let transport = AnsweringTransport(json: #"{"id": 1, "children": []}"#)
        let repository = TestRepository(
            configuration: try routedConfiguration(routes, decodingFailureHandler: { heard.record($0) }), transport: transport)
        let result: Result<Child, RepositoryError> = await repository.performRequest(.route("parent"))
        let optional: Result<Parent?, RepositoryError> = await repository.performRequest(.route("parent"))
        // Refused before sending: a write would be done, then reported as failed.
        for (failure, asked) in [(result.failure, "Child"), (optional.failure, "Optional<Parent>")] {
            guard case .invalidRequest(let reason, let request?)? = failure else {
                Issue.record("expected an invalid request, got \(String(describing: failure))")
                continue
            }
            #expect(reason == #"route "parent" has a mapping step for Parent, but the call decodes "# + asked)
            #expect(request.url.path.hasSuffix("parents/1"))
        }
        #expect(transport.requests.isEmpty)
        #expect(heard.all.isEmpty)
    }

    @Test("Calls that decode nothing skip the mapping step")
    func mappingSkippedForVoid() async throws {
        var routes = try RouteTable([Route(name: "parent", path: "parents/1")])
        try routes.setMapping(forRoute: "parent") { (_: Parent) throws -> Parent in throw Refused() }
        let transport = AnsweringTransport(json: #"{"id": 1, "children": []}"#)
        let repository = TestRepository(configuration: try routedConfiguration(routes), transport: transport)
        #expect(await repository.performRequest(Endpoint<Void>.route("parent")).failure == nil)
        #expect(await repository.performRawRequest(.route("parent")).failure == nil)
    }
}

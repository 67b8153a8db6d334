import Foundation
import Networking
import Testing

/// Routes and route tables built in code.
@Suite("Route and RouteTable in code")
struct RouteTableTests {
    @Test("A route keeps what it was given, with the documented defaults")
    func route() throws {
        // When
        let plain = try Route(name: "book", path: "books/:id")
        let full = try Route(
            name: "export", method: .post, path: "exports/{format}", headers: ["X-A": "1"], serialization: .form,
            contentType: "text/csv", requestRootKey: "export", responseKeyPath: "data", requiresSession: false, timeout: 120,
            preventUserInteraction: true)
        // Then
        #expect(plain.name == "book")
        #expect(plain.method == .get)
        #expect(plain.path.variables == ["id"])
        #expect(plain.requiresSession)
        #expect(plain.serialization == nil && plain.timeout == nil && !plain.preventUserInteraction)
        #expect(full.method == .post)
        #expect(full.path.text == "exports/{format}")
        #expect(full.headers["x-a"] == "1")
        #expect(full.serialization == .form)
        #expect(full.contentType == "text/csv")
        #expect(full.requestRootKey == "export")
        #expect(full.responseKeyPath == "data")
        #expect(!full.requiresSession)
        #expect(full.timeout == 120)
        #expect(full.preventUserInteraction)
    }

    @Test("A table finds routes by name and lists the names sorted")
    func table() throws {
        // Given
        var table = try RouteTable([Route(name: "b", path: "b"), Route(name: "a", path: "a")])
        // When
        try table.add(Route(name: "c", method: .delete, path: "c/:id"))
        // Then
        #expect(table.names == ["a", "b", "c"])
        #expect(table["c"]?.method == .delete)
        #expect(table["missing"] == nil)
        #expect(table.routes.count == 3)
        #expect(RouteTable.empty.names.isEmpty)
        #expect(try RouteTable().names.isEmpty)
    }

    @Test("Two routes with the same name are refused, by add, by init and by merge")
    func duplicateNames() throws {
        var table = try RouteTable([Route(name: "book", path: "books/:id")])
        let added = invalidConfigurationReason { () throws(RepositoryError) in
            try table.add(Route(name: "book", method: .put, path: "books/:id"))
        }
        #expect(added == #"two routes are named "book""#)
        #expect(table["book"]?.method == .get)
        let initialized = invalidConfigurationReason { () throws(RepositoryError) in
            _ = try RouteTable([Route(name: "x", path: "a"), Route(name: "x", path: "b")])
        }
        #expect(initialized == #"two routes are named "x""#)
        let merged = invalidConfigurationReason { () throws(RepositoryError) in
            try table.merge(RouteTable([Route(name: "book", path: "other")]))
        }
        #expect(merged == #"two routes are named "book""#)
    }

    @Test("A route changed since it was made into one that cannot be used is refused when added")
    func changedRouteIsCheckedWhenAdded() throws {
        var table = RouteTable.empty
        var route = try Route(name: "report", path: "reports")
        route.retryPolicy = RetryPolicy(maximumAttempts: 0)
        let refused = invalidConfigurationReason { () throws(RepositoryError) in try table.add(route) }
        #expect(refused == #"route "report": retryPolicy: maximumAttempts must be at least 1, not 0"#)
        route.retryPolicy = nil
        route.timeout = -1
        #expect(invalidConfigurationReason { () throws(RepositoryError) in try table.add(route) }.contains("timeout"))
        #expect(table.names.isEmpty)
    }

    @Test("Merging adds the other table's named and object routes")
    func merge() async throws {
        // Given
        var table = try RouteTable([Route(name: "a", path: "a")])
        var other = try RouteTable([Route(name: "b", path: "b")])
        try other.register(Note.self, methods: [.get], path: "notes/:id")
        // When
        try table.merge(other)
        // Then
        #expect(table.names == ["a", "b"])
        let transport = AnsweringTransport(json: #"{"id": 1, "text": "x"}"#)
        let repository = TestRepository(configuration: try routedConfiguration(table), transport: transport)
        let note: Note = try await repository.getObject(Note(id: 1, text: "x")).get()
        #expect(note.id == 1)
    }

    @Test("A route needs a name")
    func emptyName() {
        #expect(invalidConfigurationReason { () throws(RepositoryError) in _ = try Route(name: "", path: "x") } == "a route needs a name")
    }

    @Test("Header fields that cannot be sent are refused in code too")
    func invalidHeaders() {
        let reason = invalidConfigurationReason { () throws(RepositoryError) in
            _ = try Route(name: "r", path: "x", headers: ["Bad Name": "1"])
        }
        #expect(reason == #"route "r": headers: "Bad Name" is not a valid header name"#)
        let contentType = invalidConfigurationReason { () throws(RepositoryError) in
            _ = try Route(name: "r", path: "x", serialization: .raw, contentType: "text/csv\r\nX-Injected: 1")
        }
        #expect(contentType.hasPrefix(#"route "r": contentType: the value of Content-Type contains a line break"#))
    }

    @Test("A timeout that is not a positive number is refused", arguments: [0, -1, Double.nan])
    func invalidTimeout(timeout: Double) {
        let reason = invalidConfigurationReason { () throws(RepositoryError) in _ = try Route(name: "r", path: "x", timeout: timeout) }
        #expect(reason == #"route "r": timeout must be a positive number of seconds, not \#(timeout)"#)
    }

    @Test("A mapping step for a route that does not exist is refused")
    func mappingForUnknownRoute() throws {
        var table = try RouteTable([Route(name: "book", path: "books/:id")])
        let reason = invalidConfigurationReason { () throws(RepositoryError) in
            try table.setMapping(forRoute: "boook") { (note: Note) in note }
        }
        #expect(reason == #"no route is named "boook""#)
    }

    @Test("A method that is not an HTTP token is refused when the route is made", arguments: ["", "GE T", "GET\r\n"])
    func invalidMethod(method: String) {
        let inCode = invalidConfigurationReason { () throws(RepositoryError) in
            _ = try Route(name: "r", method: HTTPMethod(method), path: "x")
        }
        #expect(inCode.hasPrefix(#"route "r": "#))
        let document: JSONValue = ["r": ["path": "x", "method": .string(method)]]
        let json = try? document.encoded()
        let fromFile = invalidConfigurationReason { () throws(RepositoryError) in
            _ = try RouteTable(json: json ?? Data(), source: "routes.json")
        }
        #expect(fromFile.hasPrefix(#"routes.json: route "r": "#))
        #expect(fromFile.contains("method"))
    }
}

/// A small model for object routes.
struct Note: Codable, Sendable, Hashable {
    var id: Int
    var text: String
}

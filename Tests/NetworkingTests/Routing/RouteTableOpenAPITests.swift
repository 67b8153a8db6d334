import Foundation
import Networking
import Testing

/// OpenAPI 3 and Swagger 2 documents written inline: names, serializations, sessions, base
/// paths and refusals. The test API's own documents are loaded and called in
/// `RoutesIntegrationTests`.
@Suite("RouteTable from OpenAPI")
struct RouteTableOpenAPITests {
    private func load(_ json: String, includingBasePath: Bool = false) throws -> RouteTable {
        try RouteTable(openAPI: Data(json.utf8), includingBasePath: includingBasePath)
    }

    private func refusal(_ json: String, source: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        invalidConfigurationReason(sourceLocation: sourceLocation) { () throws(RepositoryError) in
            if let source {
                _ = try RouteTable(openAPI: Data(json.utf8), source: source)
            } else {
                _ = try RouteTable(openAPI: Data(json.utf8))
            }
        }
    }

    static let openAPI3 = #"""
        {
          "openapi": "3.1.0",
          "servers": [{"url": "https://api.example.com/v2/"}],
          "security": [{"key": []}],
          "paths": {
            "/items": {
              "get": {"operationId": "listItems"},
              "post": {"requestBody": {"content": {"application/x-www-form-urlencoded": {}}}}
            },
            "/items/{itemID}": {
              "parameters": [{"name": "itemID", "in": "path"}],
              "put": {"operationId": "replaceItem", "requestBody": {"content": {"application/merge-patch+json": {}}}},
              "delete": {"operationId": "deleteItem", "security": []}
            },
            "/status": {"head": {"operationId": "status", "security": []}, "options": {}}
          }
        }
        """#

    @Test("OpenAPI 3: names, methods, templates, serializations and sessions")
    func openAPI3Document() throws {
        // When
        let table = try load(Self.openAPI3)
        // Then
        #expect(table.names == ["OPTIONS /status", "POST /items", "deleteItem", "listItems", "replaceItem", "status"])
        let list = try #require(table["listItems"])
        #expect(list.method == .get)
        #expect(list.path.text == "items")
        #expect(list.serialization == nil)
        #expect(list.requiresSession)
        let create = try #require(table["POST /items"])
        #expect(create.method == .post)
        #expect(create.serialization == .form)
        let replace = try #require(table["replaceItem"])
        #expect(replace.method == .put)
        #expect(replace.path.text == "items/{itemID}")
        #expect(replace.path.variables == ["itemID"])
        #expect(replace.serialization == .json)
        #expect(table["deleteItem"]?.requiresSession == false)
        // Without a body, a DELETE's parameters go in the query even where the configuration
        // would send a DELETE's as JSON.
        #expect(table["deleteItem"]?.serialization == .query)
        #expect(table["listItems"]?.serialization == nil)
        #expect(table["status"]?.method == .head)
        #expect(table["OPTIONS /status"]?.method == .options)
    }

    @Test("With includingBasePath, paths start with the first server's path (absolute or relative URL)")
    func openAPI3BasePath() throws {
        let absolute = try load(Self.openAPI3, includingBasePath: true)
        #expect(absolute["listItems"]?.path.text == "/v2/items")
        let relative = try load(
            #"{"openapi": "3.0.3", "servers": [{"url": "/api/v1"}], "paths": {"/books/{id}": {"get": {"operationId": "getBook"}}}}"#,
            includingBasePath: true)
        #expect(relative["getBook"]?.path.text == "/api/v1/books/{id}")
        let rootServer = try load(
            #"{"openapi": "3.0.3", "servers": [{"url": "https://api.example.com"}], "paths": {"/a": {"get": {}}}}"#,
            includingBasePath: true)
        #expect(rootServer["GET /a"]?.path.text == "a")
        let schemeRelative = try load(
            #"{"openapi": "3.0.3", "servers": [{"url": "//api.example.com/v1"}], "paths": {"/a": {"get": {}}}}"#,
            includingBasePath: true)
        #expect(schemeRelative["GET /a"]?.path.text == "/v1/a")
    }

    @Test("A body media type with parameters (charset) decides the serialization as without them")
    func mediaTypeParameters() throws {
        let table = try load(
            #"""
            {"openapi": "3.0.3", "paths": {
              "/form": {"post": {"operationId": "form", "requestBody": {"content": {"application/x-www-form-urlencoded; charset=UTF-8": {}}}}},
              "/parts": {"post": {"operationId": "parts", "requestBody": {"content": {" Multipart/Form-Data ; boundary=x": {}}}}}}}
            """#)
        #expect(table["form"]?.serialization == .form)
        #expect(table["parts"]?.serialization == .multipart)
    }

    static let swagger2 = #"""
        {
          "swagger": "2.0",
          "basePath": "/api/v1",
          "consumes": ["application/json"],
          "paths": {
            "/books": {
              "get": {"operationId": "listBooks", "parameters": [{"name": "page", "in": "query"}], "security": [{"bearer": []}]},
              "post": {"operationId": "createBook", "parameters": [{"name": "body", "in": "body"}]}
            },
            "/login": {
              "post": {"operationId": "login", "consumes": ["application/x-www-form-urlencoded"],
                       "parameters": [{"name": "email", "in": "formData"}]}
            },
            "/tokens": {"post": {"operationId": "token", "parameters": [{"name": "grant", "in": "formData"}], "consumes": []}}
          }
        }
        """#

    @Test("Swagger 2: body and form parameters choose the serialization; security says whether a session is needed")
    func swagger2Document() throws {
        let table = try load(Self.swagger2)
        #expect(table.names == ["createBook", "listBooks", "login", "token"])
        #expect(table["listBooks"]?.serialization == nil)
        #expect(table["listBooks"]?.requiresSession == true)
        #expect(table["createBook"]?.serialization == .json)
        #expect(table["createBook"]?.requiresSession == false)
        #expect(table["login"]?.serialization == .form)
        #expect(table["token"]?.serialization == .form)
        #expect(try load(Self.swagger2, includingBasePath: true)["listBooks"]?.path.text == "/api/v1/books")
    }

    @Test("A document-wide security requirement applies to operations that say nothing")
    func globalSecurity() throws {
        let table = try load(
            #"{"swagger": "2.0", "security": [{"k": []}], "paths": {"/a": {"get": {"operationId": "a"}, "post": {"operationId": "b", "security": []}}}}"#
        )
        #expect(table["a"]?.requiresSession == true)
        #expect(table["b"]?.requiresSession == false)
    }

    @Test("An empty security requirement ({}) means no session is needed")
    func emptySecurityRequirement() throws {
        let table = try load(
            #"{"openapi": "3.0.0", "security": [{"bearer": []}], "paths": {"/a": {"get": {"operationId": "a", "security": [{}]}}}}"#)
        #expect(table["a"]?.requiresSession == false)
    }

    @Test("A server URL with variables contributes only its path to includingBasePath")
    func serverVariables() throws {
        let json = #"""
            {"openapi": "3.0.0", "servers": [{"url": "https://{region}.api.example.com/v1", "variables": {"region": {"default": "eu"}}}],
             "paths": {"/items": {"get": {"operationId": "items"}}}}
            """#
        let table = try load(json, includingBasePath: true)
        #expect(table["items"]?.path.text == "/v1/items")
        #expect(table["items"]?.path.variables == [])
    }

    @Test("Server variables take their defaults in one pass: a default naming another variable stays as it is", .timeLimit(.minutes(1)))
    func serverVariablesInOnePass() throws {
        let names = (0..<30).map { "v\($0)" }
        let everyOther = names.map { "{\($0)}" }.joined()
        let variables = names.map { #""\#($0)": {"default": "\#(everyOther)"}"# }.joined(separator: ",")
        let crafted =
            #"{"openapi": "3.0.0", "servers": [{"url": "/\#(everyOther)", "variables": {\#(variables)}}], "paths": {"/a": {"get": {}}}}"#
        // Each default holds 30 placeholders: substituted again and again, they doubled each time.
        let refusal = try #require(throws: RepositoryError.self) { try load(crafted, includingBasePath: true) }
        #expect("\(refusal)".contains("longer than 2048 bytes"))
        let chained = #"""
            {"openapi": "3.0.0", "servers": [{"url": "/{a}/{b}", "variables": {"a": {"default": "{b}"}, "b": {"default": "v2"}}}],
             "paths": {"/items": {"get": {"operationId": "items"}}}}
            """#
        #expect(try load(chained, includingBasePath: true)["items"]?.path.text == "/{b}/v2/items")
    }

    @Test("A default repeated in many placeholders is refused as it grows: the long server URL is never built")
    func repeatedServerDefault() {
        let placeholders = String(repeating: "{}", count: 1_000)
        let long = String(repeating: "x", count: 1_000_000)
        let crafted =
            #"{"openapi": "3.0.0", "servers": [{"url": "/\#(placeholders)", "variables": {"": {"default": "\#(long)"}}}], "paths": {"/a": {"get": {}}}}"#
        // 1,000 copies of a 1 MB default (a gigabyte) were built before the length was checked.
        let reason = invalidConfigurationReason { () throws(RepositoryError) in
            _ = try RouteTable(openAPI: Data(crafted.utf8), includingBasePath: true)
        }
        #expect(reason.contains("longer than 2048 bytes"))
    }

    @Test("A document whose path items share one $ref is held to a number of operations: it cannot make millions of routes")
    func operationCountIsBounded() async throws {
        let item = #"{"get": {}, "put": {}, "post": {}, "delete": {}, "options": {}, "head": {}, "patch": {}, "trace": {}}"#
        func document(paths: Int) -> String {
            let entries = (0..<paths).map { ##""/p\##($0)": {"$ref": "#/components/pathItems/all"}"## }.joined(separator: ",")
            return #"{"openapi": "3.1.0", "components": {"pathItems": {"all": \#(item)}}, "paths": {\#(entries)}}"#
        }
        #expect(try load(document(paths: 2)).names.count == 16)
        let large = document(paths: 12_501)
        let refused = await onPlainThread { () -> String? in
            do {
                _ = try RouteTable(openAPI: Data(large.utf8))
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(refused?.contains("more than 100000 operations") == true, "\(String(describing: refused))")
    }

    @Test("Operations sharing one large list are held to a total of what they look at: a small document cannot cost hours")
    func sharedListsAreBounded() async throws {
        // 1,001 operations each looking at the document's 1,000 security requirements.
        let requirements = (0..<1_000).map { #"{"k\#($0)": []}"# }.joined(separator: ",")
        let paths = (0...1_000).map { #""/p\#($0)": {"get": {}}"# }.joined(separator: ",")
        let crafted = #"{"openapi": "3.0.0", "security": [\#(requirements)], "paths": {\#(paths)}}"#
        let reason = await onPlainThread { refusal(crafted) }
        #expect(reason.contains("more than 1000000 parameters, media types and security requirements in all"), "\(reason)")
        #expect(try load(#"{"openapi": "3.0.0", "security": [\#(requirements)], "paths": {"/a": {"get": {}}}}"#)["GET /a"] != nil)
    }

    @Test("A path item in another file, or a path with a dot segment, is refused; a server URL's query is no part of its path")
    func refusedPathsAndServerQuery() throws {
        let external = #"{"openapi": "3.0.0", "paths": {"/pets": {"$ref": "pets.json#/Pets"}}}"#
        #expect(
            refusal(external)
                == #"OpenAPI document: the path /pets is given by the reference "pets.json#/Pets", which is not in the document: bundle the document's files into one"#
        )
        #expect(refusal("openapi: 3.0.0\npaths: {}\n") == "OpenAPI document is YAML, not JSON: convert it to JSON first")
        #expect(refusal("\u{FEFF}openapi: 3.0.0\npaths: {}\n") == "OpenAPI document is YAML, not JSON: convert it to JSON first")
        let climbing = #"{"openapi": "3.0.0", "paths": {"/../admin": {"get": {}}}}"#
        #expect(refusal(climbing).contains(#"has a ".." segment"#))
        let dangling = ##"{"openapi": "3.0.0", "paths": {"/pets": {"$ref": "#/nowhere"}}}"##
        #expect(refusal(dangling).hasSuffix("which points to nothing in the document, or to itself"))
        // A server URL of "." is the folder itself; without a path, a query's "/" is no path.
        let dot = #"{"openapi": "3.0.0", "servers": [{"url": "./api"}], "paths": {"/pets": {"get": {"operationId": "pets"}}}}"#
        #expect(try load(dot, includingBasePath: true)["pets"]?.path.text == "/api/pets")
        let noPath =
            #"{"openapi": "3.0.0", "servers": [{"url": "https://h.example?next=/v1"}], "paths": {"/pets": {"get": {"operationId": "pets"}}}}"#
        #expect(try load(noPath, includingBasePath: true)["pets"]?.path.text == "pets")
        let up = #"{"swagger": "2.0", "basePath": "/v1/..", "paths": {"/pets": {"get": {}}}}"#
        #expect(
            invalidConfigurationReason { () throws(RepositoryError) in _ = try RouteTable(openAPI: Data(up.utf8), includingBasePath: true) }
                == #"OpenAPI document: basePath "/v1/.." has a ".." segment: give the path it stands for"#)
        let query =
            #"{"openapi": "3.0.0", "servers": [{"url": "https://h.example/v1?key=1#top"}], "paths": {"/pets/{id}": {"get": {"operationId": "pet"}}}}"#
        #expect(try load(query, includingBasePath: true)["pet"]?.path.text == "/v1/pets/{id}")
    }

    @Test("An empty operationId names the route by its method and path; one that is not a string is refused, naming the operation")
    func oddOperationIDs() throws {
        let empty = #"{"openapi": "3.0.0", "paths": {"/a": {"get": {"operationId": ""}}}}"#
        #expect(try load(empty).names == ["GET /a"])
        let number = #"{"openapi": "3.0.0", "paths": {"/a": {"get": {"operationId": 42}}}}"#
        #expect(refusal(number).contains("the operationId of GET /a is a number, not a string"))
    }

    @Test("Swagger 2 form parameters go as a form (multipart with a file), whatever JSON media type consumes also lists")
    func swaggerFormParametersBesideJSON() throws {
        let json = #"""
            {"swagger": "2.0", "consumes": ["application/json"], "paths": {
              "/notes": {"post": {"operationId": "note", "parameters": [{"in": "formData", "name": "text", "type": "string"}]}},
              "/photos": {"post": {"operationId": "photo", "consumes": ["application/json", "multipart/form-data"],
                "parameters": [{"in": "formData", "name": "caption", "type": "string"}]}},
              "/scans": {"post": {"operationId": "scan", "parameters": [{"in": "formData", "name": "page", "type": "file"}]}}}}
            """#
        let table = try load(json)
        #expect(table["note"]?.serialization == .form)
        #expect(table["photo"]?.serialization == .multipart)
        #expect(table["scan"]?.serialization == .multipart)
    }

    @Test("Path parameter names OpenAPI allows but placeholders do not (such as hyphens) still load")
    func hyphenatedParameter() throws {
        let table = try load(#"{"openapi": "3.0.0", "paths": {"/users/{user-id}/posts/{post.id}": {"get": {"operationId": "post"}}}}"#)
        #expect(table["post"]?.path.text == "users/{user-id}/posts/{post.id}")
    }

    @Test("A dotted OpenAPI parameter such as {post.id} is filled from its own key, not as a nested path")
    func dottedParameterCall() async throws {
        // Given: a route loaded from OpenAPI whose path parameter's name holds a dot
        let table = try load(#"{"openapi": "3.0.0", "paths": {"/users/{user-id}/posts/{post.id}": {"get": {"operationId": "post"}}}}"#)
        let transport = AnsweringTransport()
        let repository = TestRepository(configuration: try routedConfiguration(table), transport: transport)
        // When: it is called with the names as the document spells them
        try await repository.performRequest(Endpoint<Void>.route("post", pathVariables: ["user-id": 3, "post.id": 5])).get()
        // And: with nested values, as for a `:meeting.id` placeholder
        try await repository.performRequest(Endpoint<Void>.route("post", pathVariables: ["user-id": 3, "post": ["id": 6]])).get()
        // Then
        #expect(transport.requests.map(\.pathAfterBase) == ["users/3/posts/5", "users/3/posts/6"])
    }

    @Test("A file is read from disk; one that cannot be read is refused, naming it")
    func file() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("api.json")
        try Data(Self.swagger2.utf8).write(to: file)
        #expect(try RouteTable(openAPIContentsOf: file).names.count == 4)
        let missing = folder.url.appendingPathComponent("missing.json")
        let reason = invalidConfigurationReason { () throws(RepositoryError) in _ = try RouteTable(openAPIContentsOf: missing) }
        #expect(reason.hasPrefix("the OpenAPI document \(missing.path) cannot be read: "))
        let broken = folder.url.appendingPathComponent("broken.json")
        try Data(#"{"openapi": "3.0.0" "paths": {}}"#.utf8).write(to: broken)
        let brokenReason = invalidConfigurationReason { () throws(RepositoryError) in _ = try RouteTable(openAPIContentsOf: broken) }
        #expect(brokenReason == #"broken.json is not valid JSON: expected "," or "}" after the value of "openapi" at line 1, column 21"#)
    }

    // MARK: - Refusals

    @Test(
        "A document that is neither OpenAPI 3 nor Swagger 2 is refused",
        arguments: [#"{"paths": {}}"#, #"{"openapi": "2.0", "paths": {}}"#, #"{"swagger": "1.2", "paths": {}}"#, #"{"openapi": 3}"#, "[]"])
    func notOpenAPI(json: String) {
        #expect(
            refusal(json) == #"OpenAPI document is neither OpenAPI 3 ("openapi": "3.x") nor Swagger 2 ("swagger": "2.0")"#)
    }

    @Test("A document without a paths object is refused", arguments: [#"{"openapi": "3.0.0"}"#, #"{"swagger": "2.0", "paths": []}"#])
    func noPaths(json: String) {
        #expect(refusal(json) == #"OpenAPI document has no "paths" object"#)
    }

    @Test("Malformed JSON is refused with its line and column, naming the source")
    func malformed() {
        let json = "{\n  \"openapi\": \"3.0.0\",\n  \"paths\": {\"/a\": {\"get\": {}},}\n}"
        #expect(refusal(json, source: "api.json") == "api.json is not valid JSON: expected a key in quotes at line 3, column 31")
        #expect(
            refusal(#"{"openapi": "3.0.0", "paths": {"/a": {"get": {}, "get": {}}}}"#).hasSuffix(
                #"the key "get" appears twice in the same object at line 1, column 50"#))
    }

    @Test("Two operations with the same operationId are refused, naming both")
    func duplicateOperationID() {
        let json = #"{"openapi": "3.0.0", "paths": {"/a": {"get": {"operationId": "same"}}, "/b": {"post": {"operationId": "same"}}}}"#
        #expect(refusal(json) == #"OpenAPI document: the operations GET /a and POST /b are both named "same""#)
        #expect(refusal(json, source: "petstore.json") == #"petstore.json: the operations GET /a and POST /b are both named "same""#)
    }

    @Test("An operation with a multipart or raw body loads with that serialization")
    func uploadOperations() throws {
        let json = #"""
            {"openapi": "3.0.0", "paths": {"/upload": {"post": {"operationId": "upload",
              "requestBody": {"content": {"multipart/form-data": {}}}}},
              "/blob": {"put": {"operationId": "blob", "requestBody": {"content": {"application/octet-stream": {}}}}}}}
            """#
        let routes = try RouteTable(openAPI: Data(json.utf8))
        #expect(routes["upload"]?.serialization == .multipart)
        #expect(routes["blob"]?.serialization == .raw)
    }

    @Test(
        "A colon in an OpenAPI path is text (Google-style custom methods); a body-less POST sends its parameters in the query; a body by $ref is JSON"
    )
    func colonsBodilessAndReferences() throws {
        let json = #"""
            {"openapi": "3.0.0", "paths": {
              "/v1/{name}:cancel": {"post": {"operationId": "cancel"}},
              "/items/{id}/archive": {"post": {"operationId": "archive", "parameters": [{"name": "force", "in": "query"}]}},
              "/items": {"post": {"operationId": "create", "requestBody": {"$ref": "#/components/requestBodies/Item"}}},
              "/odd/{a:b}": {"get": {"operationId": "odd"}}}}
            """#
        let routes = try RouteTable(openAPI: Data(json.utf8))
        let cancel = try #require(routes["cancel"])
        #expect(cancel.path.variables == ["name"])
        #expect(routes["odd"]?.path.variables == ["a:b"], "a colon inside braces is part of the name")
        #expect(routes["archive"]?.serialization == .query)
        #expect(routes["create"]?.serialization == .json)
    }

    @Test("Swagger 2: a body parameter declared on the path item applies to its operations")
    func pathItemParameters() throws {
        let json = #"""
            {"swagger": "2.0", "paths": {"/notes": {"parameters": [{"name": "note", "in": "body"}], "post": {"operationId": "add"}}}}
            """#
        #expect(try RouteTable(openAPI: Data(json.utf8))["add"]?.serialization == .json)
    }

    @Test("References into the document are followed: request bodies, parameters and path items (RFC 6901 escapes, chains, cycles)")
    func localReferences() throws {
        let openAPI = #"""
            {"openapi": "3.1.0", "paths": {
              "/uploads": {"post": {"operationId": "upload", "requestBody": {"$ref": "#/components/requestBodies/File"}}},
              "/forms": {"post": {"operationId": "form", "requestBody": {"$ref": "#/components/requestBodies/Chained"}}},
              "/a~b/c": {"$ref": "#/components/pathItems/a~0b~1c"},
              "/loop": {"post": {"operationId": "loop", "requestBody": {"$ref": "#/components/requestBodies/Loop"}}},
              "/elsewhere": {"post": {"operationId": "elsewhere", "requestBody": {"$ref": "bodies.json#/Item"}}},
              "/missing": {"post": {"operationId": "missing", "requestBody": {"$ref": "#/components/requestBodies/Nothing"}}}},
             "components": {
              "requestBodies": {
                "File": {"content": {"multipart/form-data": {}}},
                "Chained": {"$ref": "#/components/requestBodies/Form"},
                "Form": {"content": {"application/x-www-form-urlencoded": {}}},
                "Loop": {"$ref": "#/components/requestBodies/Loop"}},
              "pathItems": {"a~b/c": {"put": {"operationId": "blob", "requestBody": {"content": {"application/octet-stream": {}}}}}}}}
            """#
        let routes = try RouteTable(openAPI: Data(openAPI.utf8))
        #expect(routes["upload"]?.serialization == .multipart)
        #expect(routes["form"]?.serialization == .form)
        #expect(routes["blob"]?.serialization == .raw)
        #expect(routes["blob"]?.method == .put)
        // A cycle, another file, or nothing at the pointer: JSON, as before.
        #expect(routes["loop"]?.serialization == .json)
        #expect(routes["elsewhere"]?.serialization == .json)
        #expect(routes["missing"]?.serialization == .json)

        let swagger = #"""
            {"swagger": "2.0", "paths": {
              "/notes": {"post": {"operationId": "add", "parameters": [{"$ref": "#/parameters/Note"}]}},
              "/files": {"post": {"operationId": "attach", "consumes": ["multipart/form-data"],
                "parameters": [{"$ref": "#/parameters/File"}]}},
              "/search": {"post": {"operationId": "search", "parameters": [{"$ref": "#/parameters/Query"}]}}},
             "parameters": {
              "Note": {"name": "note", "in": "body"},
              "File": {"name": "file", "in": "formData", "type": "file"},
              "Query": {"name": "q", "in": "query"}}}
            """#
        let swaggerRoutes = try RouteTable(openAPI: Data(swagger.utf8))
        #expect(swaggerRoutes["add"]?.serialization == .json)
        #expect(swaggerRoutes["attach"]?.serialization == .multipart)
        #expect(swaggerRoutes["search"]?.serialization == .query)
    }

    @Test(
        "Thousands of path items pointing through a chain of deep references load at once: each reference is followed once",
        .timeLimit(.minutes(1)))
    func deepReferenceChains() throws {
        // 30 references, each 250 levels deep, the last to a path item with one operation, and
        // 2,000 path items pointing to the first (31 hops: within the 32 a chain may take).
        let depth = 250
        let deep = Array(repeating: "a", count: depth - 1).joined(separator: "/")
        var definitions: [String] = []
        for link in 0..<31 {
            let innermost = link == 30 ? #"{"get": {}}"# : ##"{"$ref": "#/x\##(link + 1)/\##(deep)"}"##
            definitions.append(
                #""x\#(link)": "# + String(repeating: #"{"a": "#, count: depth - 1) + innermost + String(repeating: "}", count: depth - 1))
        }
        let items = (0..<2_000).map { ##""/p\##($0)": {"$ref": "#/x0/\##(deep)"}"## }
        let json =
            #"{"openapi": "3.0.0", "#
            + definitions.joined(separator: ", ") + #", "paths": {"# + items.joined(separator: ", ") + "}}"
        let table = try RouteTable(openAPI: Data(json.utf8))
        #expect(table.names.count == 2_000)
        #expect(table["GET /p1999"]?.path.text == "p1999")
    }
}

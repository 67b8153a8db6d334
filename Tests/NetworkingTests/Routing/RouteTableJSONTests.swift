import Foundation
import Networking
import Testing

/// Route files in WebApiClient's shape: what loads, and every refusal with its message naming
/// the file, the route and the key.
@Suite("RouteTable from JSON")
struct RouteTableJSONTests {
    private func load(_ json: String, source: String = "routes.json", keyPath: String? = nil) throws -> RouteTable {
        try RouteTable(json: Data(json.utf8), source: source, keyPath: keyPath)
    }

    // MARK: - Loading

    @Test("Every supported key is read into the route")
    func everyKey() throws {
        // Given
        let json = #"""
            {
              "book": {
                "name": "book", "method": "put", "path": "books/:id\\.json", "headers": {"X-Route": "1", "Accept": "text/csv"},
                "serialization": "form", "contentType": "application/vnd.books+json", "requestRootKey": "book",
                "responseKeyPath": "data.book", "requiresSession": false, "timeout": 2.5, "preventUserInteraction": true,
                "idleTimeout": 5
              },
              "download": { "path": "archive", "timeout": false, "idleTimeout": false },
              "minimal": { "path": "health" }
            }
            """#
        // When
        let table = try load(json)
        // Then
        #expect(table.names == ["book", "download", "minimal"])
        let book = try #require(table["book"])
        #expect(book.name == "book")
        #expect(book.method == .put)
        #expect(book.path.text == "books/:id\\.json")
        #expect(book.path.variables == ["id"])
        #expect(book.headers["X-Route"] == "1")
        #expect(book.headers["accept"] == "text/csv")
        #expect(book.serialization == .form)
        #expect(book.contentType == "application/vnd.books+json")
        #expect(book.requestRootKey == "book")
        #expect(book.responseKeyPath == "data.book")
        #expect(book.requiresSession == false)
        #expect(book.timeout == 2.5)
        #expect(book.idleTimeout == 5)
        // `false` is no limit: JSON has no infinity.
        #expect(table["download"]?.timeout == .infinity)
        #expect(table["download"]?.idleTimeout == .infinity)
        #expect(book.preventUserInteraction)
        // Defaults of a route that says only its path.
        let minimal = try #require(table["minimal"])
        #expect(minimal.method == .get)
        #expect(minimal.headers.isEmpty)
        #expect(minimal.serialization == nil)
        #expect(minimal.contentType == nil)
        #expect(minimal.requestRootKey == nil)
        #expect(minimal.responseKeyPath == nil)
        #expect(minimal.requiresSession)
        #expect(minimal.timeout == nil)
        #expect(minimal.idleTimeout == nil)
        #expect(!minimal.preventUserInteraction)
        #expect(!minimal.gzip && !minimal.saveAsResource && !minimal.offline && !minimal.cacheIgnoreQueryParameters)
        #expect(minimal.cacheTTL == nil)
        #expect(minimal.invalidatesCachedRouteNames.isEmpty)
        #expect(minimal.retryPolicy == nil)
    }

    @Test("A route's retry key: false is .never, an object sets RetryPolicy's properties and leaves the rest at their defaults")
    func retryKey() throws {
        let table = try load(
            #"""
            {
              "never": { "path": "a", "retry": false },
              "defaults": { "path": "b", "retry": {} },
              "patient": {
                "method": "POST", "path": "c",
                "retry": {
                  "maximumAttempts": 5, "retryableMethods": ["POST", "GET"], "retryableStatusCodes": [503],
                  "retriesConnectionLost": false, "retriesTimeouts": false, "retriesConnectionFailures": true,
                  "baseDelay": 1, "maximumDelay": 8.5, "maximumRetryAfter": 120
                }
              }
            }
            """#)
        #expect(table["never"]?.retryPolicy?.maximumAttempts == 1)
        let defaults = try #require(table["defaults"]?.retryPolicy)
        #expect(defaults.maximumAttempts == 3 && defaults.retryableStatusCodes == RetryPolicy.default.retryableStatusCodes)
        #expect(defaults.retryableMethods == RetryPolicy.default.retryableMethods && defaults.baseDelay == 0.5)
        let patient = try #require(table["patient"]?.retryPolicy)
        #expect(patient.maximumAttempts == 5)
        #expect(patient.retryableMethods == [.post, .get])
        #expect(patient.retryableStatusCodes == [503])
        #expect(!patient.retriesConnectionLost && !patient.retriesTimeouts && patient.retriesConnectionFailures)
        #expect(patient.baseDelay == 1 && patient.maximumDelay == 8.5 && patient.maximumRetryAfter == 120)
    }

    @Test("A whole number written with a fraction part (3.0) loads as that number; 3.5 is refused, saying so")
    func wholeNumbersWrittenAsDecimals() throws {
        let table = try load(
            #"{"a": {"path": "a", "serialization": 2.0, "retry": {"maximumAttempts": 3.0, "retryableStatusCodes": [503.0]}}}"#)
        #expect(table["a"]?.serialization == .multipart)
        #expect(table["a"]?.retryPolicy?.maximumAttempts == 3)
        #expect(table["a"]?.retryPolicy?.retryableStatusCodes == [503])
        let fraction = invalidConfigurationReason { () throws(RepositoryError) in
            _ = try RouteTable(json: Data(#"{"a": {"path": "a", "retry": {"maximumAttempts": 3.5}}}"#.utf8))
        }
        #expect(fraction.contains("must be a whole number, not 3.5"))
        let serialization = invalidConfigurationReason { () throws(RepositoryError) in
            _ = try RouteTable(json: Data(#"{"a": {"path": "a", "serialization": 1.5}}"#.utf8))
        }
        #expect(serialization.contains("is 1.5; WebApiClient's numbers are 0 to 3"))
    }

    @Test("WebApiClient's key names are read like ours")
    func webApiClientNames() throws {
        let table = try load(
            #"""
            {
              "legacy": {
                "path": "x", "requestHeaders": {"X-A": "b"}, "dataMapperRequestRootKeyPath": "a.b",
                "dataMapperResponseRootKeyPath": "data.items", "timeout": 3
              }
            }
            """#)
        let route = try #require(table["legacy"])
        #expect(route.headers["X-A"] == "b")
        #expect(route.requestRootKey == "a.b")
        #expect(route.responseKeyPath == "data.items")
        #expect(route.timeout == 3)
    }

    @Test(
        "Serializations by name, by WebApiClient's number and by WebApiClient's name",
        arguments: [
            (#""serialization": "json""#, RouteSerialization.json), (#""serialization": "query""#, .query),
            (#""serialization": "url""#, .url), (#""serialization": "form""#, .form), (#""serialization": 0"#, .json),
            (#""serialization": 1"#, .url), (#""serializationName": "json""#, .json), (#""serializationName": "JSON""#, .json),
            (#""serializationName": "url""#, .url),
        ])
    func serializations(key: String, expected: RouteSerialization) throws {
        let table = try load(#"{"r": {"path": "x", "# + key + "}}")
        #expect(table["r"]?.serialization == expected)
    }

    @Test("WebApiClient's JSON (0, \"json\") sends a DELETE's parameters in the query, as AFNetworking did; this library's \"json\" a body")
    func webApiClientJSONOnDelete() throws {
        let table = try load(
            #"""
            {"a": {"path": "x", "method": "DELETE", "serialization": 0}, "b": {"path": "x", "method": "DELETE", "serializationName": "json"},
             "c": {"path": "x", "method": "DELETE", "serialization": "json"}, "d": {"path": "x", "method": "POST", "serialization": 0}}
            """#)
        #expect(table["a"]?.serialization == .query)
        #expect(table["b"]?.serialization == .query)
        #expect(table["c"]?.serialization == .json)
        #expect(table["d"]?.serialization == .json)
    }

    @Test("Options of later features set to their defaults load")
    func laterOptionsOff() throws {
        let table = try load(
            #"""
            {"r": {"path": "x", "gzip": false, "saveAsResource": false, "cacheIgnoreQueryParameters": false,
                   "offline": false, "invalidatesCachedRouteNames": []}}
            """#)
        #expect(table.names == ["r"])
    }

    @Test("Routes nested in a larger file are read at a key path (WebApiClient's webservice.api)")
    func keyPath() throws {
        let json = #"""
            {"webservice": {"baseURL": "https://api.example.com", "api": {"book": {"path": "books/:id"}}}, "other": 1}
            """#
        let table = try load(json, keyPath: "webservice.api")
        #expect(table.names == ["book"])
    }

    @Test("A file is read from disk and errors name the file")
    func file() throws {
        // Given
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let good = folder.url.appendingPathComponent("api.json")
        try Data(#"{"app": {"routes": {"book": {"path": "books/:id"}}}}"#.utf8).write(to: good)
        let bad = folder.url.appendingPathComponent("broken.json")
        try Data("{\n  \"book\": {\"path\": \"a\"}\n  \"books\": {}\n}".utf8).write(to: bad)
        // When
        let table = try RouteTable(contentsOf: good, keyPath: "app.routes")
        let reason = invalidConfigurationReason { () throws(RepositoryError) in _ = try RouteTable(contentsOf: bad) }
        // Then
        #expect(table["book"]?.path.text == "books/:id")
        #expect(reason == #"broken.json is not valid JSON: expected "," or "}" after the value of "book" at line 3, column 3"#)
    }

    @Test("A file that cannot be read is refused, naming its path")
    func unreadableFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let missing = folder.url.appendingPathComponent("missing.json")
        let reason = invalidConfigurationReason { () throws(RepositoryError) in _ = try RouteTable(contentsOf: missing) }
        #expect(reason.hasPrefix("the route file \(missing.path) cannot be read: "))
        // A folder is not a file either.
        let folderReason = invalidConfigurationReason { () throws(RepositoryError) in _ = try RouteTable(contentsOf: folder.url) }
        #expect(folderReason.hasPrefix("the route file \(folder.url.path) cannot be read"))
        // Something endless, or that may never answer, is not read; nor is a huge file.
        let endless = invalidConfigurationReason { () throws(RepositoryError) in
            _ = try RouteTable(contentsOf: URL(fileURLWithPath: "/dev/zero"))
        }
        #expect(endless == "the route file /dev/zero cannot be read: it is not a plain file (a folder, a pipe or a device)")
        let fifo = folder.url.appendingPathComponent("routes.fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let pipe = invalidConfigurationReason { () throws(RepositoryError) in _ = try RouteTable(openAPIContentsOf: fifo) }
        #expect(pipe.hasSuffix("cannot be read: it is not a plain file (a folder, a pipe or a device)"))
        // A URL that is not a file's is not read as the path it happens to have.
        let web = try #require(URL(string: "https://example.com\(folder.url.path)/routes.json"))
        let remote = invalidConfigurationReason { () throws(RepositoryError) in _ = try RouteTable(contentsOf: web) }
        #expect(remote.hasSuffix("cannot be read: it is not a file URL"), "\(remote)")
        let huge = folder.url.appendingPathComponent("huge.json")
        #expect(FileManager.default.createFile(atPath: huge.path, contents: nil))
        #expect(truncate(huge.path, 64 * 1024 * 1024 + 1) == 0)
        let large = invalidConfigurationReason { () throws(RepositoryError) in _ = try RouteTable(openAPIContentsOf: huge) }
        #expect(large == "the OpenAPI document \(huge.path) is larger than 67108864 bytes")
    }

    // MARK: - Refusals naming the route and the key

    @Test("An unknown key is refused, listing the known keys")
    func unknownKey() {
        let reason = routeFileRefusal(#"{"book": {"path": "books", "methd": "GET"}}"#)
        #expect(
            reason
                == #"routes.json: route "book": the key "methd" is not a route key (known keys: cacheIgnoreQueryParameters, cacheTTL, contentType, dataMapperRequestRootKeyPath, dataMapperResponseRootKeyPath, gzip, headers, idleTimeout, invalidatesCachedRouteNames, method, name, offline, path, preventUserInteraction, requestHeaders, requestRootKey, requiresSession, responseKeyPath, retry, saveAsResource, serialization, serializationName, timeout)"#
        )
    }

    @Test("WebApiClient's dataMapper is refused, pointing to a mapping step")
    func dataMapper() {
        let reason = routeFileRefusal(#"{"books": {"path": "books", "dataMapper": "WABookMapper"}}"#)
        #expect(
            reason
                == #"routes.json: route "books": the key "dataMapper" names an Objective-C data mapper class; give the route a mapping step in code with RouteTable.setMapping(forRoute:_:)"#
        )
    }

    @Test(
        "A value of the wrong type is refused, naming the route, the key and what it found",
        arguments: [
            // strings
            (#""method": 1"#, #"the key "method" must be a string, not a number"#),
            (#""method": "GET", "path": true"#, #"the key "path" must be a string, not a boolean"#),
            (#""name": ["r"]"#, #"the key "name" must be a string, not an array"#),
            (#""contentType": {}"#, #"the key "contentType" must be a string, not an object"#),
            (#""requestRootKey": 1"#, #"the key "requestRootKey" must be a string, not a number"#),
            (#""dataMapperRequestRootKeyPath": null"#, #"the key "dataMapperRequestRootKeyPath" must be a string, not null"#),
            (#""responseKeyPath": false"#, #"the key "responseKeyPath" must be a string, not a boolean"#),
            (#""dataMapperResponseRootKeyPath": 2.5"#, #"the key "dataMapperResponseRootKeyPath" must be a string, not a number"#),
            (#""serializationName": 0"#, #"the key "serializationName" must be a string, not a number"#),
            // booleans
            (#""requiresSession": "no""#, #"the key "requiresSession" must be true or false, not a string"#),
            (#""preventUserInteraction": 1"#, #"the key "preventUserInteraction" must be true or false, not a number"#),
            (#""gzip": "true""#, #"the key "gzip" must be true or false, not a string"#),
            (#""saveAsResource": null"#, #"the key "saveAsResource" must be true or false, not null"#),
            (#""cacheIgnoreQueryParameters": 0"#, #"the key "cacheIgnoreQueryParameters" must be true or false, not a number"#),
            (#""offline": []"#, #"the key "offline" must be true or false, not an array"#),
            // numbers
            (#""timeout": "30""#, #"the key "timeout" must be a number of seconds or false (no limit), not a string"#),
            (#""timeout": true"#, #"the key "timeout" must be a number of seconds or false (no limit), not a boolean"#),
            (#""idleTimeout": null"#, #"the key "idleTimeout" must be a number of seconds or false (no limit), not null"#),
            (#""idleTimeout": 0"#, "idleTimeout must be a positive number of seconds, not 0.0"),
            (#""cacheTTL": true"#, #"the key "cacheTTL" must be a number of seconds, not a boolean"#),
            (#""timeout": 0"#, "timeout must be a positive number of seconds, not 0.0"),
            (#""timeout": -1.5"#, "timeout must be a positive number of seconds, not -1.5"),
            // arrays of strings
            (
                #""invalidatesCachedRouteNames": "books""#,
                #"the key "invalidatesCachedRouteNames" must be an array of route names, not a string"#
            ),
            (
                #""invalidatesCachedRouteNames": ["books", 1]"#,
                #"the key "invalidatesCachedRouteNames" must be an array of route names (strings), not one holding a number"#
            ),
            // retry policies
            (
                #""retry": true"#,
                #"the key "retry" must be false (never retry) or an object of retry settings ({} for the defaults), not a boolean"#
            ),
            (
                #""retry": 3"#,
                #"the key "retry" must be false (never retry) or an object of retry settings ({} for the defaults), not a number"#
            ),
            (
                #""retry": {"attempts": 3}"#,
                #"the key "retry" holds "attempts", which is not a retry setting (known: baseDelay, maximumAttempts, maximumDelay, maximumRetryAfter, retriesConnectionFailures, retriesConnectionLost, retriesTimeouts, retryableMethods, retryableStatusCodes)"#
            ),
            (#""retry": {"maximumAttempts": 2.5}"#, #"the key "retry.maximumAttempts" must be a whole number, not 2.5"#),
            (
                #""retry": {"retryableStatusCodes": [503, "504"]}"#,
                #"the key "retry.retryableStatusCodes" must be an array of whole numbers, not one holding a string"#
            ),
            (#""retry": {"retryableMethods": "POST"}"#, #"the key "retry.retryableMethods" must be an array of methods, not a string"#),
            (#""retry": {"retriesTimeouts": "no"}"#, #"the key "retry.retriesTimeouts" must be true or false, not a string"#),
            (#""retry": {"baseDelay": "1"}"#, #"the key "retry.baseDelay" must be a number of seconds, not a string"#),
            (#""retry": {"maximumAttempts": 0}"#, #"the key "retry.maximumAttempts" must be at least 1, not 0"#),
            (#""retry": {"baseDelay": -1}"#, #"the key "retry.baseDelay" must be zero or a positive number of seconds, not -1.0"#),
            (
                #""retry": {"retryableStatusCodes": [503, 201]}"#,
                #"the key "retry.retryableStatusCodes" must be error statuses (400 to 599), not 201"#
            ),
            // header objects
            (#""headers": {"X-Count": 1}"#, #"the key "headers" must map header names to strings; "X-Count" is not a string"#),
            (#""requestHeaders": {"X-A": null}"#, #"the key "requestHeaders" must map header names to strings; "X-A" is not a string"#),
            (
                #""headers": {"X-Token": "a", "x-token": "b"}"#,
                #"the key "headers" names the header "x-token" twice (header names ignore case)"#
            ),
            (#""headers": ["X-A"]"#, #"the key "headers" must be an object of header name → value, not an array"#),
            // serializations
            (#""serialization": 4"#, #"the key "serialization" is 4; WebApiClient's numbers are 0 to 3"#),
            (#""serialization": -1"#, #"the key "serialization" is -1; WebApiClient's numbers are 0 to 3"#),
            (
                #""serialization": "xml""#,
                #"the key "serialization" is "xml"; use one of "json", "query", "url", "form", "multipart", "raw""#
            ),
            (
                #""serialization": true"#,
                #"the key "serialization" must be a name such as "json" or one of WebApiClient's numbers 0 to 3, not a boolean"#
            ),
            (#""serialization": 1.5"#, #"the key "serialization" is 1.5; WebApiClient's numbers are 0 to 3"#),
            (
                #""serializationName": "xml""#,
                #"the key "serializationName" is "xml"; WebApiClient's names are "json", "url", "form" and "none""#
            ),
        ])
    func wrongType(keys: String, problem: String) {
        // Given: a route with a path unless the case is about the path
        let path = keys.contains(#""path""#) ? "" : #""path": "books", "#
        // When
        let reason = routeFileRefusal(#"{"r": {"# + path + keys + "}}")
        // Then
        #expect(reason == #"routes.json: route "r": "# + problem)
    }

    @Test("A route with an empty name is refused")
    func emptyName() {
        #expect(routeFileRefusal(#"{"": {"path": "x"}}"#) == "routes.json: a route needs a name")
    }

    @Test("A route that is not an object of keys is refused")
    func routeNotObject() {
        #expect(routeFileRefusal(#"{"book": "books/:id"}"#) == #"routes.json: route "book" must be an object of keys, not a string"#)
    }

    @Test("A name that differs from the route's key is refused")
    func nameMismatch() {
        #expect(
            routeFileRefusal(#"{"book": {"name": "books", "path": "books/:id"}}"#)
                == #"routes.json: route "book": the key "name" is "books", but the route is "book""#)
    }

    @Test("A route without a path is refused")
    func missingPath() {
        #expect(
            routeFileRefusal(#"{"book": {"method": "GET"}}"#)
                == #"routes.json: route "book": the key "path" is missing: every route needs a path"#)
    }

    @Test(
        "A key given twice under its two names is refused",
        arguments: [
            (#""headers": {}, "requestHeaders": {}"#, #"the key "requestHeaders" says the same as "headers"; give one of them"#),
            (
                #""requestRootKey": "a", "dataMapperRequestRootKeyPath": "a""#,
                #"the key "dataMapperRequestRootKeyPath" says the same as "requestRootKey"; give one of them"#
            ),
            (
                #""responseKeyPath": "a", "dataMapperResponseRootKeyPath": "a""#,
                #"the key "dataMapperResponseRootKeyPath" says the same as "responseKeyPath"; give one of them"#
            ),
            (
                #""serialization": "json", "serializationName": "json""#,
                #"the key "serializationName" says the same as "serialization"; give one of them"#
            ),
        ])
    func aliasTwice(keys: String, problem: String) {
        #expect(routeFileRefusal(#"{"r": {"path": "x", "# + keys + "}}") == #"routes.json: route "r": "# + problem)
    }

    @Test("An invalid path template is refused, naming the route")
    func invalidTemplate() {
        #expect(
            routeFileRefusal(#"{"book": {"path": "books/{id"}}"#)
                == #"routes.json: route "book": the path "books/{id" has a "{" without its "}""#)
        #expect(
            routeFileRefusal(#"{"book": {"path": "books/:id\\"}}"#)
                == #"routes.json: route "book": the path "books/:id\" ends with a lone "\""#)
    }

    @Test("Header values that cannot be sent are refused, naming the route")
    func invalidHeaderValue() {
        let reason = routeFileRefusal(#"{"book": {"path": "b", "headers": {"X-A": "a\r\nInjected: 1"}}}"#)
        #expect(reason.hasPrefix(#"routes.json: route "book": headers: "#))
        #expect(reason.contains("X-A"))
    }

    // MARK: - Refusals of the document

    @Test(
        "Malformed JSON is refused with the file, the line and the column",
        arguments: [
            (
                "{\n  \"a\": {\"path\": \"x\"}\n  \"b\": {\"path\": \"y\"}\n}",
                #"expected "," or "}" after the value of "a" at line 3, column 3"#
            ),
            ("{\"a\": {\"path\": \"x\"}} trailing", "unexpected text after the document at line 1, column 22"),
            ("{\n  \"a\": {\"path\": \"x}\n}", "a control character (0x0A) inside a string; escape it at line 2, column 20"),
            ("{\"a\": {\"path\": \"x", "the string is not closed at line 1, column 18"),
            ("{\n\"a\": {\"path\": \"books/:id\\.json\"}}", #"invalid escape \"." at line 2, column 26"#),
            ("{\"a\": {\"path\": \"\\ud800\"}}", #"a high surrogate \ud800 is not followed by a low one at line 1, column 23"#),
            ("{\"a\": {\"path\": \"x\ty\"}}", "a control character (0x09) inside a string; escape it at line 1, column 18"),
        ])
    func malformed(json: String, problem: String) {
        #expect(routeFileRefusal(json) == "routes.json is not valid JSON: " + problem)
    }

    @Test("A route defined twice is refused at the second definition")
    func duplicateRoute() {
        let json = """
            {
              "book": {"path": "books/:id"},
              "books": {"path": "books"},
              "book": {"path": "books/{id}"}
            }
            """
        #expect(
            routeFileRefusal(json)
                == #"routes.json is not valid JSON: the key "book" appears twice in the same object at line 4, column 3"#)
    }

    @Test("A key given twice inside one route is refused")
    func duplicateKey() {
        #expect(
            routeFileRefusal(#"{"book": {"path": "a", "path": "b"}}"#)
                == #"routes.json is not valid JSON: the key "path" appears twice in the same object at line 1, column 24"#)
    }

    @Test("Routes that are not an object are refused", arguments: [("[]", "an array"), (#""books""#, "a string"), ("null", "null")])
    func routesNotObject(json: String, kind: String) {
        #expect(routeFileRefusal(json) == "routes.json: the routes must be an object of route name → keys, not \(kind)")
    }

    @Test("A key path that is not in the file is refused")
    func keyPathNotFound() {
        #expect(
            routeFileRefusal(#"{"webservice": {"apis": {}}}"#, keyPath: "webservice.api")
                == #"routes.json has no routes at key path "webservice.api""#)
        #expect(
            routeFileRefusal(#"{"webservice": {"api": [1]}}"#, keyPath: "webservice.api")
                == "routes.json: the routes must be an object of route name → keys, not an array")
    }

    @Test("A document nested deeper than 256 levels is refused, not a stack overflow")
    func tooDeep() {
        let json = #"{"r": {"path": "x", "x": "# + String(repeating: "[", count: 300) + String(repeating: "]", count: 300) + "}}"
        #expect(
            routeFileRefusal(json)
                == "routes.json is not valid JSON: the document is nested more than 256 levels deep at line 1, column 280")
    }

    @Test("Errors name the source given, and \"routes\" by default")
    func sourceName() {
        #expect(routeFileRefusal("[]", source: "Demo/routes.json").hasPrefix("Demo/routes.json: "))
        let reason = invalidConfigurationReason { () throws(RepositoryError) in _ = try RouteTable(json: Data("[]".utf8)) }
        #expect(reason.hasPrefix("routes: "))
    }
}

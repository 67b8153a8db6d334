import Foundation

extension RouteTable {
    /// Loads the routes of a JSON route file: an object of route name → keys (see ``RouteTable``).
    ///
    /// - Parameters:
    ///   - url: the file.
    ///   - keyPath: a dotted key path at which the routes sit in the file, for files that hold
    ///     more than routes (WebApiClient's `"webservice.api"`); `nil` when the file is the routes.
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` naming the file and, for a
    ///   syntax error, its line and column; for anything else, the route and the key.
    public init(contentsOf url: URL, keyPath: String? = nil) throws(RepositoryError) {
        let data: Data
        do throws(ConfigurationFile.Refusal) {
            data = try ConfigurationFile.contents(of: url, limit: ConfigurationFile.maximumDocumentSize)
        } catch {
            throw .invalidConfiguration(reason: "the route file \(url.path) \(error.reason)")
        }
        try self.init(json: data, source: url.lastPathComponent, keyPath: keyPath)
    }

    /// Loads routes from JSON text in the route file format (see ``RouteTable``).
    ///
    /// - Parameters:
    ///   - json: the document.
    ///   - source: how errors name the document, such as the file name.
    ///   - keyPath: where the routes sit in the document, or `nil` for the top level.
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` as ``init(contentsOf:keyPath:)``.
    public init(json: Data, source: String = "routes", keyPath: String? = nil) throws(RepositoryError) {
        let document: JSONValue
        do {
            document = try JSONTextParser.parse(json)
        } catch {
            throw .invalidConfiguration(reason: "\(source) is not valid JSON: \(error)")
        }
        var table = document
        if let keyPath {
            guard let found = document.value(atKeyPath: keyPath) else {
                throw .invalidConfiguration(reason: "\(source) has no routes at key path \"\(keyPath)\"")
            }
            table = found
        }
        guard case .object(let entries) = table else {
            throw .invalidConfiguration(
                reason: "\(source): the routes must be an object of route name → keys, not \(table.kindDescription)")
        }
        try self.init()
        for name in entries.keys.sorted() {
            guard let keys = entries[name] else { continue }
            do {
                try add(try RouteFileEntry(name: name, value: keys).route())
            } catch {
                throw .invalidConfiguration(reason: "\(source): \(error.configurationReason)")
            }
        }
    }
}

/// One route of a route file, read key by key with the errors a person can act on.
private struct RouteFileEntry {
    let name: String
    let keys: [String: JSONValue]
    /// What errors put before a key's name: `retry.` for the keys of a route's `retry` object.
    private var keyPrefix = ""

    /// The keys of the object under a route's `key`, whose errors name it (`retry.baseDelay`).
    private init(name: String, keys: [String: JSONValue], key: String) {
        self.name = name
        self.keys = keys
        keyPrefix = key + "."
    }

    static let knownKeys: Set<String> = [
        "name", "method", "path", "headers", "requestHeaders", "serialization", "serializationName", "contentType",
        "requestRootKey", "dataMapperRequestRootKeyPath", "responseKeyPath", "dataMapperResponseRootKeyPath",
        "requiresSession", "timeout", "idleTimeout", "preventUserInteraction", "gzip", "saveAsResource", "cacheTTL",
        "invalidatesCachedRouteNames", "cacheIgnoreQueryParameters", "offline", "retry",
    ]

    init(name: String, value: JSONValue) throws(RepositoryError) {
        self.name = name
        guard case .object(let keys) = value else {
            throw .invalidConfiguration(reason: "route \"\(name)\" must be an object of keys, not \(value.kindDescription)")
        }
        self.keys = keys
        if let unknown = keys.keys.sorted().first(where: { !Self.knownKeys.contains($0) }) {
            if unknown == "dataMapper" {
                throw fail(
                    unknown,
                    "names an Objective-C data mapper class; give the route a mapping step in code with RouteTable.setMapping(forRoute:_:)")
            }
            throw fail(unknown, "is not a route key (known keys: \(Self.knownKeys.sorted().joined(separator: ", ")))")
        }
    }

    func route() throws(RepositoryError) -> Route {
        if let given = try string("name"), given != name {
            throw fail("name", "is \"\(given)\", but the route is \"\(name)\"")
        }
        guard let path = try string("path") else { throw fail("path", "is missing: every route needs a path") }
        let method = HTTPMethod(try string("method") ?? "GET")
        return try Route(
            name: name, method: method, path: path,
            headers: try headers(), serialization: try serialization(for: method), contentType: try string("contentType"),
            requestRootKey: try alias("requestRootKey", "dataMapperRequestRootKeyPath"),
            responseKeyPath: try alias("responseKeyPath", "dataMapperResponseRootKeyPath"),
            requiresSession: try bool("requiresSession") ?? true, timeout: try seconds("timeout"),
            idleTimeout: try seconds("idleTimeout"), preventUserInteraction: try bool("preventUserInteraction") ?? false,
            gzip: try bool("gzip") ?? false,
            saveAsResource: try bool("saveAsResource") ?? false, cacheTTL: try number("cacheTTL"),
            invalidatesCachedRouteNames: try strings("invalidatesCachedRouteNames") ?? [],
            cacheIgnoreQueryParameters: try bool("cacheIgnoreQueryParameters") ?? false, offline: try bool("offline") ?? false,
            retryPolicy: try retryPolicy())
    }

    /// The `retry` key: `false` for ``RetryPolicy/never``, or an object of ``RetryPolicy``'s
    /// properties (without `random`: calls take the configuration's), each missing one at its
    /// default.
    private func retryPolicy() throws(RepositoryError) -> RetryPolicy? {
        switch keys["retry"] {
        case nil: return nil
        case .bool(false)?: return .never
        case .object(let fields)?:
            let entry = RouteFileEntry(name: name, keys: fields, key: "retry")
            if let unknown = fields.keys.sorted().first(where: { !Self.retryKeys.contains($0) }) {
                throw fail(
                    "retry",
                    "holds \"\(unknown)\", which is not a retry setting (known: \(Self.retryKeys.sorted().joined(separator: ", ")))")
            }
            var policy = RetryPolicy()
            if let attempts = try entry.wholeNumber("maximumAttempts") { policy.maximumAttempts = attempts }
            if let methods = try entry.strings("retryableMethods", of: "methods") {
                policy.retryableMethods = Set(methods.map { HTTPMethod($0) })
            }
            if let codes = try entry.wholeNumbers("retryableStatusCodes") { policy.retryableStatusCodes = Set(codes) }
            if let flag = try entry.bool("retriesConnectionLost") { policy.retriesConnectionLost = flag }
            if let flag = try entry.bool("retriesTimeouts") { policy.retriesTimeouts = flag }
            if let flag = try entry.bool("retriesConnectionFailures") { policy.retriesConnectionFailures = flag }
            if let seconds = try entry.number("baseDelay") { policy.baseDelay = seconds }
            if let seconds = try entry.number("maximumDelay") { policy.maximumDelay = seconds }
            if let seconds = try entry.number("maximumRetryAfter") { policy.maximumRetryAfter = seconds }
            policy.randomFromConfiguration = true
            if let (setting, problem) = policy.invalidSetting { throw entry.fail(setting, problem) }
            return policy
        case let other?:
            throw fail(
                "retry", "must be false (never retry) or an object of retry settings ({} for the defaults), not \(other.kindDescription)")
        }
    }

    /// The keys of a route's `retry` object: ``RetryPolicy``'s properties.
    static let retryKeys: Set<String> = [
        "maximumAttempts", "retryableMethods", "retryableStatusCodes", "retriesConnectionLost", "retriesTimeouts",
        "retriesConnectionFailures", "baseDelay", "maximumDelay", "maximumRetryAfter",
    ]

    private func fail(_ key: String, _ problem: String) -> RepositoryError {
        .invalidConfiguration(reason: "route \"\(name)\": the key \"\(keyPrefix)\(key)\" \(problem)")
    }

    private func string(_ key: String) throws(RepositoryError) -> String? {
        switch keys[key] {
        case nil: return nil
        case .string(let text)?: return text
        case let other?: throw fail(key, "must be a string, not \(other.kindDescription)")
        }
    }

    private func bool(_ key: String) throws(RepositoryError) -> Bool? {
        switch keys[key] {
        case nil: return nil
        case .bool(let flag)?: return flag
        case let other?: throw fail(key, "must be true or false, not \(other.kindDescription)")
        }
    }

    private func number(_ key: String) throws(RepositoryError) -> Double? {
        switch keys[key] {
        case nil: return nil
        case .int(let number)?: return Double(number)
        case .double(let number)?: return number
        case let other?: throw fail(key, "must be a number of seconds, not \(other.kindDescription)")
        }
    }

    /// A time limit: a number of seconds, or `false` for none (`.infinity`), as `retry: false`
    /// turns retries off; JSON has no infinity.
    private func seconds(_ key: String) throws(RepositoryError) -> Double? {
        switch keys[key] {
        case .bool(false)?: return .infinity
        case nil, .int?, .double?: return try number(key)
        case let other?: throw fail(key, "must be a number of seconds or false (no limit), not \(other.kindDescription)")
        }
    }

    /// A whole number, also when written with a fraction part of zero (`3.0`).
    private static func wholeNumber(in value: JSONValue) -> Int? {
        switch value {
        case .int(let number): number
        case .double(let number): Int(exactly: number)
        default: nil
        }
    }

    private func wholeNumber(_ key: String) throws(RepositoryError) -> Int? {
        guard let value = keys[key] else { return nil }
        if let whole = Self.wholeNumber(in: value) { return whole }
        if case .double(let number) = value { throw fail(key, "must be a whole number, not \(number)") }
        throw fail(key, "must be a whole number, not \(value.kindDescription)")
    }

    private func wholeNumbers(_ key: String) throws(RepositoryError) -> [Int]? {
        try array(key, of: "whole numbers", each: "whole numbers", Self.wholeNumber(in:))
    }

    /// An array of strings, each `what` (route names, methods).
    private func strings(_ key: String, of what: String = "route names") throws(RepositoryError) -> [String]? {
        try array(key, of: what, each: "\(what) (strings)") { if case .string(let text) = $0 { text } else { nil } }
    }

    /// An array whose every element `element` reads; the errors call it an array of `what`, and
    /// one of `each` when an element is of another kind.
    private func array<Element>(_ key: String, of what: String, each: String, _ element: (JSONValue) -> Element?)
        throws(RepositoryError) -> [Element]?
    {
        switch keys[key] {
        case nil: return nil
        case .array(let elements)?:
            var result: [Element] = []
            for value in elements {
                guard let read = element(value) else {
                    throw fail(key, "must be an array of \(each), not one holding \(value.kindDescription)")
                }
                result.append(read)
            }
            return result
        case let other?: throw fail(key, "must be an array of \(what), not \(other.kindDescription)")
        }
    }

    private func alias(_ key: String, _ seedKey: String) throws(RepositoryError) -> String? {
        if keys[key] != nil, keys[seedKey] != nil {
            throw fail(seedKey, "says the same as \"\(key)\"; give one of them")
        }
        if let value = try string(key) { return value }
        return try string(seedKey)
    }

    private func headers() throws(RepositoryError) -> HTTPHeaders {
        let key = keys["headers"] != nil ? "headers" : "requestHeaders"
        if keys["headers"] != nil, keys["requestHeaders"] != nil {
            throw fail("requestHeaders", "says the same as \"headers\"; give one of them")
        }
        switch keys[key] {
        case nil: return [:]
        case .object(let fields)?:
            var headers = HTTPHeaders()
            for fieldName in fields.keys.sorted() {
                guard case .string(let value)? = fields[fieldName] else {
                    throw fail(key, "must map header names to strings; \"\(fieldName)\" is not a string")
                }
                // Header names ignore case: a second spelling of one would silently replace it.
                if headers.contains(fieldName) {
                    throw fail(key, "names the header \"\(fieldName)\" twice (header names ignore case)")
                }
                headers[fieldName] = value
            }
            return headers
        case let other?: throw fail(key, "must be an object of header name → value, not \(other.kindDescription)")
        }
    }

    /// The route's serialization. WebApiClient's JSON (`0`, `"json"`) is AFNetworking's JSON
    /// serializer, which sends the parameters of a `DELETE` in the query, as of `GET` and `HEAD`;
    /// this library's `"json"` sends them as a body whatever the method.
    private func serialization(for method: HTTPMethod) throws(RepositoryError) -> RouteSerialization? {
        let webApiClientJSON: RouteSerialization = method == .delete ? .query : .json
        if keys["serialization"] != nil, keys["serializationName"] != nil {
            throw fail("serializationName", "says the same as \"serialization\"; give one of them")
        }
        // WebApiClient's numbers: 0 JSON, 1 URL, 2 form (multipart), 3 none.
        func webApiClientSerialization(_ number: Int) throws(RepositoryError) -> RouteSerialization {
            let values: [RouteSerialization] = [webApiClientJSON, .url, .multipart, .raw]
            guard values.indices.contains(number) else { throw fail("serialization", "is \(number); WebApiClient's numbers are 0 to 3") }
            return values[number]
        }
        switch keys["serialization"] {
        case .string(let text)?:
            guard let value = RouteSerialization(rawValue: text) else {
                throw fail(
                    "serialization",
                    "is \"\(text)\"; use one of \(RouteSerialization.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
            }
            return value
        case .int(let number)?:
            return try webApiClientSerialization(number)
        case .double(let number)?:
            guard let whole = Int(exactly: number) else { throw fail("serialization", "is \(number); WebApiClient's numbers are 0 to 3") }
            return try webApiClientSerialization(whole)
        case let other?:
            throw fail(
                "serialization", "must be a name such as \"json\" or one of WebApiClient's numbers 0 to 3, not \(other.kindDescription)")
        case nil: break
        }
        guard let name = try string("serializationName") else { return nil }
        let names: [String: RouteSerialization] = ["json": webApiClientJSON, "url": .url, "form": .multipart, "none": .raw]
        guard let value = names[name.lowercased()] else {
            throw fail("serializationName", "is \"\(name)\"; WebApiClient's names are \"json\", \"url\", \"form\" and \"none\"")
        }
        return value
    }
}

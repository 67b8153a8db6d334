import Foundation

extension RouteTable {
    /// Loads a route per operation of an OpenAPI 3.x or Swagger 2.0 JSON document.
    ///
    /// - Each operation becomes a route named by its `operationId`, or `"METHOD /path"` (such as
    ///   `"POST /echo/{rest}"`) when it has none or an empty one; paths keep their `{name}`
    ///   placeholders, and stay under the base URL even when they look like a URL.
    /// - The serialization follows the request body's media type (`application/json` → JSON,
    ///   `application/x-www-form-urlencoded` → form, `multipart/form-data` → multipart, anything
    ///   else → raw); operations without a body send parameters in the query. Swagger 2's
    ///   `formData` parameters go as a form, multipart when `consumes` lists it or one is a file. References into the
    ///   document (`"$ref": "#/components/requestBodies/Upload"`) are followed; a body in another
    ///   file counts as JSON.
    /// - A route needs the session when the operation (or, when it says nothing, the document)
    ///   lists a security requirement; `security: []` means no session.
    /// - With `includingBasePath`, route paths start with the document's base path — the path of
    ///   the first server's URL (3.x) or `basePath` (2.0) — for configurations whose base URL does
    ///   not include it already. By default paths are relative to the configuration's base URL.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` for malformed JSON (line and
    ///   column), a document that is neither OpenAPI 3 nor Swagger 2, two operations with the
    ///   same name, an `operationId` that is not a string, a path item given by a reference to
    ///   another file, a path that is not a valid route path (a `..` segment, for one), more than
    ///   100,000 operations (or paths of more than 32 MiB in all, or more than 1,000,000
    ///   parameters, media types and security requirements in all, counted per operation), or
    ///   (with `includingBasePath`) a base path longer than 2,048 bytes.
    public init(openAPI json: Data, source: String = "OpenAPI document", includingBasePath: Bool = false) throws(RepositoryError) {
        let document: JSONValue
        do {
            document = try JSONTextParser.parse(json)
        } catch {
            let start = String(decoding: json.prefix(64), as: UTF8.self).drop { $0.isWhitespace || $0 == "\u{FEFF}" }
            if ["openapi:", "swagger:", "---"].contains(where: { start.hasPrefix($0) }) {
                throw .invalidConfiguration(reason: "\(source) is YAML, not JSON: convert it to JSON first")
            }
            throw .invalidConfiguration(reason: "\(source) is not valid JSON: \(error)")
        }
        let isSwagger2 = document["swagger"]?.stringValue?.hasPrefix("2") == true
        guard isSwagger2 || document["openapi"]?.stringValue?.hasPrefix("3") == true else {
            throw .invalidConfiguration(
                reason: "\(source) is neither OpenAPI 3 (\"openapi\": \"3.x\") nor Swagger 2 (\"swagger\": \"2.0\")")
        }
        guard case .object(let paths)? = document["paths"] else {
            throw .invalidConfiguration(reason: "\(source) has no \"paths\" object")
        }
        let base = includingBasePath ? try Self.basePath(of: document, swagger2: isSwagger2, source: source) : ""
        let globalSecurity = document["security"]
        let references = OpenAPIReferences(document: document)
        try self.init()
        // Path items given by `$ref` can make many routes of few bytes, each with the base path.
        var templateBytes = 0
        // Each route name's operation, to say where both are when two share a name.
        var firstOperation: [String: String] = [:]
        for path in paths.keys.sorted() {
            guard let entry = paths[path], case .object(let item) = references.resolved(entry) else { continue }
            if let reference = item["$ref"]?.stringValue {
                let why =
                    reference.hasPrefix("#")
                    ? "which points to nothing in the document, or to itself"
                    : "which is not in the document: bundle the document's files into one"
                throw .invalidConfiguration(reason: "\(source): the path \(path) is given by the reference \"\(reference)\", \(why)")
            }
            for method in ["get", "put", "post", "delete", "options", "head", "patch", "trace"] {
                guard case .object(let operation)? = item[method] else { continue }
                let name: String
                switch operation["operationId"] {
                case .string(let id)? where !id.isEmpty: name = id
                case nil, .string?, .null?: name = "\(method.uppercased()) \(path)"
                case let other?:
                    throw .invalidConfiguration(
                        reason: "\(source): the operationId of \(method.uppercased()) \(path) is \(other.kindDescription), not a string")
                }
                let security = operation["security"] ?? globalSecurity
                // A session is needed when every alternative asks for a scheme: `[]` or an empty
                // requirement `{}` among them allows anonymous calls.
                var requiresSession = false
                if case .array(let requirements)? = security {
                    try references.spend(requirements.count, source: source)
                    requiresSession = !requirements.isEmpty && !requirements.contains(.object([:]))
                }
                let relative = path.hasPrefix("/") ? String(path.dropFirst()) : path
                // OpenAPI's placeholders are `{name}` only: a colon is text (`/v1/{name}:cancel`).
                let template = Self.escapingText(base.isEmpty ? relative : base + "/" + relative)
                templateBytes += template.utf8.count
                guard routes.count < Self.maximumOperationCount, templateBytes <= Self.maximumTemplateBytes else {
                    throw .invalidConfiguration(
                        reason:
                            "\(source) has more than \(Self.maximumOperationCount) operations, or paths of more than \(Self.maximumTemplateBytes) bytes in all"
                    )
                }
                let serialization = try Self.serialization(
                    of: .object(operation), pathParameters: Self.array(item["parameters"]), method: method, swagger2: isSwagger2,
                    references: references, source: source)
                if let first = firstOperation[name] {
                    throw .invalidConfiguration(
                        reason: "\(source): the operations \(first) and \(method.uppercased()) \(path) are both named \"\(name)\"")
                }
                firstOperation[name] = "\(method.uppercased()) \(path)"
                do {
                    try add(
                        Route(
                            name: name, method: HTTPMethod(method), path: template, serialization: serialization,
                            requiresSession: requiresSession))
                } catch {
                    throw .invalidConfiguration(reason: "\(source): \(error.configurationReason)")
                }
            }
        }
    }

    /// Loads an OpenAPI 3.x or Swagger 2.0 JSON file; see ``init(openAPI:source:includingBasePath:)``.
    public init(openAPIContentsOf url: URL, includingBasePath: Bool = false) throws(RepositoryError) {
        let data: Data
        do throws(ConfigurationFile.Refusal) {
            data = try ConfigurationFile.contents(of: url, limit: ConfigurationFile.maximumDocumentSize)
        } catch {
            throw .invalidConfiguration(reason: "the OpenAPI document \(url.path) \(error.reason)")
        }
        try self.init(openAPI: data, source: url.lastPathComponent, includingBasePath: includingBasePath)
    }

    /// The longest base path, or server URL, a document may give: it is repeated in every route.
    static let maximumBasePathLength = 2_048

    /// The most operations a document may give, and the most bytes their paths (each with the
    /// base path) may come to: far above real APIs', and a bound on what a small document whose
    /// path items share one `$ref` may build.
    static let maximumOperationCount = 100_000
    static let maximumTemplateBytes = 32 * 1024 * 1024

    /// The base path without a trailing `/` (empty for none).
    private static func basePath(of document: JSONValue, swagger2: Bool, source: String) throws(RepositoryError) -> String {
        let raw: String
        if swagger2 {
            raw = document["basePath"]?.stringValue ?? ""
        } else {
            let given = document.value(atKeyPath: "servers.0.url")?.stringValue ?? ""
            guard given.utf8.count <= maximumBasePathLength else {
                throw .invalidConfiguration(reason: "\(source): the first server's URL is longer than \(maximumBasePathLength) bytes")
            }
            // Server variables take their defaults: https://{region}.example.com/{version}.
            var variables: [String: JSONValue] = [:]
            if case .object(let given)? = document.value(atKeyPath: "servers.0.variables") { variables = given }
            guard let server = substituting(variables, in: given) else {
                throw .invalidConfiguration(
                    reason:
                        "\(source): the first server's URL, its variables given their defaults, is longer than \(maximumBasePathLength) bytes"
                )
            }
            // An absolute server URL (or a scheme-relative one, "//host/v1") contributes its
            // path; a relative one is the path.
            if let scheme = server.range(of: "://") ?? (server.hasPrefix("//") ? server.range(of: "//") : nil) {
                // The authority ends at the first "/", "?" or "#" ("https://h?next=/v1" has no path).
                let afterAuthority = server[scheme.upperBound...].firstIndex { "/?#".contains($0) }
                raw = afterAuthority.map { String(server[$0...]) } ?? ""
            } else {
                raw = server
            }
        }
        guard raw.utf8.count <= maximumBasePathLength else {
            throw .invalidConfiguration(reason: "\(source): the base path is longer than \(maximumBasePathLength) bytes")
        }
        // A query or fragment in a server URL is not part of its path (every route's path would
        // land in it).
        // A "." segment (a server URL "." or "./api") is the folder itself; a ".." one would climb
        // out of the configuration's base URL in every route, so it is refused here, named.
        let segments = raw.prefix { $0 != "?" && $0 != "#" }.split(separator: "/").filter { $0 != "." }
        if segments.contains("..") {
            let origin = swagger2 ? "basePath" : "the first server's URL"
            throw .invalidConfiguration(reason: "\(source): \(origin) \"\(raw)\" has a \"..\" segment: give the path it stands for")
        }
        let trimmed = segments.joined(separator: "/")
        return trimmed.isEmpty ? "" : "/" + trimmed
    }

    /// `server` with each `{name}` replaced by its variable's default, in one pass: a default is
    /// never read again for placeholders (one holding `{other}` stays as it is), so the result
    /// neither depends on the variables' order nor grows beyond their defaults' lengths; `nil`
    /// once it is longer than ``maximumBasePathLength`` (checked as it grows: a long default
    /// repeated in many placeholders never builds a huge string).
    private static func substituting(_ variables: [String: JSONValue], in server: String) -> String? {
        var result = ""
        var rest = server[...]
        func append(_ piece: some StringProtocol) -> Bool {
            guard result.utf8.count + piece.utf8.count <= maximumBasePathLength else { return false }
            result += piece
            return true
        }
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            let name = String(rest[rest.index(after: open)..<close])
            guard append(rest[..<open]), append(variables[name]?["default"]?.stringValue ?? String(rest[open...close])) else {
                return nil
            }
            rest = rest[rest.index(after: close)...]
        }
        return append(rest) ? result : nil
    }

    /// An OpenAPI path as a ``PathTemplate``: its `{name}` placeholders kept, and the `:` and `\`
    /// of its text escaped, since OpenAPI knows no `:name` placeholders.
    private static func escapingText(_ path: String) -> String {
        var escaped = ""
        var inPlaceholder = false
        for character in path {
            switch character {
            case "{": inPlaceholder = true
            case "}": inPlaceholder = false
            case ":" where !inPlaceholder, "\\" where !inPlaceholder: escaped.append("\\")
            default: break
            }
            escaped.append(character)
        }
        return escaped
    }

    private static func array(_ value: JSONValue?) -> [JSONValue] {
        if case .array(let elements)? = value { return elements }
        return []
    }

    /// The serialization of an operation's parameters: its body's media type; the query when it
    /// has no body (`nil` for `GET` and `HEAD`, which send them there anyway; a `DELETE` says
    /// so, whatever the configuration's `queryEncodedMethods`).
    private static func serialization(
        of operation: JSONValue, pathParameters: [JSONValue], method: String, swagger2: Bool, references: OpenAPIReferences,
        source: String
    ) throws(RepositoryError) -> RouteSerialization? {
        let document = references.document
        let bodiless: RouteSerialization? = ["get", "head"].contains(method) ? nil : .query
        let mediaTypes: [String]
        if swagger2 {
            // Parameters of the path item apply to each of its operations (Swagger 2.0 §4.3.4).
            let given = Self.array(operation["parameters"]) + pathParameters
            try references.spend(given.count, source: source)
            let parameters = given.map { references.resolved($0) }
            let locations = Set(parameters.compactMap { (parameter: JSONValue) in parameter["in"]?.stringValue })
            guard locations.contains("body") || locations.contains("formData") else {
                // A parameter given by a reference outside the document may be the body: then the
                // method decides.
                return parameters.contains { $0["$ref"] != nil } ? nil : bodiless
            }
            let consumes = operation["consumes"] ?? document["consumes"]
            let declaredValues = Self.array(consumes)
            try references.spend(declaredValues.count, source: source)
            let declared = declaredValues.compactMap(\.stringValue)
            // Form parameters without a body go as a form whatever else `consumes` lists (a JSON
            // media type there is the document's default): multipart when it is listed or a
            // parameter is a file.
            if !locations.contains("body") {
                let listsMultipart = declared.contains { $0.lowercased().hasPrefix("multipart/form-data") }
                return listsMultipart || parameters.contains { $0["type"]?.stringValue == "file" } ? .multipart : .form
            }
            mediaTypes =
                declared.isEmpty ? [locations.contains("body") ? "application/json" : "application/x-www-form-urlencoded"] : declared
        } else {
            guard let body = operation["requestBody"].map({ references.resolved($0) }) else { return bodiless }
            // A body given by a reference outside the document is not followed: JSON, the common case.
            guard case .object(let content)? = body["content"] else { return .json }
            try references.spend(content.count, source: source)
            // The kind follows from which media types are listed, whatever their order.
            mediaTypes = Array(content.keys)
        }
        // Parameters such as "; charset=UTF-8" do not change the kind of body.
        let lowered = mediaTypes.map { $0.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased() }
        if lowered.contains(where: { $0.hasPrefix("application/json") || $0.hasSuffix("+json") }) { return .json }
        if lowered.contains("application/x-www-form-urlencoded") { return .form }
        if lowered.contains("multipart/form-data") { return .multipart }
        return lowered.isEmpty ? nil : .raw
    }
}

/// The `$ref`s of one OpenAPI document, each followed once: a document whose thousands of path
/// items point through long chains of deep references costs one walk per reference, not one per use.
final class OpenAPIReferences {
    let document: JSONValue
    /// Each reference's target, `nil` when it points to nothing.
    private var targets: [String: JSONValue?] = [:]

    /// How many parameters, media types and security requirements the operations have looked at
    /// so far: operations sharing one large `$ref`'d body or parameter list look at it each, so a
    /// small document could otherwise cost hours.
    private var work = 0
    /// The most the operations of one document may look at in all: far above large real APIs'
    /// tens of thousands, and well under a second of work.
    static let maximumWork = 1_000_000

    init(document: JSONValue) { self.document = document }

    /// Counts `count` items looked at.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` once the document's operations
    ///   have looked at more than ``maximumWork`` in all.
    func spend(_ count: Int, source: String) throws(RepositoryError) {
        work &+= count
        guard work <= Self.maximumWork else {
            throw .invalidConfiguration(
                reason:
                    "\(source): its operations list more than \(Self.maximumWork) parameters, media types and security requirements in all"
            )
        }
    }

    /// `value`, or what its `$ref` points to when that is a JSON Pointer into this document
    /// (`#/components/requestBodies/Item`, `#/parameters/body`; RFC 6901, `~1` for `/` and `~0`
    /// for `~`), followed through references to references up to a limit so a cycle ends. A
    /// reference to another file, or to nothing, leaves `value` as it is.
    func resolved(_ value: JSONValue) -> JSONValue {
        var current = value
        for _ in 0..<32 {
            guard let reference = current["$ref"]?.stringValue, reference.hasPrefix("#"), let target = target(of: reference)
            else { return current }
            current = target
        }
        return value
    }

    private func target(of reference: String) -> JSONValue? {
        if let known = targets[reference] { return known }
        let found = Self.walk(reference, in: document)
        targets[reference] = .some(found)
        return found
    }

    private static func walk(_ reference: String, in document: JSONValue) -> JSONValue? {
        let pointer = reference.dropFirst().removingPercentEncoding ?? String(reference.dropFirst())
        guard pointer.isEmpty || pointer.hasPrefix("/") else { return nil }
        var node = document
        for token in pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            switch node {
            case .object(let members):
                guard let member = members[key] else { return nil }
                node = member
            case .array(let elements):
                guard let index = Int(key), elements.indices.contains(index) else { return nil }
                node = elements[index]
            default:
                return nil
            }
        }
        return node
    }
}

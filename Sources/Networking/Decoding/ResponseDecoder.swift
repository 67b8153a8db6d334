import Foundation

/// Decodes response bodies into models and reports every failure to the decoding-failure hook.
struct ResponseDecoder: Sendable {
    let configuration: NetworkingConfiguration
    let bodyDecoder: BodyDecoder

    init(configuration: NetworkingConfiguration) {
        self.configuration = configuration
        bodyDecoder = BodyDecoder(jsonDecoder: configuration.jsonDecoder, usesFoundation: configuration.usesFoundationJSONDecoder)
    }

    /// The body (or the value at `keyPath`) as `T`, or the endpoint's own decoding step's result.
    func decode<T: Decodable>(
        _ type: T.Type, from response: TransportResponse, request: RequestSummary, keyPath: String?,
        custom: (@Sendable (DecodingInput) throws -> T)? = nil
    ) throws(RepositoryError) -> T {
        if let custom { return try decode(with: custom, from: response, request: request) }
        let context = ErrorContext(request: request, response: response, attempts: response.attempts)
        if response.body.isEmpty {
            if let none = BodyDecoder.emptyBodyValue(of: T.self) { return none }
            throw reported(
                .mismatch, type: T.self, context: context, codingPath: keyPath ?? "",
                reason:
                    "the body is empty (status \(response.statusCode)) but a \(T.self) was expected; use Endpoint<Void> for calls that return no body"
            )
        }
        do {
            return try bodyDecoder.decode(T.self, from: response.body, keyPath: keyPath)
        } catch let error as DecodingError {
            throw failure(for: error, type: T.self, context: context)
        } catch {
            throw reported(.mismatch, type: T.self, context: context, codingPath: "", reason: "\(error)")
        }
    }

    /// The result of an endpoint's own decoding step; its failures are reported like any other.
    func decode<T>(
        with custom: (DecodingInput) throws -> T, from response: TransportResponse, request: RequestSummary,
        reasonPrefix: String = ""
    ) throws(RepositoryError) -> T {
        let context = ErrorContext(request: request, response: response, attempts: response.attempts)
        do {
            return try custom(DecodingInput(response: response, request: request, bodyDecoder: bodyDecoder))
        } catch let error as RepositoryError {
            throw error
        } catch let error as DecodingError {
            throw failure(for: error, typeName: String(describing: T.self), context: context, reasonPrefix: reasonPrefix)
        } catch {
            throw reported(.mismatch, type: T.self, context: context, codingPath: "", reason: "\(error)")
        }
    }

    /// Reports a failure to decode an error body for a custom error rule.
    func reportBodyFailure(_ error: any Error, typeName: String, context: ErrorContext) {
        if let response = context.response, response.body.isEmpty {
            reported(
                .mismatch, typeName: typeName, context: context, codingPath: "",
                reason:
                    "the body is empty (status \(response.statusCode)) but a \(typeName) was expected; decode an Optional for answers that may have none"
            )
        } else if let error = error as? DecodingError {
            failure(for: error, typeName: typeName, context: context)
        } else {
            reported(.mismatch, typeName: typeName, context: context, codingPath: "", reason: "\(error)")
        }
    }

    private func failure<T>(for error: DecodingError, type: T.Type, context: ErrorContext) -> RepositoryError {
        failure(for: error, typeName: String(describing: T.self), context: context)
    }

    @discardableResult
    private func failure(for error: DecodingError, typeName: String, context: ErrorContext, reasonPrefix: String = "")
        -> RepositoryError
    {
        let body = context.response?.body ?? Data()
        // A decoding step's `decode(_:at:)` or `json()` of an empty body (a syntax error at the
        // top), or a step's own error about a response without a body.
        if body.isEmpty {
            let empty = "the body is empty (status \(context.statusCode ?? 0))"
            let parsed = Self.isSyntaxErrorAtTop(error)
            let own = Self.contextOf(error).map { context in
                let path = Self.pathText(context.codingPath)
                return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
            }
            return reported(
                .mismatch, typeName: typeName, context: context, codingPath: "",
                reason: reasonPrefix + empty + (parsed ? " but a value was expected" : "; \(own ?? "\(error)")"))
        }
        // A large body's syntax is only checked, not built into a value again (several times its
        // size in memory) to show what the path holds.
        let inspected = body.count <= Self.inspectedBodyLimit
        let (json, isValid) = read(body, inspected: inspected, error: error)
        // Not valid JSON: the decoder could not read it (its error is at the top). A body that is
        // invalid only in a member the model never read fails as a mismatch where it failed.
        if !isValid, case .dataCorrupted(let corrupted) = error, corrupted.codingPath.isEmpty {
            return reported(
                .malformedJSON, typeName: typeName, context: context, codingPath: "",
                reason: reasonPrefix + "the body is not valid JSON (\(Self.underlyingMessage(of: error)))")
        }
        var keyNames: (@Sendable (String) -> String)?
        if case .convertFromSnakeCase = configuration.jsonDecoder.keyDecodingStrategy { keyNames = FastJSONSnakeCase.convert }
        let (path, reason) = Self.describe(
            error, in: json, redaction: Redaction(secretFields: configuration.secretFields), keyNames: keyNames,
            unshown: inspected ? nil : "a value not shown (the body is too large to look into)")
        return reported(.mismatch, typeName: typeName, context: context, codingPath: path, reason: reasonPrefix + reason)
    }

    /// The largest body a decoding failure parses again to say what its coding path holds.
    static let inspectedBodyLimit = 4 * 1024 * 1024

    /// The body as a value to show (when `inspected`), and whether it is valid for the
    /// configuration's decoder: JSON, or JSON5 and a top level without braces when the
    /// `JSONDecoder` allows them (read by a `JSONDecoder` with those options alone, so that the
    /// key strategy does not rename what is shown).
    private func read(_ body: Data, inspected: Bool, error: DecodingError) -> (JSONValue?, Bool) {
        let configured = configuration.jsonDecoder
        guard configured.allowsJSON5 || configured.assumesTopLevelDictionary else {
            let json = inspected ? try? JSONValue(parsing: body) : nil
            return (json, inspected ? json != nil : Self.isValidJSON(body))
        }
        guard inspected else {
            // Too large to read again: only a syntax error at the top says invalid.
            return (nil, !Self.isSyntaxErrorAtTop(error))
        }
        let reader = JSONDecoder()
        reader.allowsJSON5 = configured.allowsJSON5
        reader.assumesTopLevelDictionary = configured.assumesTopLevelDictionary
        let json = try? reader.decode(JSONValue.self, from: body)
        return (json, json != nil)
    }

    /// Whether the body's JSON structure is valid (in any encoding the decoder reads), read
    /// without building a value.
    private static func isValidJSON(_ body: Data) -> Bool {
        let options = FastJSONOptions(JSONDecoder())
        return (try? FastJSONDecoder.withUTF8(of: body) { bytes in try FastJSONSession(input: bytes, options: options) }) != nil
    }

    private func reported<T>(
        _ kind: DecodingFailure.Kind, type: T.Type, context: ErrorContext, codingPath: String, reason: String
    ) -> RepositoryError {
        reported(kind, typeName: String(describing: T.self), context: context, codingPath: codingPath, reason: reason)
    }

    @discardableResult
    private func reported(
        _ kind: DecodingFailure.Kind, typeName: String, context: ErrorContext, codingPath: String, reason: String
    ) -> RepositoryError {
        let failure = DecodingFailure(
            kind: kind, entityType: typeName, context: context, codingPath: codingPath, reason: reason,
            bodyExcerpt: Redaction(secretFields: configuration.secretFields).bodyExcerpt(
                context.response?.body ?? Data(), limit: DecodingFailure.excerptLimit))
        (configuration.decodingFailureHandler ?? DecodingFailure.defaultHandler)?(failure)
        return kind == .malformedJSON ? .jsonError(failure) : .decodeError(failure)
    }

    /// The coding path as text (`data[3].genre`) and a sentence saying what went wrong; what was
    /// found is read from `json`, the body, when it could be parsed. `keyNames` gives the model's
    /// name of a key in the body (the key strategy's conversion), when they differ. `unshown`,
    /// when given, stands for what was found (the body was not read again).
    static func describe(
        _ error: DecodingError, in json: JSONValue?, redaction: Redaction, keyNames: ((String) -> String)? = nil,
        unshown: String? = nil
    ) -> (path: String, reason: String) {
        func found(at path: [any CodingKey]) -> (text: String, isSecret: Bool) {
            if let unshown { return (unshown, isSensitive(path, redaction)) }
            return Self.found(at: path, in: json, redaction, keyNames: keyNames)
        }
        switch error {
        case .typeMismatch(let type, let context):
            let path = pathText(context.codingPath)
            return (path, "expected \(typeName(type)) but found \(found(at: context.codingPath).text)")
        case .valueNotFound(let type, let context):
            let path = pathText(context.codingPath)
            return (path, "expected \(typeName(type)) but found \(found(at: context.codingPath).text)")
        case .keyNotFound(let key, let context):
            let parent = pathText(context.codingPath)
            return (pathText(context.codingPath + [key]), "missing key \"\(key.stringValue)\"" + (parent.isEmpty ? "" : " in \(parent)"))
        case .dataCorrupted(let context):
            let path = pathText(context.codingPath)
            let value = found(at: context.codingPath)
            // Foundation's description quotes the rejected value, so it is dropped at a credential,
            // and its secret pairs (an echoed URL's `?access_token=`) are redacted elsewhere.
            let what = value.isSecret ? "the value is not valid" : redaction.redactText(context.debugDescription)
            return (path, "\(what) (found \(value.text))")
        @unknown default:
            return ("", "\(error)")
        }
    }

    /// The path as text: an array's position in brackets (`data[3]`), any other key after a dot,
    /// a dictionary's numeric key too (`prices.5`).
    static func pathText(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue, key.stringValue != String(index) {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    /// What the body holds at `path`, redacted, and whether the path names a credential (by the
    /// model's names or the body's).
    private static func found(
        at path: [any CodingKey], in json: JSONValue?, _ redaction: Redaction, keyNames: ((String) -> String)?
    ) -> (text: String, isSecret: Bool) {
        // Invalid elsewhere, the body cannot be read as a whole to show the value.
        guard json != nil else {
            return ("a value that cannot be shown (the body is not valid JSON as a whole)", isSensitive(path, redaction))
        }
        let keys = bodyKeys(of: path, in: json, keyNames)
        let isSecret = isSensitive(path, redaction) || isSensitive(keys, redaction)
        var value: JSONValue? = json
        for key in keys {
            value = key.intValue.flatMap { value?[$0] } ?? value?[key.stringValue]
        }
        guard let value else { return ("nothing", isSecret) }
        // Reasons reach error descriptions and the hook, so credentials are redacted here too.
        if isSecret { return ("\(value.kindDescription) \(Redaction.placeholder)", true) }
        // Redacting and printing recurse once per level, and the server chooses the depth.
        guard Redaction.nests(value, atMost: Redaction.maximumParsedDepth) else {
            return ("\(value.kindDescription) nested too deep to show", false)
        }
        let text = Redaction.truncate(redaction.redact(value).description, limit: 100)
        return ("\(value.kindDescription) \(text)", false)
    }

    /// The coding path with each key as the body spells it: a key the body does not have is the
    /// member whose name `keyNames` turns into it (`user_id` for `userId`).
    private static func bodyKeys(of path: [any CodingKey], in json: JSONValue?, _ keyNames: ((String) -> String)?) -> [any CodingKey] {
        guard let keyNames else { return path }
        var value = json
        var keys: [any CodingKey] = []
        for key in path {
            var bodyKey = key
            if key.intValue == nil, case .object(let members)? = value, members[key.stringValue] == nil {
                // Only a name with the same letters can convert to the key: the conversion runs for
                // the first 64 of those alone, however many members a hostile body has.
                let letters = key.stringValue.lowercased().filter { $0 != "_" }
                let candidates = members.keys.filter { $0.lowercased().filter { $0 != "_" } == letters }
                if let name = candidates.sorted().prefix(64).first(where: { keyNames($0) == key.stringValue }) {
                    bodyKey = DynamicKey(name)
                }
            }
            keys.append(bodyKey)
            value = bodyKey.intValue.flatMap { value?[$0] } ?? value?[bodyKey.stringValue]
        }
        return keys
    }

    /// Whether the path goes through a member whose name marks a credential.
    private static func isSensitive(_ path: [any CodingKey], _ redaction: Redaction) -> Bool {
        path.contains { $0.intValue == nil && redaction.isSecret($0.stringValue) }
    }

    private static func typeName(_ type: Any.Type) -> String { String(describing: type) }

    /// Whether the decoder could not read the body at all: data corrupted at the top, with the
    /// parser's error as the cause.
    private static func isSyntaxErrorAtTop(_ error: DecodingError) -> Bool {
        guard case .dataCorrupted(let corrupted) = error else { return false }
        return corrupted.codingPath.isEmpty && corrupted.underlyingError != nil
    }

    private static func contextOf(_ error: DecodingError) -> DecodingError.Context? {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context), .dataCorrupted(let context):
            context
        @unknown default: nil
        }
    }

    private static func underlyingMessage(of error: DecodingError) -> String {
        if case .dataCorrupted(let context) = error {
            return (context.underlyingError.map { "\($0)" }) ?? context.debugDescription
        }
        return "\(error)"
    }
}

import Foundation

/// What an endpoint's own decoding step (``Endpoint/decoding(_:)-((DecodingInput)->Response)``) works with: the response,
/// and the configuration's decoder.
public struct DecodingInput: Sendable {
    /// The 2xx response to decode.
    public let response: TransportResponse
    /// The request that was answered: the method and URL.
    public let request: RequestSummary

    let bodyDecoder: BodyDecoder

    /// Decodes the body, or the value at a dotted key path inside it (`"data"`, `"page.items"`,
    /// `"results.0"`), with the configuration's decoder and its strategies.
    ///
    /// An empty body (a `204`) is `nil` for an `Optional`, as for an endpoint without a step.
    ///
    /// - Throws: the `DecodingError` of the decoder; coding paths start at the document's root.
    public func decode<T: Decodable>(_ type: T.Type = T.self, at keyPath: String? = nil) throws -> T {
        if response.body.isEmpty, let none = BodyDecoder.emptyBodyValue(of: T.self) { return none }
        return try bodyDecoder.decode(type, from: response.body, keyPath: keyPath)
    }

    /// The body as JSON.
    ///
    /// - Throws: a `DecodingError.dataCorrupted` when the body is not JSON.
    public func json() throws -> JSONValue {
        do {
            return try JSONValue(parsing: response.body)
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: [], debugDescription: "The given data was not valid JSON.", underlyingError: error))
        }
    }
}

/// Decodes bytes into a model, at an optional key path: with the library's own decoder
/// (``FastJSONDecoder``, the configuration's `JSONDecoder` strategies copied when the repository
/// was made), or with the `JSONDecoder` itself when the configuration asks for it.
struct BodyDecoder: Sendable {
    let jsonDecoder: JSONDecoder
    /// `nil` when the configuration asks for Foundation's decoder.
    let fast: FastJSONDecoder?

    /// What an empty body is for `type` without decoding: `nil` for an `Optional` (a `204` to a
    /// call that may have no answer); `.none` here for any other type, which needs a body.
    static func emptyBodyValue<T>(of type: T.Type) -> T? {
        guard let optional = T.self as? any ExpressibleByNilLiteral.Type else { return nil }
        return optional.init(nilLiteral: ()) as? T
    }

    init(jsonDecoder: JSONDecoder, usesFoundation: Bool = false) {
        self.jsonDecoder = jsonDecoder
        fast = usesFoundation || jsonDecoder.isSubclass ? nil : FastJSONDecoder(jsonDecoder)
    }

    /// Both decoders walk a key path the same way, so results do not depend on the choice: the value
    /// at the end is decoded as its parent container decodes a member (date, data, URL and decimal
    /// strategies apply; a `[String: Value]` keeps its keys under a key strategy), and a negative
    /// or missing index is `valueNotFound`.
    func decode<T: Decodable>(_ type: T.Type, from data: Data, keyPath: String?) throws -> T {
        let components = keyPath.map { $0.split(separator: ".").map(String.init) } ?? []
        if let fast { return try fast.decode(type, from: data, keyPath: components) }
        return try FastJSONKeyPathFallback<T>.decode(with: jsonDecoder, from: data, keyPath: components)
    }
}

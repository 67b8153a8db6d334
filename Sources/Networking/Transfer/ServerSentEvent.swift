import Foundation

/// One event of a `text/event-stream` response (server-sent events): what a
/// ``ServerSentEvents`` sequence yields.
///
/// The fields are those of the WHATWG specification's `MessageEvent`: the `event:` field's
/// ``type``, the ``data`` lines joined by line feeds, and the stream's last event ID when the
/// event arrived. Comments (heartbeats) and events without a `data` field are not delivered.
public struct ServerSentEvent: Sendable, Hashable {
    /// The `event:` field, or `"message"` when the event has none.
    public var type: String
    /// The event's `data:` lines, joined by `"\n"` (without a final one).
    public var data: String
    /// The last `id:` the stream set, at or before this event; `nil` when none was set or the
    /// last one was empty. A reconnection sends it as `Last-Event-ID`.
    public var id: String?

    /// Creates an event, as a stub transport's test or a custom parser needs.
    public init(type: String = "message", data: String, id: String? = nil) {
        self.type = type
        self.data = data
        self.id = id
    }

    /// The event's ``data`` decoded as JSON, as streaming APIs send each event (a completion's
    /// next tokens, a changed record).
    ///
    /// - Parameters:
    ///   - type: the model to decode.
    ///   - decoder: the decoder, with its strategies; by default one honouring a plain
    ///     `JSONDecoder`'s. Pass `FastJSONDecoder(configuration.jsonDecoder)` for the repository's.
    /// - Throws: the `DecodingError` that `JSONDecoder` would throw for the same data.
    public func decoded<T: Decodable>(as type: T.Type = T.self, using decoder: FastJSONDecoder = FastJSONDecoder()) throws -> T {
        try decoder.decode(type, from: Data(data.utf8))
    }
}

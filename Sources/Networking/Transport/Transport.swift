/// The one door to the network: sends a ``TransportRequest`` and returns the complete response.
///
/// Everything above it — request building, interceptors, status validation, decoding — is the
/// same whatever the transport, so a stub transport exercises the real pipeline.
///
/// A conforming type must:
/// - return every response the server sends, whatever its status (a 404 is a response, not an error);
/// - honour ``TransportRequest/timeout`` and fail with ``TransportError/timedOut`` past it;
/// - stop promptly and throw ``TransportError/cancelled`` when the calling task is cancelled;
/// - honour ``TransportRequest/security`` or fail with ``TransportError/pinningUnsupported(transport:)``;
/// - be safe to call from many tasks at once;
/// - give each `Set-Cookie` field of a response on its own (``HTTPHeaders/add(name:value:)``):
///   the cookie storage reads one cookie per field, since a joined value cannot always be split
///   back (a cookie's value may hold a comma).
///
/// A transport that wraps another (to log, to count) forwards its ``streamsBodies``: one that
/// leaves the default `false` gets no response sink, so the wrapped transport collects every
/// body in memory — a download or an endless stream (``ResponseChunks``, server-sent events)
/// is then held to the wrapped transport's `maximumResponseSize` and handed over only when it ends.
///
/// Redirects are the transport's to follow, or to return as they are; one that follows them
/// itself can do it as the built-in ones do with ``TransportRequest/redirected(by:)``, in a loop
/// bounded by a limit of its own (theirs is 10), giving each hop only the time left of the
/// request's ``TransportRequest/timeout``, and setting the final response's
/// ``TransportResponse/url`` to the last hop's URL (the session reads it to tell whether a 401
/// came from where its credential went).
///
/// Bodies stream both ways when the transport can: a request's ``RequestBody`` is read as it is
/// sent, and a response body goes to the request's ``TransportRequest/responseBodySink`` as it
/// arrives. A transport that cannot (``streamsBodies`` is `false`, the default) gets request
/// bodies it can read with ``RequestBody/inMemoryData`` when they are in memory, and the pipeline
/// hands its collected response bodies to the sink afterwards.
public protocol Transport: Sendable {
    /// Sends a request and waits for the complete response.
    ///
    /// - Throws: ``TransportError`` when no complete response was received.
    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse

    /// Whether the transport streams request bodies from files and streams, and response bodies
    /// to ``TransportRequest/responseBodySink``. Default `false`.
    var streamsBodies: Bool { get }
}

extension Transport {
    /// Not unless the transport says so.
    public var streamsBodies: Bool { false }
}

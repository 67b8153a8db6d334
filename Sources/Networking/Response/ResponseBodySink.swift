import Foundation

/// The status line and header fields of a response, before its body.
public struct ResponseHead: Sendable, Hashable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The URL that answered.
    public var url: URL?

    /// Creates a head.
    public init(statusCode: Int, headers: HTTPHeaders = [:], url: URL? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
    }
}

/// Where a response body goes while it arrives, instead of memory: a file being downloaded, or
/// a sequence of chunks a caller reads. Attach one to ``TransportRequest/responseBodySink``.
///
/// For each response head, the transport asks ``begin(_:canPause:resume:)`` whether the sink
/// takes the body; a sink usually takes 2xx bodies and lets error bodies be collected into the
/// ``TransportResponse`` as usual (so errors can be described). The transport then hands over
/// the body's bytes in order with ``receive(_:)``, on its own thread: keep it quick (writing to a
/// file is fine; waiting is not). The ``TransportResponse`` it returns has an empty body.
///
/// Several heads can come for one request (redirects followed by the transport, retries): each
/// `begin` starts the body anew. A transport that does not stream (a stub) collects the body
/// and then hands it over the same way, in pieces.
public protocol ResponseBodySink: Sendable {
    /// A response head arrived: `true` to receive its body through ``receive(_:)``.
    ///
    /// - Parameters:
    ///   - head: the status and header fields.
    ///   - canPause: whether the transport honours ``ResponseBodySinkStatus/paused`` (libcurl does;
    ///     URLSession does not, so the sink must take every chunk).
    ///   - resume: call it (from any thread) after returning `.paused`, when the sink can take bytes again.
    func begin(_ head: ResponseHead, canPause: Bool, resume: @escaping @Sendable () -> Void) -> Bool

    /// The next bytes of the body.
    func receive(_ bytes: UnsafeRawBufferPointer) -> ResponseBodySinkStatus
}

/// What a ``ResponseBodySink`` did with bytes it was given.
public enum ResponseBodySinkStatus: Sendable {
    /// It took them.
    case accepted
    /// It did not take them, and cannot now: the transport stops reading and gives the same bytes
    /// again after the sink calls its `resume` function. Only when `canPause` was `true`: a
    /// transport that cannot pause fails the transfer with ``TransportError/invalidRequest(_:)``
    /// instead of dropping the bytes.
    case paused
    /// It cannot take them (a disk error, a size limit): the transfer stops with this error.
    case failed(TransportError)
}

extension ResponseBodySinkStatus {
    /// The failure the status means to a transport that cannot pause, where `.paused` would
    /// drop the bytes; `nil` for `.accepted`.
    var failureWithoutPause: TransportError? {
        switch self {
        case .accepted: nil
        case .failed(let error): error
        case .paused:
            .invalidRequest("the response body sink paused, but this transport cannot pause (canPause was false): it must take every chunk")
        }
    }
}

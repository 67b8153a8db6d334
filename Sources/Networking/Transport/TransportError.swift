/// Why a ``Transport`` could not deliver a complete response.
///
/// The repository turns each case into the matching ``RepositoryError`` with the request attached.
public enum TransportError: Error, Sendable, Hashable {
    /// The connection could not be made or was lost; see ``NetworkFailure``.
    case network(NetworkFailure)
    /// No complete response arrived within the request's timeout.
    case timedOut
    /// The calling task was cancelled.
    case cancelled
    /// The TLS handshake failed; see ``TLSFailure``.
    case tls(TLSFailure)
    /// The server's key matches none of the pinned keys; nothing was sent.
    case pinMismatch(host: String)
    /// The request asks for TLS this transport cannot provide (pins, a certificate authority file
    /// or a client certificate): `transport` names it, and may say why.
    case pinningUnsupported(transport: String)
    /// The response body is larger than the transport accepts.
    case responseTooLarge(limit: Int)
    /// The server's answer is not valid HTTP.
    case invalidResponse(String)
    /// The request cannot be sent as given (for example a body on a `GET` where the transport refuses one).
    case invalidRequest(String)
}

/// Why no connection carried the request: the distinct faces of "no network" on Linux, where
/// an offline machine shows up as refused, unresolvable or dropped connections.
public enum NetworkFailure: Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens at the host and port (or a firewall refused).
    case connectionRefused
    /// The host name could not be resolved.
    case hostNotFound
    /// The connection dropped before the response was complete.
    case connectionLost
    /// The system reports no usable network.
    case notConnected
    /// A proxy would not open the way to the server: an HTTP proxy's status for the tunnel
    /// (`CONNECT`) — 407 when it wants credentials it was not given, 403 when its rules forbid
    /// the server, 502 when it cannot reach it — or, from a SOCKS5 proxy, 407 for refused
    /// credentials and 403 for a connection its rules forbid. The server never saw the request.
    case proxyRefused(status: Int)
    /// Another connection failure, with the transport's explanation.
    case other(String)

    public var description: String {
        switch self {
        case .connectionRefused: "the connection was refused"
        case .hostNotFound: "the host name could not be resolved"
        case .connectionLost: "the connection was lost before the response was complete"
        case .notConnected: "there is no network connection"
        case .proxyRefused(let status):
            "the proxy refused to open the connection to the server (status \(status)\(status == 407 ? ": it wants credentials" : ""))"
        case .other(let message): message
        }
    }
}

/// Why a TLS handshake failed, other than a pin mismatch.
public enum TLSFailure: Sendable, Hashable, CustomStringConvertible {
    /// The certificate chain does not lead to a trusted authority (self-signed, unknown CA).
    case untrustedCertificate(String)
    /// The certificate has expired or is not valid yet.
    case expiredCertificate(String)
    /// The certificate is not valid for the host name that was asked for.
    case hostnameMismatch(String)
    /// The handshake failed for another reason.
    case handshakeFailed(String)

    public var description: String {
        switch self {
        case .untrustedCertificate(let detail): "the server's certificate is not trusted (\(detail))"
        case .expiredCertificate(let detail): "the server's certificate has expired or is not yet valid (\(detail))"
        case .hostnameMismatch(let detail): "the server's certificate does not match the host name (\(detail))"
        case .handshakeFailed(let detail): "the TLS handshake failed (\(detail))"
        }
    }
}

import Foundation

extension TransportRequest {
    /// The request a redirect answer asks for, by the rules every transport of the library
    /// follows (see `LibcurlTransport` and `URLSessionTransport`): 307 and 308 keep the method
    /// and body, 303 (and 301 or 302 to a `POST`, unless ``keepsMethodOnRedirect`` and the same
    /// resource moved) becomes a body-less `GET` (the fields that described the body go with
    /// it), and a relative `Location` is resolved against ``url``. `Authorization` and `Cookie`
    /// are dropped when the scheme, host or port changes, except for a move from `http` to
    /// `https` on the same host and default ports; other fields named like a credential
    /// (`X-Api-Key`, `X-Auth-Token`) only for a host that is neither the same nor under it, or a
    /// move to plain `http`. For a redirect the transport did not follow itself — one inside a
    /// batch answer, or in a ``Transport`` of your own — so it is followed the same way.
    ///
    /// Cookies are the caller's: a ``cookieStorage`` is neither filled nor read here.
    ///
    /// - Returns: `nil` when `response` is not a redirect to follow: not 301, 302, 303, 307 or
    ///   308, without a `Location`, or a 307 or 308 to a request with a streamed body (read once,
    ///   it cannot go again).
    /// - Throws: ``TransportError/invalidResponse(_:)`` for a `Location` that is not an `http` or
    ///   `https` URL, one that would take a pinned request (or one with a client certificate)
    ///   off `https`, or one that would send the request's body again from `https` to `http`.
    public func redirected(by response: TransportResponse) throws(TransportError) -> TransportRequest? {
        try RedirectPolicy(maximumRedirects: 1).nextRequest(after: response, to: self, redirectsSoFar: 0)
    }

    /// Whether a redirect from ``url`` to `target` keeps `Authorization` and `Cookie`, as
    /// ``redirected(by:)`` and the built-in transports decide: the same scheme, host and port, or
    /// the same host moved from `http` to `https` on their default ports. A request that sends
    /// the next hop itself (a batch item's redirect) signs it only then.
    public func keepsCredentials(redirectedTo target: URL) -> Bool {
        RedirectPolicy.sameOrigin(url, target) || RedirectPolicy.isUpgradeToHTTPS(url, target)
    }
}

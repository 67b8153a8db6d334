import Foundation

/// How every transport follows redirects, so that they all behave the same whatever their engine
/// would do by itself (FoundationNetworking drops the body on 307; libcurl keeps `Authorization`
/// across hosts unless told otherwise).
///
/// The rules, after RFC 9110 §15.4 and what browsers do:
/// - 301 and 302 turn `POST` into `GET` without a body — unless the request
///   ``TransportRequest/keepsMethodOnRedirect`` and the redirect names the same path and query
///   at another address (see there); other methods are kept with their body (but see `https`
///   to `http` below);
/// - 303 turns every method but `HEAD` into `GET` without a body;
/// - 307 and 308 keep the method and the body;
/// - a body is never sent again from `https` to `http`, whatever the status: the redirect fails
///   with ``TransportError/invalidResponse(_:)``;
/// - 300, 304, 305, 306 and a redirect without `Location` are delivered as they are;
/// - a relative `Location` is resolved against the URL that answered;
/// - the request's own `Authorization` and `Cookie` are dropped when the scheme, host or port changes (but for an
///   upgrade from `http` to `https` on the same host and default ports), and every
///   other field named like a credential (`X-Api-Key`, `X-Auth-Token`, a `Proxy-Authorization`
///   of the request's own, which goes to the origin: the built-in names logs redact, not the
///   configuration's `secretFields`) when the host changes to one that is not
///   under it (`eu.api.example.com` is under `api.example.com`);
/// - with a ``TransportRequest/cookieStorage``, each redirect's `Set-Cookie` fields are kept
///   (the final answer's are the caller's, the repository's cookie step) and the next hop's
///   `Cookie` is chosen from the storage for its URL;
/// - a 307 or 308 to a request with a streamed body (read once) is not followed: it is the answer;
/// - only `http` and `https` are followed, and a request with pinned keys or a client
///   certificate never leaves `https`;
/// - more than ``maximumRedirects`` hops fail with ``TransportError/invalidResponse(_:)``.
///
/// The caller's timeout spans every hop: the transports give each hop only the time left.
struct RedirectPolicy: Sendable {
    /// The most redirects followed for one request.
    let maximumRedirects: Int

    /// The statuses that are followed when they carry a `Location`.
    static let followedStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Sends `request` and follows redirects with `send` until a final response.
    func follow(
        _ request: TransportRequest,
        send: (TransportRequest) async throws(TransportError) -> TransportResponse
    ) async throws(TransportError) -> TransportResponse {
        var current = request
        var redirects = 0
        while true {
            let response = try await send(current)
            // The final answer's cookies are the caller's to keep (the repository's cookie step).
            guard var next = try nextRequest(after: response, to: current, redirectsSoFar: redirects) else {
                return response
            }
            current.cookieStorage?.store(from: response, of: current)
            // Cookies the storage chose are chosen again for the next hop's URL; a `Cookie` of
            // someone else's (the caller's, an interceptor's) goes on as it is, unless it was
            // dropped on the way to another origin.
            if let storage = next.cookieStorage,
                next.headers["Cookie"] == nil || next.headers["Cookie"] == next.cookieHeaderFromStorage
            {
                let chosen = storage.headerValue(for: next.url)
                next.headers["Cookie"] = chosen
                next.cookieHeaderFromStorage = chosen
            }
            redirects += 1
            current = next
        }
    }

    /// The request to send after `response` answered `request`, or `nil` when the response is final.
    ///
    /// - Throws: ``TransportError/invalidResponse(_:)`` for one redirect too many, a `Location`
    ///   that is not a URL, a scheme other than `http`/`https`, or a pinned request sent to `http`.
    func nextRequest(after response: TransportResponse, to request: TransportRequest, redirectsSoFar: Int)
        throws(TransportError) -> TransportRequest?
    {
        guard Self.followedStatuses.contains(response.statusCode), let location = response.headers["Location"] else {
            return nil
        }
        guard redirectsSoFar < maximumRedirects else {
            throw .invalidResponse(
                "too many redirects: more than \(maximumRedirects), the last from \(Redaction.standard.url(request.url)) to \(Redaction.standard.urlText(location))"
            )
        }
        let trimmed = location.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, let target = URL(string: trimmed, relativeTo: request.url)?.absoluteURL,
            target.host != nil
        else {
            throw .invalidResponse("the redirect location \"\(Redaction.standard.urlText(location))\" is not a valid URL")
        }
        let scheme = target.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https" else {
            throw .invalidResponse("refusing to follow a redirect to \(scheme)://: only http and https are followed")
        }
        if request.security.requiresPinning || request.security.clientCertificate != nil, scheme != "https" {
            let kind = request.security.requiresPinning ? "a pinned request" : "a request with a client certificate"
            throw .invalidResponse("refusing to follow a redirect of \(kind) to \(Redaction.standard.url(target)): it is not https")
        }

        var next = request
        next.url = target
        let movedElsewhere = request.keepsMethodOnRedirect && Self.sameResource(request.url, target)
        if Self.changesToGet(status: response.statusCode, method: request.method, keepingMethod: movedElsewhere) {
            next.method = .get
            next.body = nil
            // The fields that described the body go with it (RFC 9110 §15.4): a digest or an
            // encoding left on a GET without a body would have a server refuse the GET.
            for name in Self.bodyFields { next.headers[name] = nil }
        }
        // A streamed body was read as it went out and cannot go again: the 307 or 308 is the
        // answer (its `Location` says where to send the call), not an error without it.
        if next.body?.isRepeatable == false { return nil }
        // A body sent over https (a token request's secret, a write) is not sent again in the
        // clear: a 307 or 308 to http, or a write's move, fails instead.
        if next.body != nil, Self.isDowngrade(request.url, target) {
            throw .invalidResponse(
                "refusing to send the body of \(request.method.rawValue) \(Redaction.standard.url(request.url)) again over http to \(Redaction.standard.url(target)): a redirect from https to http"
            )
        }
        // A `Host` the caller set names the first server: sent to another, it would reach the
        // wrong site (curl drops it when the host changes; here any other origin does).
        if next.headers.contains("Host"), !Self.sameOrigin(request.url, target) { next.headers["Host"] = nil }
        // Who the client is goes where its credential fields go: to the same host or one under it.
        if next.security.clientCertificate != nil, !Self.sameHostOrUnder(request.url, target) {
            next.security.clientCertificate = nil
        }
        if !request.keepsCredentials(redirectedTo: target) {
            next.headers["Authorization"] = nil
            next.headers["Cookie"] = nil
            // Other fields named like a credential (`X-Api-Key`, `X-Auth-Token`) go on to the same
            // host or a host under it (a regional `eu.api.example.com`), never to another one. So
            // does a `Proxy-Authorization` of the request's own: the transports send it to the
            // origin (through a tunnel, or with no proxy at all), not to the proxy, whose
            // credential is `ProxyServer`'s. None goes from https to http, where anyone on the
            // way reads it.
            if !Self.sameHostOrUnder(request.url, target) || Self.isDowngrade(request.url, target) {
                for name in Set(next.headers.map(\.name)) where Redaction.standard.isSecret(name) {
                    next.headers[name] = nil
                }
            }
        }
        return next
    }

    /// Whether a redirect leaves https for plain http.
    static func isDowngrade(_ from: URL, _ to: URL) -> Bool {
        from.scheme?.lowercased() == "https" && to.scheme?.lowercased() == "http"
    }

    /// The fields that describe a request's body, removed when a redirect drops the body.
    static let bodyFields = [
        "Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Content-Location", "Content-MD5",
        "Content-Digest", "Repr-Digest", "Transfer-Encoding",
    ]

    /// Whether the redirect turns the request into a `GET` without a body.
    static func changesToGet(status: Int, method: HTTPMethod, keepingMethod: Bool) -> Bool {
        switch status {
        case 301, 302: method == .post && !keepingMethod
        case 303: method != .head
        default: false
        }
    }

    /// Whether `target` names `source`'s resource at another address: the same path (but for a
    /// trailing slash) and query at another scheme, host or port, or the same origin with only a
    /// trailing slash added or removed. A redirect to anything else after a write — the same URL
    /// included — is taken as Post/Redirect/Get: the write was done.
    static func sameResource(_ source: URL, _ target: URL) -> Bool {
        let sourcePath = source.path(percentEncoded: true)
        let targetPath = target.path(percentEncoded: true)
        func trimmed(_ path: String) -> Substring { path.hasSuffix("/") ? path.dropLast() : Substring(path) }
        // A URL ending in "?" has an empty query, one without it none: the same resource.
        guard trimmed(sourcePath) == trimmed(targetPath),
            source.query(percentEncoded: true) ?? "" == target.query(percentEncoded: true) ?? ""
        else { return false }
        return !sameOrigin(source, target) || sourcePath != targetPath
    }

    /// Whether `target`'s host is `source`'s, or a host under it (`eu.api.example.com` under
    /// `api.example.com`).
    static func sameHostOrUnder(_ source: URL, _ target: URL) -> Bool {
        let from = source.host?.lowercased() ?? ""
        let to = target.host?.lowercased() ?? ""
        return !from.isEmpty && (to == from || to.hasSuffix("." + from))
    }

    /// Whether `target` is `source` moved from `http` to `https` on the same host, both on their
    /// default ports: what was sent in clear now goes encrypted, so credentials may follow (as
    /// Python's requests lets them), and a signed write moved to `https` is not refused for want
    /// of its token.
    static func isUpgradeToHTTPS(_ source: URL, _ target: URL) -> Bool {
        let (from, to) = (origin(of: source), origin(of: target))
        return from.scheme == "http" && from.port == 80 && to.scheme == "https" && to.port == 443 && from.host == to.host
    }

    /// Whether two URLs have the same scheme, host and port (default ports made explicit).
    static func sameOrigin(_ first: URL, _ second: URL) -> Bool {
        origin(of: first) == origin(of: second)
    }

    /// A URL's scheme and host, lowercased, and its port, the scheme's default when it names none.
    private static func origin(of url: URL) -> (scheme: String, host: String, port: Int) {
        let scheme = url.scheme?.lowercased() ?? ""
        return (scheme, url.host?.lowercased() ?? "", url.port ?? (scheme == "https" ? 443 : 80))
    }
}

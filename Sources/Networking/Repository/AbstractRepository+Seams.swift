import Foundation

/// The steps of a call, one by one, for features built on the library (a batch client, an
/// offline queue) that prepare requests, send them their own way, and read answers as the
/// repository would.
extension AbstractRepository {
    /// The endpoint as a call of this repository sends it: its route applied (path, method,
    /// name, headers, whether it needs the session, timeout, retry policy, options); an endpoint
    /// made without a route comes back as it is.
    ///
    /// For features that keep a call to send later, or in a batch: what they read of an
    /// endpoint (``Endpoint/requiresSession``, say) must be the route's, not the defaults of the
    /// endpoint made by name. A resolved endpoint has no route left, so it resolves to itself;
    /// ``makeRequest(for:)`` and `interpret` resolve by themselves. A feature sending a call its
    /// own way builds the call's ``RequestContext`` from it: its `requiresSession`, `name` and
    /// `options`, with the repository's `sessionManager` as the session.
    ///
    /// - Throws: ``RepositoryError/invalidRequest(reason:request:)`` for an unknown route, an
    ///   object without a route, a path variable that cannot be used, or a raw route called
    ///   without a body.
    public func resolve<Response>(_ endpoint: Endpoint<Response>) throws(RepositoryError) -> Endpoint<Response> {
        try configuration.routes.resolve(endpoint, in: configuration)
    }

    /// The request an endpoint makes — its route resolved, its URL, headers and body built —
    /// without sending it. The session's `Authorization` is not in it: the session signs a
    /// request when it goes through the chain.
    ///
    /// - Throws: the errors a call fails with before anything is sent (``RepositoryError/invalidRequest(reason:request:)``,
    ///   ``RepositoryError/invalidURL(reason:)``, ``RepositoryError/invalidConfiguration(reason:)``);
    ///   `invalidRequest` too for an endpoint with ``Endpoint/withContentDigests(_:)``, whose
    ///   digests are computed as the repository sends it and cannot be part of a request made here.
    public func makeRequest<Response>(for endpoint: Endpoint<Response>) throws(RepositoryError) -> TransportRequest {
        let request = try builder.build(configuration.routes.resolve(endpoint, in: configuration))
        guard endpoint.contentDigests.isEmpty else {
            throw .invalidRequest(
                reason:
                    "content digests are computed when the repository sends the endpoint itself; a request made with makeRequest cannot carry them",
                request: request.summary)
        }
        return request
    }

    /// Sends a prepared request through this repository's whole chain — retries, the session
    /// (which signs it), interceptors, logging, the transport — and returns the response as it
    /// came, whatever its status.
    ///
    /// - Parameters:
    ///   - request: the request to send, as ``makeRequest(for:)`` made it (or changed since).
    ///   - context: what the interceptors see: whether it needs the session, its name
    ///     and options.
    ///
    /// The repository's TLS requirements (``NetworkingConfiguration/security``) replace the
    /// request's one by one, where it has them: its pins, its certificate authority, its client
    /// certificate. So a request made by hand, or kept from before the app changed its pins, is
    /// never sent to a pinned API unpinned, with the session's token, and a request the offline
    /// queue read back from disk (which keeps no client certificate) presents the repository's.
    /// A configuration made invalid since (a pin file that cannot be read, say) fails the call with
    /// ``RepositoryError/invalidConfiguration(reason:)`` before it is sent, as every call does: its
    /// security could be missing a part. An option in `context` that is required and that no
    /// interceptor of the repository handles fails the call with
    /// ``RepositoryError/invalidRequest(reason:request:)`` before it is sent. The request counts
    /// as activity (``NetworkingConfiguration/activity``) while it is in flight, as any call does.
    public func send(_ request: TransportRequest, context: RequestContext) async -> Result<TransportResponse, RepositoryError> {
        do throws(RepositoryError) {
            try configuration.validate()
        } catch {
            return .failure(error)
        }
        // A required option no interceptor handles fails here as in any call, before sending.
        if let problem = pipeline.unhandledOption(in: context.options, name: context.name) {
            return .failure(.invalidRequest(reason: problem, request: request.summary))
        }
        var request = request
        // The library's to set, and only for a body it staged: a caller's value names no such file.
        var context = context
        context.options.remove(StagedBodyFileKey.self)
        let security = configuration.security
        if security.requiresPinning { request.security.pinnedPublicKeys = security.pinnedPublicKeys }
        if let authorities = security.certificateAuthorityFile { request.security.certificateAuthorityFile = authorities }
        if let client = security.clientCertificate { request.security.clientCertificate = client }
        // Counted as any call is: a batch or an offline flush shows as activity too.
        let activity = configuration.activity
        let call = ActivityEvent.Call(id: CallIdentifier.next(), name: context.name, preventsUserInteraction: false)
        activity.begin(call)
        defer { activity.end(call) }
        do throws(RepositoryError) {
            return .success(try await pipeline.send(request, context: context))
        } catch {
            return .failure(error.attempted(context.attempt, sent: context.record.sent))
        }
    }

    /// Whether an interceptor of this repository handles `key` (lists it in
    /// ``Interceptor/handledOptions``): a feature that sends requests for its callers (an
    /// offline queue) adds an option that must be handled only where it will be, rather than
    /// have the call refused.
    public func handles(_ key: any RequestOptionKey.Type) -> Bool {
        pipeline.handledOptions.contains(ObjectIdentifier(key))
    }

    /// Tells the interceptors of this repository that are ``ExchangeObserver``s, in the chain's
    /// order, about an exchange made for a call outside the chain: an item of a batch request (a
    /// `BatchClient` reports each; so does an offline queue flushing through a batch endpoint). A
    /// response cache drops the stored answers the write made stale, and the cached routes its
    /// options name. See ``ExchangeObserver/observe(_:answeredBy:context:)`` for what observers get.
    ///
    /// - Parameters:
    ///   - request: the call's own request (not the batch request that carried it).
    ///   - response: its answer, whatever its status.
    ///   - context: the context the call would have had in the chain: its name and options
    ///     (a route's ``RouteCacheSettingsKey``, say). A required option no observer handles is
    ///     not an error here: the exchange happened already.
    public func report(_ request: TransportRequest, answeredBy response: TransportResponse, context: RequestContext) async {
        let context = context.runBy(secretNames: pipeline.secretNames, defaultHeaders: pipeline.defaultHeaders)
        for case let observer as any ExchangeObserver in pipeline.interceptors {
            await observer.observe(request, answeredBy: response, context: context)
        }
    }

    /// Whether this repository's chain holds `interceptor` itself (the same object), whether it
    /// came from the configuration's `interceptors` or the initializer's: a feature that acts for
    /// the repositories whose chain holds it (an offline queue connecting itself) asks this, since
    /// the configuration lists only part of the chain.
    public func chainHolds(_ interceptor: any Interceptor & AnyObject) -> Bool {
        pipeline.interceptors.contains { ($0 as AnyObject) === interceptor }
    }

    /// Whether a call must go through this repository's chain on its own (``send(_:context:)``)
    /// rather than be carried outside it, in a batch request: an ``ExchangeObserver`` of the chain
    /// asks for it (a response cache, for a call that reads it), or `context` carries a required
    /// option no interceptor handles, which ``send(_:context:)`` refuses as any call is refused.
    ///
    /// - Parameters:
    ///   - request: the call's own request, as ``makeRequest(for:)`` made it.
    ///   - context: the context the call would have in the chain: its name and options.
    public func requiresChain(_ request: TransportRequest, context: RequestContext) -> Bool {
        if pipeline.unhandledOption(in: context.options, name: context.name) != nil { return true }
        let context = context.runBy(secretNames: pipeline.secretNames, defaultHeaders: pipeline.defaultHeaders)
        for case let observer as any ExchangeObserver in pipeline.interceptors where observer.requiresChain(request, context: context) {
            return true
        }
        return false
    }

    /// Reads a response as the answer to `endpoint`, exactly as ``performRequest(_:)-3hmh1``
    /// would: a 401 or another non-2xx status becomes the matching error (custom errors
    /// included), a 2xx body is decoded (key path, decoding step, mapping step), and failures
    /// reach the decode-error hook.
    ///
    /// - Parameters:
    ///   - response: the answer, however it arrived (one item of a batch, say).
    ///   - request: the request it answers, for errors and the hook.
    ///   - endpoint: the endpoint the request was made from: its custom errors, key path and
    ///     decoding steps.
    public func interpret<T: Decodable & Sendable>(_ response: TransportResponse, to request: TransportRequest, for endpoint: Endpoint<T>)
        -> Result<T, RepositoryError>
    {
        let resolved: Endpoint<T>
        do {
            resolved = try resolve(endpoint)
            try checkMapping(of: resolved, decoding: T.self)
            try validate(response, to: request, endpoint: resolved)
            return .success(try decoded(resolved, from: response, request: request.summary))
        } catch {
            return .failure(error)
        }
    }

    /// Reads a response as the answer to an endpoint whose body is ignored: its status counts,
    /// and the endpoint's own ``Endpoint/decoding(_:)-((DecodingInput)->Response)`` check of the body when it has one, as
    /// when the repository sends it.
    public func interpret(_ response: TransportResponse, to request: TransportRequest, for endpoint: Endpoint<Void>)
        -> Result<Void, RepositoryError>
    {
        do {
            let resolved = try resolve(endpoint)
            try validate(response, to: request, endpoint: resolved)
            try checked(resolved, response: response, request: request.summary)
            return .success(())
        } catch {
            return .failure(error)
        }
    }
}

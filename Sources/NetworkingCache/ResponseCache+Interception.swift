import Foundation
import Networking

extension ResponseCache {
    /// Answers a request from storage, or sends it on and stores the answer (see ``ResponseCache``).
    ///
    /// - Throws: what the rest of the chain throws — except a connectivity failure when a stale
    ///   answer may stand in — or `RepositoryError.cancelled(_:)` when the calling
    ///   task is cancelled while it waits for an exchange shared with other callers.
    public func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        let call = Call(request: request, context: context, cache: self)
        guard request.method == .get else {
            if call.isCacheOnly { return Self.miss(for: request, reason: "\(request.method) is never answered from the cache") }
            let response = try await next(request)
            if invalidates(after: response, call: call) { await storing { self.invalidate(after: response, call: call) } }
            return response
        }
        guard let key = call.key else {
            if call.isCacheOnly {
                let reason = call.policy.findsNothing ? "its time to live of 0 turns caching off" : "the call cannot use the cache"
                return Self.miss(for: request, reason: reason)
            }
            let response = try await next(request)
            if invalidates(after: response, call: call) { await storing { self.invalidateRoutes(after: response, call: call) } }
            return response
        }
        let now = configuration.clock.now()
        let entry = lookup(key, headers: request.headers)
        switch LookupDecision.decide(entry: entry, policy: call.policy, requestDirectives: call.requestDirectives, now: now) {
        case .serve(let source):
            if let entry { return entry.response(source: source, age: Freshness(of: entry, now: now).age, url: request.url) }
            return try await exchange(call, key: key, entry: nil, conditional: [:], next: next)
        case .miss:
            return Self.miss(for: request, reason: "no stored answer can be used")
        case .fetch(let conditional):
            return try await exchange(call, key: key, entry: entry, conditional: conditional, next: next)
        }
    }

    /// Drops what an exchange made outside the chain (a batch item) made stale, as ``intercept(_:context:next:)`` would have after its answer; the
    /// answer itself is not stored.
    public func observe(_ request: TransportRequest, answeredBy response: TransportResponse, context: RequestContext) async {
        let call = Call(request: request, context: context, cache: self)
        if invalidates(after: response, call: call) { await storing { self.invalidate(after: response, call: call) } }
    }

    /// Whether a call reads the cache, so that only the chain serves it as it asks: a cache-only
    /// call (of any method: a write is then a miss, never sent), and a `GET` the cache can key
    /// with a time to live or a reload. Other calls may go in a batch request; their answers are
    /// then neither served from the cache nor stored.
    public func requiresChain(_ request: TransportRequest, context: RequestContext) -> Bool {
        let call = Call(request: request, context: context, cache: self)
        if call.isCacheOnly { return true }
        return call.key != nil && (call.policy.mode == .reload || call.policy.timeToLive != nil)
    }

    /// What an answer makes stale. RFC 9111 §4.4: a write (any unsafe method) answered with a
    /// non-error status makes stored reads of its URL obsolete — everybody's, since it changed
    /// the resource, not one user's view of it — and of the URLs its Location and
    /// Content-Location name on the same origin (a POST that created or changed the resource it
    /// points to). Then the routes the call names, for its discriminator, after a success.
    private func invalidate(after response: TransportResponse, call: Call) {
        let request = call.request
        if Self.isUnsafe(request.method), (200..<400).contains(response.statusCode) {
            let resources = Set(
                Self.invalidatedURLs(by: response, of: request).map { StoreName.tag(forResource: CacheKey.resource(of: $0)) })
            remove { resources.contains($0.resource) }
        }
        invalidateRoutes(after: response, call: call)
    }

    /// Whether ``invalidate(after:call:)`` removes anything after this answer, so that an answer
    /// that makes nothing stale (most) costs no hop to a disk thread.
    private func invalidates(after response: TransportResponse, call: Call) -> Bool {
        (Self.isUnsafe(call.request.method) && (200..<400).contains(response.statusCode))
            || (response.isSuccess && !call.policy.invalidatesRouteNames.isEmpty)
    }

    /// Whether a method may change its resource (RFC 9110 §9.2.1: any but the safe ones).
    private static func isUnsafe(_ method: HTTPMethod) -> Bool {
        ![HTTPMethod.get, HTTPMethod.head, HTTPMethod("OPTIONS"), HTTPMethod("TRACE")].contains(method)
    }

    /// ``exchange(_:key:entry:conditional:escapingNext:)`` with the chain's `next`, which the
    /// protocol gives as a non-escaping closure. The exchange may run it in a task shared with
    /// other callers; ``RequestCoalescer`` waits for that task before this call returns, so `next`
    /// never outlives the call.
    private func exchange(_ call: Call, key: CacheKey, entry: CacheEntry?, conditional: HTTPHeaders, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        try await withoutActuallyEscaping(next) { (next) async throws(RepositoryError) -> TransportResponse in
            try await exchange(call, key: key, entry: entry, conditional: conditional, escapingNext: next)
        }
    }

    /// What one call asks of the cache.
    struct Call: Sendable {
        let request: TransportRequest
        let policy: EffectivePolicy
        let requestDirectives: CacheControl
        let discriminator: String?
        /// Whether the routes the call names are dropped for every discriminator: a call pinned
        /// to a user who logged out since, under an app's discriminator.
        let invalidatesForEverybody: Bool
        /// The discriminator now: a user who logged out while the request was under way (another
        /// may have logged in and signed it) leaves the answer unstored.
        let currentDiscriminator: @Sendable () -> String?
        /// Whether, once the request was signed, another user's session signed it than the one
        /// logged in when the call was keyed: a switch of users and back meanwhile leaves
        /// ``currentDiscriminator`` unchanged, with the session's identity as the key or an
        /// app's discriminator.
        let signedByAnother: @Sendable () -> Bool
        /// Whether the request leaves with credentials: signed by the session, or its own (see
        /// ``CacheKey/credential(of:)``).
        let isAuthorized: Bool
        let isSigned: Bool
        /// Whether the repository running the call names a field a credential (its configuration's
        /// `secretFields` too).
        let isSecret: @Sendable (String) -> Bool
        /// The key, or `nil` when the call cannot use the cache at all.
        let key: CacheKey?

        var isCacheOnly: Bool { policy.mode == .cacheOnly || requestDirectives.onlyIfCached }

        /// Whether nothing says whose answer it is when an app's own step after the cache signs
        /// the request: no session signed the call, and no discriminator names the user.
        var hasNoOwner: Bool { !isSigned && discriminator == nil }

        init(request: TransportRequest, context: RequestContext, cache: ResponseCache) {
            self.request = request
            policy = EffectivePolicy(
                options: context.options, servesStaleByDefault: cache.configuration.servesStaleOnConnectivityFailure)
            requestDirectives = CacheControl(request.headers, isRequest: true)
            let configured = cache.configuration.discriminator
            let currentDiscriminator = { @Sendable in configured.map { $0(context) } ?? context.session?.sessionIdentity }
            var discriminator = currentDiscriminator()
            // Whose call it is, when the caller pins it (``SessionIdentityKey``: an offline queue's
            // flush, a batch's items): the session may name someone else by now. Such a call, when
            // signed, neither reads nor stores an answer (it will not be signed anyway); what it
            // changed is dropped for its user — for everybody under an app's discriminator, which
            // cannot be asked about a user who is gone.
            let pinned = context.options[SessionIdentityKey.self]
            let pinnedToAnother = pinned.map { $0 != context.session?.sessionIdentity } ?? false
            if let pinned, configured == nil { discriminator = pinned }
            self.discriminator = discriminator
            invalidatesForEverybody = pinnedToAnother && configured != nil
            self.currentDiscriminator = currentDiscriminator
            // With nobody named when the call was keyed (a session that names its user only as it
            // signs), an app's discriminator alone says whose answer it is.
            let keyedFor = context.session?.sessionIdentity
            signedByAnother = { @Sendable in
                guard let keyedFor, let signer = context.signedSessionIdentity else { return false }
                return signer != keyedFor
            }
            isSigned = context.requiresSession && context.session != nil
            let isSecret = { @Sendable (name: String) in context.isSecretFieldName(name) }
            self.isSecret = isSecret
            let credential = CacheKey.credential(of: request, isSecret: isSecret)
            isAuthorized = isSigned || credential != nil
            let usable =
                request.method == .get && policy.mode != .bypass && !policy.findsNothing && request.responseBodySink == nil
                && !(pinnedToAnother && context.requiresSession)
                && !request.headers.contains("Range") && !request.headers.contains("If-None-Match")
                && !request.headers.contains("If-Modified-Since") && !request.headers.contains("If-Match")
                && !request.headers.contains("If-Unmodified-Since")
                // Nobody is logged in, or the session does not say who: the answer has no owner.
                && !(isSigned && discriminator == nil)
            key =
                usable
                ? CacheKey(
                    method: request.method, url: request.url, routeName: context.name, discriminator: discriminator,
                    ignoresQuery: policy.ignoresQueryParameters, credential: credential,
                    secretFields: CacheKey.secretFields(of: request, isSecret: isSecret)) : nil
        }
    }

    /// Sends the request (conditionally when `conditional` is not empty) — shared with concurrent
    /// identical calls — and handles the answer.
    private func exchange(
        _ call: Call, key: CacheKey, entry: CacheEntry?, conditional: HTTPHeaders, escapingNext next: @escaping InterceptorNext
    ) async throws(RepositoryError) -> TransportResponse {
        var request = call.request
        for field in conditional { request.headers[field.name] = field.value }
        let outgoing = request
        let send = { @Sendable () async throws(RepositoryError) -> TransportResponse in
            try await self.fetch(outgoing, call: call, key: key, entry: entry, sentConditionally: !conditional.isEmpty, next: next)
        }
        guard configuration.coalescesRequests else { return try await send() }
        let identity = RequestCoalescer.Identity(request: outgoing, isSigned: call.isSigned, key: key, policy: call.policy)
        return try await coalescer.run(
            identity, cancelled: .cancelled(ErrorContext(request: call.request.summary)), operation: send,
            isShareable: { response in
                // With nothing saying whose answer it is, another caller's request may carry
                // another user's credential.
                !(call.hasNoOwner
                    && VaryRule.credentialAddedAfterTheCache(
                        seen: call.request.headers, sent: response.requestHeaders, isSecret: call.isSecret))
                    && VaryRule.isShareable(response, seen: call.request.headers, keyKeepsUsersApart: call.discriminator != nil)
            })
    }

    /// One exchange with the server and what follows: a 304 refreshes the stored answer, a new
    /// answer is stored when it may be, a connectivity failure falls back on a stale answer when allowed.
    private func fetch(
        _ outgoing: TransportRequest, call: Call, key: CacheKey, entry: CacheEntry?, sentConditionally: Bool,
        next: @escaping InterceptorNext
    ) async throws(RepositoryError) -> TransportResponse {
        let clock = configuration.clock
        // Taken before the request: a removal of this key from now on voids the answer.
        let ticket = pendingStores.begin(key.storeName)
        defer { pendingStores.end(ticket) }
        let requestDate = clock.now()
        let response: TransportResponse
        do {
            response = try await next(outgoing)
        } catch {
            if error.isConnectivityFailure, let entry, LookupDecision.mayServeStale(entry, policy: call.policy) {
                return entry.response(source: .stale, age: Freshness(of: entry, now: clock.now()).age, url: call.request.url)
            }
            throw error
        }
        let responseDate = clock.now()
        // The transport followed a redirect: the answer is another resource's. Stored under this
        // URL it would lend its freshness to the URL that redirected (RFC 9111 §3 stores a redirect
        // only by its own explicit freshness). An interceptor's added query item is no redirect;
        // a query item changed or gone is.
        let redirected = response.url.map { !CacheKey.sameResource(call.request.url, answeredBy: $0) } ?? false
        // Whose answer this is changed while it was under way (a logout, another login), or
        // another user's session signed it: it is stored under nobody's key, nor does a 304
        // refresh the one stored before.
        let ownerChanged =
            call.currentDiscriminator() != call.discriminator || call.signedByAnother()

        if response.statusCode == 304, sentConditionally, let entry {
            // RFC 9111 §4.3.4: a 304 naming another ETag does not select the stored answer — a
            // strong one selects only the same strong one, a weak one any of the same opaque tag
            // — nor does a strong one when the stored answer has none, nor one without an ETag
            // whose Last-Modified is not the stored answer's, nor one from the resource a
            // redirect led to; ask again without conditions.
            let otherTag =
                response.headers["ETag"].map { etag in
                    if let stored = entry.headers["ETag"] {
                        if !Self.isWeak(etag) { return Self.isWeak(stored) || etag.trimmingWhitespace() != stored.trimmingWhitespace() }
                        return Self.opaqueTag(etag) != Self.opaqueTag(stored)
                    }
                    // Nothing to compare the tag with: a strong one selects nothing, a weak one only
                    // with the stored answer's own Last-Modified beside it.
                    guard Self.isWeak(etag), let modified = response.headers["Last-Modified"] else { return true }
                    return !Self.sameDate(modified, entry.headers["Last-Modified"])
                } ?? response.headers["Last-Modified"].map { !Self.sameDate($0, entry.headers["Last-Modified"]) } ?? false
            if redirected || otherTag || ownerChanged {
                var plain = outgoing
                for name in ["If-None-Match", "If-Modified-Since"] { plain.headers[name] = nil }
                return try await fetch(plain, call: call, key: key, entry: nil, sentConditionally: false, next: next)
            }
            let refreshed = entry.refreshed(with: response.headers, requestDate: requestDate, responseDate: responseDate)
            // Another call may have stored a newer answer meanwhile (a reload): this 304 selected
            // the one it was sent for, not that one, which stays.
            let replaced = lookup(key, headers: call.request.headers).map { !$0.isSameAnswer(as: entry) } ?? false
            if refreshed.directives.noStore {
                // The server no longer lets it be kept: not even as a stale stand-in.
                if !replaced { await storing { self.forget(key, selected: entry) } }
            } else if !call.requestDirectives.noStore, !replaced, let claim = pendingStores.claimStore(ticket, exclusive: true) {
                await storing { self.save(refreshed, key: key, claim: claim) }
            }
            return refreshed.response(
                source: .revalidated, age: Freshness(of: refreshed, now: responseDate).age, url: call.request.url)
        }

        let directives = CacheControl(response.headers)
        let varyNames: [String]
        if case .names(let names) = VaryRule.fields(of: response.headers) { varyNames = names } else { varyNames = [] }
        // An app's interceptor after the cache that signs requests itself: the answer is an
        // authorized one, and without a session or discriminator nothing says whose.
        let credentialAdded = VaryRule.credentialAddedAfterTheCache(
            seen: call.request.headers, sent: response.requestHeaders, isSecret: call.isSecret)
        let rule = StorageRule(
            method: call.request.method, requestDirectives: call.requestDirectives, isAuthorized: call.isAuthorized || credentialAdded,
            policy: call.policy, hasCookie: call.request.headers.contains("Cookie"),
            addedAfterTheCache: VaryRule.addedAfterTheCache(
                varyNames, seen: call.request.headers, sent: response.requestHeaders, keyKeepsUsersApart: call.discriminator != nil),
            ownerUnknown: credentialAdded && call.hasNoOwner)
        let storable =
            rule.refusal(status: response.statusCode, headers: response.headers, directives: directives) == nil && !redirected
            && !ownerChanged && response.body.count <= configuration.maximumBodyBytes
        if storable || entry != nil || !call.policy.invalidatesRouteNames.isEmpty {
            await storing {
                self.keep(
                    response, of: call, key: key, entry: entry, storable: storable, ticket: ticket, varyNames: varyNames,
                    requestDate: requestDate, responseDate: responseDate)
            }
        }
        return response
    }

    /// What an answer does to storage (run by ``storing(_:)``): invalidates the routes its call
    /// names, stores it when it may be, or removes the stored answer it replaces.
    private func keep(
        _ response: TransportResponse, of call: Call, key: CacheKey, entry: CacheEntry?, storable: Bool,
        ticket: PendingStores.Ticket, varyNames: [String], requestDate: Date, responseDate: Date
    ) {
        // The call's own answer is newer than anything its invalidation removes: when it is about to
        // be stored, the entries under its key are spared; otherwise they go too.
        invalidateRoutes(after: response, call: call, sparing: storable ? key : nil)
        if storable, let claim = pendingStores.claimStore(ticket, exclusive: false) {
            let vary = VaryRule.capture(varyNames, from: call.request.headers)
            save(
                CacheEntry(
                    key: key.stored, method: call.request.method.rawValue, url: CacheKey.storedURL(of: call.request.url),
                    routeName: key.routeName, discriminator: key.discriminator, statusCode: response.statusCode,
                    headers: CacheEntry.storedFields(of: response.headers), body: response.body, requestDate: requestDate,
                    responseDate: responseDate,
                    vary: vary),
                key: key, claim: claim)
        } else if entry != nil, response.statusCode < 400 || response.statusCode == 404 || response.statusCode == 410 {
            // RFC 9111 §4.3.3: a full answer replaces the stored one, which is never served again,
            // even stale, when it says what the resource is now: a 2xx or 3xx, or that it is gone
            // (404, 410). Other errors (a 5xx, 429, 408, 401, 403) say nothing about the resource,
            // and the stored answer may still stand in. A 2xx or 3xx replaces the variant this
            // request selected, not the others; a 404 or 410 says the resource is gone, all of them.
            if response.statusCode == 404 || response.statusCode == 410 { forget(key) } else if let entry { forget(key, selected: entry) }
        }
    }

    /// Whether a 304's `Last-Modified` names the stored answer's: the same date, or (one that does
    /// not parse) the same text.
    static func sameDate(_ modified: String, _ stored: String?) -> Bool {
        guard let stored else { return false }
        if let date = HTTPDate.date(from: modified), let storedDate = HTTPDate.date(from: stored) { return date == storedDate }
        return modified.trimmingWhitespace() == stored.trimmingWhitespace()
    }

    /// Whether an entity tag is weak (`W/"…"`).
    static func isWeak(_ tag: String) -> Bool { tag.trimmingWhitespace().hasPrefix("W/") }

    /// An entity tag without its weak marker, for the weak comparison of RFC 9110 §8.8.3.2.
    static func opaqueTag(_ tag: String) -> Substring {
        let trimmed = Substring(tag.trimmingWhitespace())
        return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
    }

    /// The entry stored for `key` that a request with these headers selects, from memory or disk.
    func lookup(_ key: CacheKey, headers: HTTPHeaders) -> CacheEntry? {
        switch read(key.storeName) {
        case .response(let entry)?:
            guard entry.key == key.stored, VaryRule.matches(entry.vary, request: headers) else { return nil }
            return entry
        case .variants(let text, let fields)?:
            guard text == key.stored else { return nil }
            let name = key.storeName.variant(VaryRule.variantTag(VaryRule.capture(fields, from: headers)))
            guard case .response(let entry)? = read(name), entry.key == key.stored, VaryRule.matches(entry.vary, request: headers)
            else { return nil }
            return entry
        case nil:
            return nil
        }
    }

    /// Stores `entry` in both tiers; a varying answer under its variant's name, beside the list of
    /// fields it varies on. When the claim no longer holds — a removal of the key ran since its
    /// ticket was taken (before the answer was asked for), or, for a `304`'s refresh, another
    /// answer was stored since the claim, either may have come between the two tiers' writes —
    /// what was written goes again.
    func save(_ entry: CacheEntry, key: CacheKey, claim: PendingStores.Claim) {
        if entry.vary.isEmpty {
            write(.response(entry), as: key.storeName)
        } else {
            write(.variants(key: key.stored, fields: entry.vary.map(\.name)), as: key.storeName)
            write(.response(entry), as: key.storeName.variant(VaryRule.variantTag(entry.vary)))
        }
        if !pendingStores.holds(claim) { forget(key) }
    }

    private func read(_ name: StoreName) -> StoredRecord? {
        if let record = memory.record(name) { return record }
        let generation = memory.removals
        guard let record = disk?.record(name) else { return nil }
        memory.store(record, as: name, unlessRemovedSince: generation)
        return record
    }

    private func write(_ record: StoredRecord, as name: StoreName) {
        memory.store(record, as: name)
        disk?.store(record, as: name)
    }

    /// Removes the answers stored for `key`, every variant included.
    private func forget(_ key: CacheKey) {
        let base = key.storeName
        remove { $0.base == base }
    }

    /// Removes the stored answer `entry` is: its variant alone when it varies, since an answer to
    /// one request says nothing of what the others hold (RFC 9111 §4.3.3).
    private func forget(_ key: CacheKey, selected entry: CacheEntry) {
        guard !entry.vary.isEmpty else { return forget(key) }
        let base = key.storeName
        let name = base.variant(VaryRule.variantTag(entry.vary))
        // Answers on their way for the key are taken under its base name: none of them is stored
        // over this removal.
        pendingStores.removed { $0 == base }
        remove { $0 == name }
    }

    /// The URLs a write answered with a non-error status makes obsolete: its own, and those its
    /// answer's `Location` and `Content-Location` name on the same origin (RFC 9111 §4.4; another
    /// origin's are left alone, so one server cannot empty the cache of another), relative ones
    /// resolved against the URL that answered.
    static func invalidatedURLs(by response: TransportResponse, of request: TransportRequest) -> [URL] {
        var urls = [request.url]
        for name in ["Location", "Content-Location"] {
            guard let value = response.headers[name]?.trimmingWhitespace(), !value.isEmpty,
                let url = URL(string: value, relativeTo: response.url ?? request.url)?.absoluteURL,
                CacheKey.sameOrigin(url, request.url)
            else { continue }
            urls.append(url)
        }
        return urls
    }

    /// After a successful answer, removes the stored answers of the routes the call invalidates,
    /// for the call's discriminator — all but those stored under `spared`, the call's own key when
    /// its answer has just arrived and is stored (so a `GET` that invalidates other routes still
    /// caches its own).
    private func invalidateRoutes(after response: TransportResponse, call: Call, sparing spared: CacheKey? = nil) {
        guard response.isSuccess, !call.policy.invalidatesRouteNames.isEmpty else { return }
        let tags = Set(call.policy.invalidatesRouteNames.map(StoreName.tag(forRoute:)))
        let owner = StoreName.tag(forDiscriminator: call.discriminator)
        let sparedName = spared?.storeName
        let everybody = call.invalidatesForEverybody
        remove { tags.contains($0.route) && (everybody || $0.discriminator == owner) && $0.base != sparedName }
    }

    /// The made-up answer of a cache-only call that found nothing: `504 Gateway Timeout`, as RFC
    /// 9111 §5.2.1.7 asks of `only-if-cached`, with a JSON body `{"code": "not_cached", "message": …}`
    /// and ``statusHeaderName`` set to `miss`.
    static func miss(for request: TransportRequest, reason: String) -> TransportResponse {
        struct Body: Encodable {
            let code: String
            let message: String
        }
        // The summary names the method already ("GET https://…").
        let message = "\(request.summary.description): the call is cache-only and \(reason)"
        let body = (try? JSONEncoder().encode(Body(code: "not_cached", message: message))) ?? Data(#"{"code":"not_cached"}"#.utf8)
        return TransportResponse(
            statusCode: 504,
            headers: ["Content-Type": "application/json", statusHeaderName: "miss", "Cache-Control": "no-store"],
            body: body, url: request.url, source: .cache)
    }
}

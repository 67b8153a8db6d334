import Foundation
import Networking

/// Sends many calls in one request to a Facebook Graph-style batch endpoint: `POST <path>` with
/// `{"batch": [{"method", "relative_url", "headers": [{"name", "value"}], "body"}]}`, answered
/// with `[{"code", "headers": [{"name", "value"}], "body"}]` (or `null` for an item that did not run;
/// `headers` may also be an object of names and values, as older endpoints answer).
///
/// - Calls are split into batches of at most ``limit`` items, sent one after another (but for
///   the calls only the repository's chain serves as asked — reads of a response cache — sent
///   on their own afterwards: see ``send(_:)``). A batch the
///   endpoint refuses as too large (413 Content Too Large: none of its items ran) is sent again in
///   halves, and the rest of the call in batches no larger, down to one item; an item refused
///   alone gets that 413 as its result, and the items after it go on at the size before that
///   halving (one at a time after a second such item with nothing taken between). When a
///   batch request fails after an earlier one was answered, what ran is not lost: the answered
///   items keep their results, the items of the failed request get its error (whether they ran
///   is unknown), and the later items, not sent, fail as items the server did not run
///   (see ``sendRaw(_:requiresSession:options:)``).
/// - The batch request goes through the repository's chain (so the session signs it once, and
///   items inherit its `Authorization`); each item is read as its own call would be — its own
///   status, custom errors and decoding (`AbstractRepository.interpret(_:to:for:)`). An item
///   answered with a redirect is followed on its own afterwards, as its call's transport would
///   have followed it (the batch endpoint does not).
/// - Answers are matched to calls by position, after checking that there are as many answers as
///   calls.
/// - A failure of the batch call itself (network, 5xx, an answer that is not a JSON array of as
///   many items as calls) is told apart from failures of its items: when no item has an answer yet,
///   ``send(_:)`` returns it as its own failure, `RepositoryError.invalidResponse(reason:context:)`
///   for an answer that does not fit.
/// - The batch request is signed with the session when its calls require it; calls that do and
///   calls made without the session (`withoutSession()`, or a route with `requiresSession`
///   false) never share one, since items inherit the batch request's `Authorization`.
///
/// The originals' bugs it does not have: rebuilt items carried their parameters as headers,
/// answers were matched by index without a count check, and item status codes were ignored.
public struct BatchClient: Sendable {
    /// The repository whose configuration, session and chain the batch uses.
    public let repository: AbstractRepository
    /// The batch endpoint's path under the base URL. Default `"batch"`.
    public let path: String
    /// The most items in one batch request; more are split. Default 50; values below 1 become 1.
    public let limit: Int
    /// Query items of the batch request itself, if the endpoint needs some. Default none.
    public let query: Parameters?

    /// Creates a client for `repository`'s API.
    public init(repository: AbstractRepository, path: String = "batch", limit: Int = 50, query: Parameters? = nil) {
        self.repository = repository
        self.path = path
        self.limit = max(1, limit)
        self.query = query
    }

    /// Sends every call of `batch`; the results are read by handle. Each call answered in a batch
    /// request is reported to the repository's `ExchangeObserver`s with its name and options (a
    /// response cache drops what a write made stale), since the chain sees only the batch request.
    ///
    /// A call that only the chain serves as it asks goes through it on its own, after the batch
    /// requests and their reports (`AbstractRepository.requiresChain(_:context:)`; at most
    /// four at a time): so a read sees what the batch's writes changed. With a
    /// `ResponseCache` in the chain, a read with `.cacheOnly()`, a time to live (a route's
    /// `cacheTTL`, `.cached(for:)`) or a reload is answered by the cache (or by the network and
    /// stored), and a cache-only miss is a miss, never sent; a call whose required option no
    /// interceptor handles (`.cacheOnly()` without a cache) gets `.invalidRequest` and is not sent.
    ///
    /// - Returns: the failure of the batch request when no item has an answer, else every item's
    ///   own result (when the first batch request fails but a call sent on its own was answered,
    ///   each item sent in it gets its error — whether it ran is unknown —, each later item
    ///   fails as not run, and an item that could not go in a batch keeps its own failure). With more items than
    ///   ``limit``, a batch request that fails after an earlier one was answered does not hide
    ///   what ran: the items of the answered batches keep their
    ///   results, each item sent in the failed one gets the batch request's error (whether it ran
    ///   is unknown), and each later item, not sent, gets
    ///   `RepositoryError.invalidResponse(reason:context:)` saying the batch did not run it — as
    ///   for an item the server answered `null`.
    public func send(_ batch: Batch) async -> Result<BatchResults, RepositoryError> {
        let built = batch.items.map { $0.build(repository) }
        // Signed for the user logged in now, or not at all: a switch of users while the batch is
        // under way never signs its items for the next one, nor reports them as the next one's.
        var pinned = RequestOptions()
        pinned[SessionIdentityKey.self] = repository.sessionManager?.sessionIdentity
        // Calls only the chain serves as they ask (a read of the response cache, an option no
        // interceptor handles) go through it on their own, after the batch requests.
        let alone = Set(
            built.indices.filter { index in
                guard case .success(let call) = built[index] else { return false }
                return repository.requiresChain(call.request, context: call.context)
            })
        let batched = built.indices.filter { !alone.contains($0) }
        let requests = batched.map { built[$0].map(\.request) }
        // A call that could not be made is not sent: it takes the kind of the one before, so it
        // never splits a run of one kind into two batch requests.
        var signed: [Bool] = []
        for index in batched { signed.append((try? built[index].get())?.context.requiresSession ?? signed.last ?? true) }
        let batchAnswers = await sendRaw(requests, signed: { signed[$0] }, options: pinned, halvesTooLarge: true)
        var all = [Result<TransportResponse, RepositoryError>?](repeating: nil, count: built.count)
        // The chain saw only the batch requests: its observers (a response cache) hear of each
        // call answered in one as they would have seen it.
        for (index, answer) in zip(batched, batchAnswers.answers) {
            all[index] = answer
            guard case .success(let call) = built[index], case .success(let response) = answer else { continue }
            await repository.report(call.request, answeredBy: response, context: Self.pinning(call.context, to: pinned))
        }
        // After the batch requests and their reports, so that a read sees what the batch's writes
        // changed (a cached list a write made stale is dropped first).
        for (index, answer) in await sendAlone(alone.sorted(), of: built, pinnedTo: pinned) { all[index] = answer }
        // No call sent in a batch request has an answer: the call fails as a whole, unless calls
        // sent on their own have theirs (a cache read while offline). Then each batched call keeps
        // what it got: the batch request's error when it was in it, not run when it came after,
        // its own failure when it could not go in a batch.
        if let error = batchAnswers.wholeFailure, !alone.contains(where: { if case .success = all[$0] { true } else { false } }) {
            return .failure(error)
        }
        let answers = all.map { $0 ?? .failure(.invalidRequest(reason: "the batch lost this call", request: nil)) }
        let itemRequests = built.map { $0.map(\.request) }
        return .success(
            BatchResults(
                calls: batch.items.map(\.call),
                results: zip(batch.items, zip(itemRequests, answers)).map { item, pair in
                    let (request, response) = pair
                    return request.flatMap { request in response.flatMap { item.interpret(repository, $0, request) } }
                }))
    }

    /// The most calls of one batch sent on their own at a time: a batch of many reads the cache
    /// misses must not become as many requests at once.
    static let aloneWidth = 4

    /// Sends the calls at `indices` of `built` through the chain, each on its own, at most
    /// ``aloneWidth`` at a time; returns each one's answer with its index.
    private func sendAlone(_ indices: [Int], of built: [Result<Batch.Built, RepositoryError>], pinnedTo pinned: RequestOptions)
        async -> [(Int, Result<TransportResponse, RepositoryError>)]
    {
        let calls = indices.compactMap { index in (try? built[index].get()).map { (index, $0) } }
        return await withTaskGroup(of: (Int, Result<TransportResponse, RepositoryError>).self) { group in
            var answers: [(Int, Result<TransportResponse, RepositoryError>)] = []
            var next = calls.makeIterator()
            func addNext() -> Bool {
                guard let (index, call) = next.next() else { return false }
                let context = Self.pinning(call.context, to: pinned)
                group.addTask { [repository] in (index, await repository.send(call.request, context: context)) }
                return true
            }
            for _ in 0..<Self.aloneWidth {
                guard addNext() else { break }
            }
            while let answer = await group.next() {
                answers.append(answer)
                _ = addNext()
            }
            return answers
        }
    }

    /// `context` for a signed call, pinned to the user the batch was signed for, unless it names
    /// one itself: a response cache then acts for that user, whoever is logged in at the report.
    private static func pinning(_ context: RequestContext, to batch: RequestOptions) -> RequestContext {
        guard context.requiresSession, context.options[SessionIdentityKey.self] == nil,
            let user = batch[SessionIdentityKey.self]
        else { return context }
        var options = context.options
        options[SessionIdentityKey.self] = user
        return RequestContext(requiresSession: true, name: context.name, options: options, session: context.session)
    }

    /// Sends prepared requests (as `AbstractRepository.makeRequest(for:)` builds them) and
    /// returns each one's raw answer (an item answered with a redirect: the answer where it led),
    /// or the failure of a batch request when no item has an answer.
    ///
    /// The requests go in batches of at most ``limit``, one after another (smaller after a 413,
    /// as the type's overview says; an item refused as too large alone has that 413 as its answer,
    /// so a batch of one such item succeeds with it). When a batch request
    /// fails before any other was answered (the first one, unless it had nothing to send or only
    /// items refused alone), the result is that failure: no item has an answer. None ran when the request never left (no
    /// network, a refused connection); after a timeout, a lost connection or a gateway's 5xx the
    /// server may have run them, so only writes it can recognise (an `Idempotency-Key`) are safe
    /// to send again. When one fails
    /// later, the result is a success, so what already ran is not lost (a caller retrying the
    /// whole list would run it twice):
    /// - the items of the batches answered before keep their answers;
    /// - each item sent in the failed batch request gets its error: whether it ran is unknown;
    /// - each item after it is not sent and gets `RepositoryError.invalidResponse(reason:context:)`
    ///   with the same reason as an item the server answered `null` (it did not run), its
    ///   context naming the item's own request.
    ///
    /// Nothing is reported to the repository's observers: report each answer with
    /// `AbstractRepository.report(_:answeredBy:context:)` to have a response cache act on it.
    ///
    /// A request that could not be made, or cannot go in a batch (not under the base URL, a body
    /// that is not UTF-8 text in memory, an `Authorization` or `Cookie` of its own), keeps its own
    /// failure wherever it is; the other items are sent.
    ///
    /// - Parameters:
    ///   - requests: the requests, in order; a failure (a request that could not be made) is
    ///     returned in its place without being sent.
    ///   - requiresSession: whether the batch request is signed with the session (its items
    ///     inherit the signature). Default `true`.
    ///   - options: options for the interceptors of the batch request's chain.
    /// - Returns: one answer per request, in order, or the failure of a batch request when no
    ///   item has an answer.
    public func sendRaw(
        _ requests: [Result<TransportRequest, RepositoryError>], requiresSession: Bool = true, options: RequestOptions = RequestOptions()
    ) async -> Result<[Result<TransportResponse, RepositoryError>], RepositoryError> {
        await sendRaw(requests, signed: { _ in requiresSession }, options: options, halvesTooLarge: true).result
    }

    /// One batch request for `requests` (at most ``limit``, all of one kind), as the offline
    /// queue sends a group: a 413 is its failure, not halved here, so that what a refusal and
    /// what a partial failure left stay apart for the queue, which halves its groups itself.
    func sendWhole(
        _ requests: [Result<TransportRequest, RepositoryError>], requiresSession: Bool, options: RequestOptions
    ) async -> Result<[Result<TransportResponse, RepositoryError>], RepositoryError> {
        await sendRaw(requests, signed: { _ in requiresSession }, options: options, halvesTooLarge: false).result
    }

    /// What the batch requests did: one answer per request, and the failure of the first batch
    /// request when no item had an answer before it (then ``sendRaw(_:requiresSession:options:)``
    /// fails as a whole with it).
    private struct RawAnswers {
        var answers: [Result<TransportResponse, RepositoryError>]
        var wholeFailure: RepositoryError?

        var result: Result<[Result<TransportResponse, RepositoryError>], RepositoryError> {
            wholeFailure.map { .failure($0) } ?? .success(answers)
        }
    }

    /// ``sendRaw(_:requiresSession:options:)`` where `signed(i)` says whether request `i` needs
    /// the session: a batch request carries only requests that all do, or all do not.
    private func sendRaw(
        _ requests: [Result<TransportRequest, RepositoryError>], signed: (Int) -> Bool, options: RequestOptions,
        halvesTooLarge: Bool
    ) async -> RawAnswers {
        var answers: [Result<TransportResponse, RepositoryError>] = []
        answers.reserveCapacity(requests.count)
        // Whether a batch request was answered, so some items ran.
        var answeredBefore = false
        var start = 0
        // The most items per batch request of each kind (unsigned, signed): the limit, halved
        // each time the endpoint refuses one as too large (413) — a refusal before running any
        // item — down to one.
        var sizes = [limit, limit]
        // Per kind: the size before the halving under way began, and whether the last batch
        // request of that kind was one item refused alone.
        var sizeBeforeHalving: [Int?] = [nil, nil]
        var lastRefusedAlone = [false, false]
        while start < requests.count {
            let (kind, end) = Self.run(from: start, count: requests.count, sizes: sizes, signed: signed)
            let chunk = await sendOne(requests[start..<end], requiresSession: kind == 1, options: options)
            switch chunk.outcome {
            case .answered:
                answeredBefore = true
                sizeBeforeHalving[kind] = nil
                lastRefusedAlone[kind] = false
            case .nothingSent:
                break
            case .failed(let error) where halvesTooLarge && end - start > 1 && Self.isTooLarge(error):
                if sizeBeforeHalving[kind] == nil { sizeBeforeHalving[kind] = sizes[kind] }
                sizes[kind] = (end - start) / 2
                continue
            case .failed(let error) where halvesTooLarge && Self.isTooLarge(error):
                // One item too large even alone: it keeps the 413 (it did not run), and the items
                // after it go on at the size before that halving. After a second such item with
                // nothing taken between, one at a time: a server refusing everything costs a
                // request per item, not a halving for each.
                if !lastRefusedAlone[kind], let size = sizeBeforeHalving[kind] { sizes[kind] = size }
                sizeBeforeHalving[kind] = nil
                lastRefusedAlone[kind] = true
            case .failed(let error):
                answers += chunk.answers
                for request in requests[end...] {
                    switch request {
                    case .success(let request):
                        // One that could not go in a batch anyway keeps that failure, as documented.
                        if case .failure(let own) = BatchWire.item(
                            for: request, baseURL: repository.configuration.baseURL, defaults: repository.configuration.defaultHeaders)
                        {
                            answers.append(.failure(own))
                        } else {
                            answers.append(.failure(BatchWire.notSent(request)))
                        }
                    case .failure(let own): answers.append(.failure(own))
                    }
                }
                return RawAnswers(answers: answers, wholeFailure: answeredBefore ? nil : error)
            }
            answers += chunk.answers
            start = end
        }
        return RawAnswers(answers: answers, wholeFailure: nil)
    }

    /// The requests one batch request takes from `start` on: at most `sizes[kind]` of the first
    /// one's kind (1: needs the session, 0: not), up to the first of the other kind. Items inherit
    /// the batch request's `Authorization`, so one made without the session never shares it.
    static func run(from start: Int, count: Int, sizes: [Int], signed: (Int) -> Bool) -> (kind: Int, end: Int) {
        let requiresSession = signed(start)
        // `count - start` is positive and each size at least 1: no overflow, even for a limit of
        // `Int.max`.
        let end = start + min(sizes[requiresSession ? 1 : 0], count - start)
        return (requiresSession ? 1 : 0, (start + 1..<end).first { signed($0) != requiresSession } ?? end)
    }

    /// Whether a batch request was refused as too large (413): before any item ran, so its items
    /// may go again in smaller batches.
    static func isTooLarge(_ error: RepositoryError) -> Bool { error.context?.response?.statusCode == 413 }

    /// What one batch request did.
    private enum ChunkOutcome {
        /// It was answered: each item sent has its own answer.
        case answered
        /// No item could go in it, so it was not sent.
        case nothingSent
        /// It failed as a whole: which of its items ran is unknown.
        case failed(RepositoryError)
    }

    /// One batch request for at most ``limit`` items: one result per item, and what the request
    /// did. When it failed, each item sent in it has its error; an item that could not be made or
    /// carried has its own failure either way.
    private func sendOne(
        _ requests: ArraySlice<Result<TransportRequest, RepositoryError>>, requiresSession: Bool, options: RequestOptions
    ) async -> (answers: [Result<TransportResponse, RepositoryError>], outcome: ChunkOutcome) {
        let requests = Array(requests)
        let withholding = withheldFields
        var wire: [JSONValue] = []
        var positions: [Int] = []
        // A placeholder for each item sent, replaced below by its answer or the batch's error.
        var answers = requests.map { $0.map { _ in TransportResponse(statusCode: 0) } }
        for (position, request) in requests.enumerated() {
            guard case .success(let request) = request else { continue }
            switch BatchWire.item(
                for: request, baseURL: repository.configuration.baseURL, defaults: repository.configuration.defaultHeaders,
                withholding: withholding)
            {
            case .success(let item):
                wire.append(item)
                positions.append(position)
            case .failure(let error): answers[position] = .failure(error)
            }
        }
        guard !wire.isEmpty else { return (answers, .nothingSent) }
        switch await exchange(wire, requiresSession: requiresSession, options: options) {
        case .failure(let error):
            for position in positions { answers[position] = .failure(error) }
            return (answers, .failed(error))
        case .success(let exchanged):
            let items = await replayingRefused(
                exchanged.items, of: wire, signedWith: exchanged.signer, options: options)
            // `exchange` checked that there is one answer per item sent.
            for (position, answer) in zip(positions, items) {
                guard case .success(let original) = requests[position] else { continue }
                answers[position] = await followingRedirect(
                    BatchWire.naming(original, in: answer), of: original, signed: requiresSession, by: exchanged.identity,
                    options: options)
            }
            return (answers, .answered)
        }
    }

    /// An item's answer, as its own call would have had it: the batch endpoint runs items without
    /// following redirects, so an item answered 301, 302, 303, 307 or 308 with a `Location` is sent
    /// again on its own, where it points, as the transport would have followed it
    /// (`TransportRequest.redirected(by:)`: 307 and 308 keep the write, a 303 reads the answer
    /// with a `GET`), and its answer is the item's. It is signed only when the batch was, for the
    /// user whose session signed the batch (`identity`: never for another who logged in since),
    /// and when the redirect keeps the credential (the same origin, or the same host moved from
    /// `http` to `https`); further redirects the transport follows itself.
    private func followingRedirect(
        _ answer: Result<TransportResponse, RepositoryError>, of original: TransportRequest, signed batchSigned: Bool,
        by identity: String?, options: RequestOptions
    ) async -> Result<TransportResponse, RepositoryError> {
        guard case .success(var response) = answer else { return answer }
        response.url = original.url
        var request = original
        // A write moved elsewhere stays a write, as in the batch request itself.
        request.keepsMethodOnRedirect = true
        let next: TransportRequest
        do throws(TransportError) {
            guard let target = try request.redirected(by: response) else { return .success(response) }
            next = target
        } catch {
            return .failure(
                .invalidResponse(reason: "\(error)", context: ErrorContext(request: original.summary, response: response)))
        }
        let signed = batchSigned && original.keepsCredentials(redirectedTo: next.url)
        var pinned = options
        if signed, pinned[SessionIdentityKey.self] == nil { pinned[SessionIdentityKey.self] = identity }
        return await repository.send(
            next, context: RequestContext(requiresSession: signed, name: "batch", options: pinned, session: repository.sessionManager))
    }

    /// Items answered 401 in a signed batch, as the session treats a call's 401: the session
    /// hears that the credential the batch carried was refused (and refreshes it, once for every
    /// call failing together, or ends), and the items go again, once, in one batch signed anew.
    /// A 401 to that replay tells the session the credential is refused even fresh. Without this,
    /// items kept for a credential the server no longer takes would wait for it for good. When
    /// the session replaced the credential while the batch was under way (another call's 401, a
    /// refresh before expiry), the items go again with the newer one, as a single call's would;
    /// never with a later session's.
    private func replayingRefused(
        _ items: [Result<TransportResponse, RepositoryError>], of wire: [JSONValue], signedWith signer: SessionAuthorization?,
        options: RequestOptions
    ) async -> [Result<TransportResponse, RepositoryError>] {
        let refused = items.indices.filter { Self.isRefused(items[$0]) }
        // Only a batch the session signed, for a user it names: the replay is signed for that
        // user or not at all.
        guard !refused.isEmpty, let signer, let user = signer.sessionIdentity, let session = repository.sessionManager
        else { return items }
        var pinned = options
        if pinned[SessionIdentityKey.self] == nil { pinned[SessionIdentityKey.self] = user }
        // The session decides, as for a call: the current credential of the same session when the
        // one that signed the batch was replaced meanwhile, a refreshed one when it was the
        // current one, nothing after a logout.
        guard let replay = try? await session.authorizationRejected(signer) else { return items }
        let again: Exchanged
        switch await exchange(refused.map { wire[$0] }, requiresSession: true, options: pinned) {
        case .success(let answers): again = answers
        case .failure(let error):
            // Whether the replayed items ran is unknown now: they get its error, not the 401.
            var failed = items
            for index in refused { failed[index] = .failure(error) }
            return failed
        }
        var replayed = items
        for (index, answer) in zip(refused, again.items) { replayed[index] = answer }
        let refusedAgain = again.items.contains(where: Self.isRefused)
        if refusedAgain, again.signer?.headerValue == replay.headerValue { await session.replayRejected(replay) }
        return replayed
    }

    /// Which header fields the items leave out of the batch request's body: every field named
    /// like a credential (`NetworkingConfiguration.isSecretFieldName(_:)`) when the batch request
    /// itself goes without credentials — its endpoint on another host than the API's, or on plain
    /// HTTP under `useSecureConnection` (`NetworkingConfiguration.sendsCredentials(to:)`) — or
    /// when its URL cannot be made; none otherwise.
    private var withheldFields: (String) -> Bool {
        let configuration = repository.configuration
        if let url = try? repository.makeRequest(for: Endpoint<Void>(.post, path, query: query)).url,
            configuration.sendsCredentials(to: url)
        {
            return { _ in false }
        }
        return configuration.isSecretFieldName
    }

    /// Sends one batch request carrying `wire` and returns one answer per item, whose session
    /// signed it and with what, or the failure of the
    /// batch request itself (network, a non-2xx status, an answer that does not fit).
    private func exchange(_ wire: [JSONValue], requiresSession: Bool, options: RequestOptions) async
        -> Result<Exchanged, RepositoryError>
    {
        // Always a JSON body: a configuration that query-encodes POSTs must not put the items (their
        // bodies and credentials) in the URL.
        let endpoint = Endpoint<TransportResponse>(
            .post, path, parameters: Parameters(json: ["batch": .array(wire)]), query: query, encoding: .json)
        var batchRequest: TransportRequest
        do {
            batchRequest = try repository.makeRequest(for: endpoint)
        } catch {
            return .failure(error)
        }
        // A batch endpoint moved to another address (301, 302 to the same path) gets the batch
        // there, never a GET.
        batchRequest.keepsMethodOnRedirect = true
        let response: TransportResponse
        let context = RequestContext(
            requiresSession: requiresSession, name: "batch", options: options, session: repository.sessionManager)
        switch await repository.send(batchRequest, context: context) {
        case .success(let answer): response = answer
        case .failure(let error): return .failure(error)
        }
        // An unsigned batch refused (a 401 for a bad API key) fails as an unsigned call does, not
        // as an expired session.
        let interpreted = requiresSession ? Endpoint<Void>.post(path) : Endpoint<Void>.post(path).withoutSession()
        if case .failure(let error) = repository.interpret(response, to: batchRequest, for: interpreted) {
            return .failure(error)
        }
        // Which items ran is unknown when the answer does not fit: the batch call failed as a whole.
        // The credential the batch went with, as far as the answer tells: none when a redirect
        // led to another origin, where the transport did not send it.
        let fromOrigin = response.url.map { Self.origin(of: $0) == Self.origin(of: batchRequest.url) } ?? true
        let sent = fromOrigin ? response.requestHeaders?["Authorization"] : nil
        var signer: SessionAuthorization?
        if let sent, let id = context.signedSessionID, let version = context.signedCredentialVersion {
            signer = SessionAuthorization(
                headerValue: sent, version: version, sessionID: id, sessionIdentity: context.signedSessionIdentity)
        }
        return BatchWire.responses(in: response, expected: wire.count, request: batchRequest).map { items in
            Exchanged(items: items, identity: context.signedSessionIdentity, signer: signer)
        }
    }

    /// A batch request's answer: one answer per item, whose session signed it, and, when the
    /// session signed it, with what (for a 401 to its items).
    private struct Exchanged {
        var items: [Result<TransportResponse, RepositoryError>]
        var identity: String?
        var signer: SessionAuthorization?
    }

    /// Whether an item was answered 401.
    private static func isRefused(_ answer: Result<TransportResponse, RepositoryError>) -> Bool {
        if case .success(let item) = answer { return item.statusCode == 401 }
        return false
    }

    /// The scheme, host and port (the scheme's default when none is given) of `url`.
    private static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}

import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

@testable import NetworkingOffline

/// The batch client over a stub transport: what a caller gets back when a batch split in several
/// batch requests fails partway, so that retrying does not run twice what already ran.
@Suite("Batch client")
struct BatchClientTests {
    struct Created: Decodable, Sendable { let index: Int }

    /// Answers batch requests with scripted bodies (status 200), in order, then with 503 once
    /// they run out.
    final class ScriptedBatch: Sendable {
        private let bodies: Mutex<[String]>

        init(_ bodies: [String]) {
            self.bodies = Mutex(bodies)
        }

        func answer(_ request: TransportRequest) -> TransportResponse {
            let body: String? = bodies.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            guard let body else {
                return TransportResponse(
                    statusCode: 503, headers: ["Content-Type": "application/json"], body: Data(#"{"code": "unavailable"}"#.utf8),
                    url: request.url)
            }
            return TransportResponse(
                statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8), url: request.url)
        }
    }

    /// A batch answer of one `201 {"index": n}` per index.
    static func created(_ indices: [Int]) -> String {
        let items = indices.map { index in
            #"{"code": 201, "headers": [{"name": "Content-Type", "value": "application/json"}], "body": "{\"index\": \#(index)}"}"#
        }
        return "[" + items.joined(separator: ", ") + "]"
    }

    /// A logged-in repository for `http://api.test/` whose batch endpoint answers from `script`.
    static func repository(_ script: ScriptedBatch) throws -> (APIRepository, StubTransport) {
        try repository(batch: StubTransport.Route(.post, "batch") { request in script.answer(request) })
    }

    /// A repository for `http://api.test/` whose batch endpoint is `batch`, with `interceptors`
    /// in its chain, signed in with `session` (by default Ann, logged in with `ann-token`).
    static func repository(
        batch: StubTransport.Route, session: SessionManager<APIUser>? = nil, interceptors: [any Interceptor] = []
    ) throws -> (APIRepository, StubTransport) {
        let transport = StubTransport(routes: [batch])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = interceptors
        let signedIn: SessionManager<APIUser>
        if let session {
            signedIn = session
        } else {
            signedIn = SessionManager<APIUser>()
            try signedIn.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        }
        return (APIRepository(configuration: configuration, sessionManager: signedIn, transport: transport), transport)
    }

    @Test(
        "A batch request failing after an earlier one was answered keeps what ran: its items get its error, later items are not sent"
    )
    func laterBatchRequestFails() async throws {
        // Given a limit of 2 and 5 calls: the first batch request is answered, the second gets a 503.
        let (repository, transport) = try Self.repository(ScriptedBatch([Self.created([0, 1])]))
        var batch = Batch()
        let endpoints = (0..<5).map { Endpoint<Created>.post("notes", parameters: ["n": $0]) }
        var handles: [BatchHandle<Created>] = []
        for endpoint in endpoints { handles.append(batch.add(endpoint)) }
        let lastRequest = try repository.makeRequest(for: endpoints[4]).summary

        // When the batch is sent.
        let results = try await BatchClient(repository: repository, limit: 2).send(batch).get()

        // Then the answered items keep their results,
        #expect(results.count == 5)
        #expect(try results[handles[0]].get().index == 0)
        #expect(try results[handles[1]].get().index == 1)
        // the items of the failed batch request get its error (whether they ran is unknown),
        for handle in handles[2...3] {
            guard case .failure(.requestError(let context)) = results[handle] else {
                Issue.record("expected the batch request's 503, got \(results[handle])")
                continue
            }
            #expect(context.statusCode == 503)
            #expect(context.request.method == .post && context.request.url.path.hasSuffix("batch"))
        }
        // the item after it was not sent and fails as an item the server did not run,
        guard case .failure(.invalidResponse(let reason, let context)) = results[handles[4]] else {
            Issue.record("expected the not-run failure, got \(results[handles[4]])")
            return
        }
        #expect(reason == BatchWire.notRunReason)
        #expect(context.request == lastRequest)
        #expect(context.response == nil)
        // and the transport saw exactly two batch requests.
        #expect(transport.requests.count == 2)
        #expect(transport.requests.allSatisfy { $0.url.path.hasSuffix("batch") })
    }

    @Test("The batch always goes as a JSON body, even under a configuration that query-encodes POSTs: its items never reach the URL")
    func batchBodyIsJSONWhateverTheConfiguration() async throws {
        let transport = StubTransport(routes: [StubTransport.Route(.post, "batch") { ScriptedBatch([Self.created([0])]).answer($0) }])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.queryEncodedMethods.insert(.post)
        let session = SessionManager<APIUser>()
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        let repository = APIRepository(configuration: configuration, sessionManager: session, transport: transport)
        var batch = Batch()
        let handle = batch.add(Endpoint<Created>.post("login", parameters: ["password": "hunter2"]))
        let results = try await BatchClient(repository: repository).send(batch).get()
        #expect(try results[handle].get().index == 0)
        let sent = try #require(transport.requests.first)
        #expect(sent.url.query == nil)
        #expect(!sent.url.absoluteString.contains("hunter2"))
        #expect((sent.headers["Content-Type"] ?? "").hasPrefix("application/json"))
        let body = String(decoding: sent.body?.inMemoryData ?? Data(), as: UTF8.self)
        #expect(body.contains(#""batch""#))
    }

    @Test("A batch endpoint on another host gets no default credential, neither on its request nor inside its items")
    func batchOnAnotherHostCarriesNoDefaultCredential() async throws {
        let transport = StubTransport(routes: [StubTransport.Route(.post, "batch") { ScriptedBatch([Self.created([0])]).answer($0) }])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.defaultHeaders = ["X-Api-Key": "key-123", "X-Client": "demo"]
        let repository = APIRepository(configuration: configuration, sessionManager: nil, transport: transport)
        var batch = Batch()
        let handle = batch.add(
            Endpoint<Created>.post("notes", parameters: ["n": 0], headers: ["X-Auth-Token": "own-1"]).withoutSession())

        let results = try await BatchClient(repository: repository, path: "http://gateway.test/batch").send(batch).get()

        #expect(try results[handle].get().index == 0)
        let sent = try #require(transport.requests.first)
        #expect(sent.url.host == "gateway.test")
        #expect(sent.headers["X-Api-Key"] == nil)
        let body = String(decoding: sent.body?.inMemoryData ?? Data(), as: UTF8.self)
        #expect(!body.contains("key-123") && !body.contains("own-1"), "nor an item's own credential")
        // A default that is not a credential still goes with the item, as with the batch request.
        #expect(body.contains("X-Client") && sent.headers["X-Client"] == "demo")
    }

    @Test("A batch endpoint on the API's host gets the default credential inside its items, as each call would")
    func batchOnTheAPIHostKeepsDefaultCredential() async throws {
        let transport = StubTransport(routes: [StubTransport.Route(.post, "batch") { ScriptedBatch([Self.created([0])]).answer($0) }])
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.defaultHeaders = ["X-Api-Key": "key-123"]
        let repository = APIRepository(configuration: configuration, sessionManager: nil, transport: transport)
        var batch = Batch()
        let handle = batch.add(Endpoint<Created>.post("notes", parameters: ["n": 0]).withoutSession())

        let results = try await BatchClient(repository: repository).send(batch).get()

        #expect(try results[handle].get().index == 0)
        let sent = try #require(transport.requests.first)
        #expect(sent.headers["X-Api-Key"] == "key-123")
        let body = String(decoding: sent.body?.inMemoryData ?? Data(), as: UTF8.self)
        #expect(body.contains("key-123"))
    }

    @Test("A redirected item is followed on its own: signed on the same origin or an upgrade to https, never on another port")
    func redirectedItemsKeepTheCredentialRules() async throws {
        let moves = [
            (307, "/moved/a"), (308, "http://api.test:8080/moved/b"), (307, "https://api.test/moved/c"), (307, "ftp://files.test/d"),
            (303, "/moved/e"),
        ]
        let items = moves.map { status, location in
            #"{"code": \#(status), "headers": [{"name": "Location", "value": "\#(location)"}], "body": ""}"#
        }
        let script = ScriptedBatch(["[" + items.joined(separator: ", ") + "]"])
        let created = { @Sendable (request: TransportRequest) throws(TransportError) -> TransportResponse in
            TransportResponse(
                statusCode: request.method == .get ? 200 : 201, headers: ["Content-Type": "application/json"],
                body: Data(#"{"index": \#(request.url.lastPathComponent.utf8.first ?? 0)}"#.utf8), url: request.url)
        }
        let transport = StubTransport(
            routes: [StubTransport.Route(.post, "batch") { request in script.answer(request) }]
                + ["a", "b", "c"].map { StubTransport.Route(.post, "moved/\($0)", respond: created) }
                + [StubTransport.Route(.get, "moved/e", respond: created)])
        let session = SessionManager<APIUser>()
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        let repository = APIRepository(
            configuration: try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5),
            sessionManager: session,
            transport: transport)
        var batch = Batch()
        let handles = (0..<moves.count).map { batch.add(Endpoint<Created>.post("notes", parameters: ["n": $0])) }
        let results = try await BatchClient(repository: repository).send(batch).get()
        #expect(try handles.enumerated().filter { $0.offset != 3 }.map { try results[$0.element].get().index } == [97, 98, 99, 101])
        guard case .failure(.invalidResponse) = results[handles[3]] else {
            Issue.record("expected a Location that cannot be followed to fail the item")
            return
        }
        let followed = Dictionary(uniqueKeysWithValues: transport.requests.dropFirst().map { ($0.url.absoluteString, $0) })
        #expect(followed["http://api.test/moved/a"]?.headers["Authorization"] == "Bearer ann-token")
        #expect(followed["http://api.test/moved/a"]?.body?.inMemoryData.map { String(decoding: $0, as: UTF8.self) } == #"{"n":0}"#)
        #expect(followed["http://api.test:8080/moved/b"].map { $0.headers["Authorization"] == nil && $0.method == .post } == true)
        #expect(followed["https://api.test/moved/c"]?.headers["Authorization"] == "Bearer ann-token")
        #expect(followed["http://api.test/moved/e"].map { $0.method == .get && $0.body == nil } == true)
        #expect(followed.count == 4)
    }

    @Test("A redirected item is never signed for another user who logged in after the batch was signed")
    func redirectedItemKeepsToTheBatchUser() async throws {
        let session = SessionManager<APIUser>()
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        let moved = #"[{"code": 307, "headers": [{"name": "Location", "value": "/moved/a"}], "body": ""}]"#
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "batch") { request throws(TransportError) in
                // Ann logs out and Bob logs in while the batch is answered.
                try? session.logout()
                try? session.login(user: APIUser(id: 2, name: "Bob"), token: "bob-token")
                return TransportResponse(
                    statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(moved.utf8), url: request.url)
            },
            StubTransport.Route.json(.post, "moved/a", status: 201, #"{"index": 1}"#),
        ])
        let repository = APIRepository(
            configuration: try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5),
            sessionManager: session,
            transport: transport)
        var batch = Batch()
        let note = batch.add(Endpoint<Created>.post("notes", parameters: ["n": 1]))
        let results = try await BatchClient(repository: repository).send(batch).get()
        #expect(!transport.requests.contains { $0.headers["Authorization"] == "Bearer bob-token" })
        #expect((try? results[note].get()) == nil, "Ann's write does not run as Bob")
    }

    @Test("A handle read from another batch's results is refused, even when that batch has a call of its type at its position")
    func handleOfAnotherBatchIsRefused() async throws {
        let (repository, _) = try Self.repository(ScriptedBatch([Self.created([7]), Self.created([8])]))
        var first = Batch()
        let mine = first.add(Endpoint<Created>.post("notes", parameters: ["n": 1]))
        var second = Batch()
        let theirs = second.add(Endpoint<Created>.post("notes", parameters: ["n": 2]))
        let client = BatchClient(repository: repository)
        let firstResults = try await client.send(first).get()
        let secondResults = try await client.send(second).get()
        #expect(try firstResults[mine].get().index == 7 && secondResults[theirs].get().index == 8)
        #expect(Self.isRefusedHandle(secondResults[mine]))
    }

    /// Whether a result is the refusal of a handle that belongs to another batch.
    static func isRefusedHandle<Value>(_ result: Result<Value, RepositoryError>) -> Bool {
        guard case .failure(.invalidRequest(let reason, _)) = result else { return false }
        return reason.contains("another batch")
    }

    @Test("Copies of a batch share the calls added before the copy: a handle of a call added to one copy is refused by the other's results")
    func handleOfACopyIsRefused() async throws {
        let (repository, _) = try Self.repository(ScriptedBatch([Self.created([7, 8])]))
        var base = Batch()
        let shared = base.add(Endpoint<Created>.post("notes", parameters: ["n": 0]))
        var one = base
        let mine = one.add(Endpoint<Created>.post("notes", parameters: ["n": 1]))
        var other = base
        other.add(Endpoint<Created>.post("notes", parameters: ["n": 2]))
        let results = try await BatchClient(repository: repository).send(other).get()
        #expect(try results[shared].get().index == 7, "the same call in both copies")
        #expect(Self.isRefusedHandle(results[mine]), "got \(results[mine])")
    }

    @Test("A batch request failing before any was answered fails the call as a whole: nothing ran")
    func firstBatchRequestFails() async throws {
        // Given a batch endpoint that answers 503 from the start.
        let (repository, transport) = try Self.repository(ScriptedBatch([]))
        var batch = Batch()
        for number in 0..<5 { batch.add(Endpoint<Created>.post("notes", parameters: ["n": number])) }

        // When the batch is sent with a limit of 2, then the call fails with the first batch
        // request's error and nothing more is sent.
        guard case .failure(let error) = await BatchClient(repository: repository, limit: 2).send(batch) else {
            Issue.record("expected the batch call to fail")
            return
        }
        #expect(error.statusCode == 503)
        #expect(transport.requests.count == 1)

        // Likewise when the first batch had nothing to send (a request that could not be made):
        // the failing batch request is still the first that ran.
        let unmade = RepositoryError.invalidRequest(reason: "could not be made", request: nil)
        let note = try repository.makeRequest(for: Endpoint<Void>.post("notes"))
        let raw = await BatchClient(repository: repository, limit: 1).sendRaw([.failure(unmade), .success(note), .success(note)])
        guard case .failure(let rawError) = raw else {
            Issue.record("expected the batch call to fail, got \(raw)")
            return
        }
        #expect(rawError.statusCode == 503)
        #expect(transport.requests.count == 2)
    }

    @Test("An unsigned batch answered 401 fails as an unsigned call does (authenticationFailed), not as an expired session")
    func unsignedBatchRefused() async throws {
        let (repository, _) = try Self.repository(batch: .json(.post, "batch", status: 401, #"{"code": "bad_key"}"#))
        var batch = Batch()
        batch.add(Endpoint<Created>.post("signup", parameters: ["n": 1]).withoutSession())
        guard case .failure(.authenticationFailed(let context)) = await BatchClient(repository: repository).send(batch) else {
            Issue.record("expected authenticationFailed")
            return
        }
        #expect(context.response?.statusCode == 401)
    }

    @Test(
        "When the first batch request fails but a call sent on its own was answered, later items are not run and refused ones keep their error"
    )
    func firstFailureWithACallAnsweredAlone() async throws {
        // Given a batch endpoint that answers 503, and a read the chain answers on its own
        let (repository, transport) = try Self.repository(
            batch: StubTransport.Route(.post, "batch") { request in ScriptedBatch([]).answer(request) }, interceptors: [ChainOnlyReads()])
        var batch = Batch()
        let read = batch.add(Endpoint<Created>.get("notes/1").with(ServedInChain.self, true))
        let first = (0..<2).map { batch.add(Endpoint<Created>.post("notes", parameters: ["n": $0])) }
        let ownCredential = batch.add(Endpoint<Created>.post("notes", headers: ["Authorization": "Bearer other"]))
        let later = batch.add(Endpoint<Created>.post("notes", parameters: ["n": 9]))
        // When
        let results = try await BatchClient(repository: repository, limit: 2).send(batch).get()
        // Then the read keeps its answer, the first batch request's items its 503, the refused
        // call its own error, and the call after them is not run; only one batch request went.
        #expect(try results[read].get().index == 42)
        for handle in first { #expect(results[handle].failure?.statusCode == 503) }
        guard case .failure(.invalidRequest(let reason, _)) = results[ownCredential] else {
            Issue.record("expected the call with its own Authorization to keep its refusal, got \(results[ownCredential])")
            return
        }
        #expect(reason.contains("Authorization"))
        guard case .failure(.invalidResponse(let notRun, _)) = results[later] else {
            Issue.record("expected the later call not to run, got \(results[later])")
            return
        }
        #expect(notRun == BatchWire.notRunReason)
        #expect(transport.requests.count == 1)
    }

    @Test("A batch endpoint refusing every batch as too large costs a halving for two items, then a request per item, never more")
    func everythingTooLarge() async throws {
        let (repository, transport) = try Self.repository(batch: .json(.post, "batch", status: 413, #"{"code": "too_large"}"#))
        var batch = Batch()
        let notes = (0..<10).map { batch.add(Endpoint<Created>.post("notes", parameters: ["n": $0])) }
        let results = try await BatchClient(repository: repository, limit: 8).send(batch).get()
        for note in notes { #expect(results[note].failure?.statusCode == 413) }
        // 8, 4, 2, 1 for the first item; 8, 4, 2, 1 again for the second; then one each.
        #expect(transport.requests.count == 16)
    }

    @Test("A refused batch signed for a user is never replayed for another who logged in meanwhile")
    func refusedItemsKeepToTheirUser() async throws {
        let session = SessionManager<APIUser>()
        try session.login(user: APIUser(id: 1, name: "Ann"), credential: Credential(accessToken: "ann", refreshToken: "r"))
        let batchEndpoint = StubTransport.Route(.post, "batch") { request in
            try? session.login(user: APIUser(id: 2, name: "Bob"), token: "bob")
            return TransportResponse(
                statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(#"[{"code": 401, "body": ""}]"#.utf8),
                url: request.url)
        }
        let (repository, transport) = try Self.repository(batch: batchEndpoint, session: session)
        var batch = Batch()
        let note = batch.add(Endpoint<Created>.post("notes", parameters: ["n": 1]))
        let results = try await BatchClient(repository: repository).send(batch).get()
        #expect(results[note].failure?.statusCode == 401)
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer ann"])
    }

    @Test("Items answered 401 after the session replaced its token meanwhile go again with the newer token, without another refresh")
    func refusedAfterANewerToken() async throws {
        // Given a batch endpoint that refuses the old token's items, and a session whose token
        // is replaced (by another call's refresh) while the batch is under way
        let session = SessionManager<APIUser>()
        try session.login(user: APIUser(id: 1, name: "Ann"), credential: Credential(accessToken: "old", refreshToken: "r"))
        let batchEndpoint = StubTransport.Route(.post, "batch") { request in
            guard request.headers["Authorization"] == "Bearer new" else {
                try? session.update(credential: Credential(accessToken: "new", refreshToken: "r"))
                return TransportResponse(
                    statusCode: 200, headers: ["Content-Type": "application/json"],
                    body: Data(#"[{"code": 401, "body": ""}, {"code": 401, "body": ""}]"#.utf8), url: request.url)
            }
            return ScriptedBatch([Self.created([0, 1])]).answer(request)
        }
        let (repository, transport) = try Self.repository(batch: batchEndpoint, session: session)
        var batch = Batch()
        let notes = (0..<2).map { batch.add(Endpoint<Created>.post("notes", parameters: ["n": $0])) }
        // When
        let results = try await BatchClient(repository: repository).send(batch).get()
        // Then both ran with the newer token, and the session is still signed in with it
        #expect(try notes.map { try results[$0].get().index } == [0, 1])
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer old", "Bearer new"])
        #expect(session.credential?.accessToken == "new")
    }

    @Test("A request given to sendRaw with a line break in a header value is refused before the batch goes, as a transport would")
    func itemHeaderInjection() async throws {
        let (repository, transport) = try Self.repository(ScriptedBatch([Self.created([1])]))
        var injected = try repository.makeRequest(for: Endpoint<Void>.post("notes"))
        injected.headers["X-Note"] = "a\r\nX-Admin: 1"
        let fine = try repository.makeRequest(for: Endpoint<Void>.post("notes", parameters: ["n": 1]))
        let answers = try await BatchClient(repository: repository).sendRaw([.success(injected), .success(fine)]).get()
        guard case .failure(.invalidRequest(let reason, _)) = answers[0] else {
            Issue.record("expected invalidRequest, got \(answers[0])")
            return
        }
        #expect(reason.contains("line break"))
        #expect(answers[1].failure == nil)
        let sent = String(decoding: try #require(transport.requests.first?.body?.inMemoryData), as: UTF8.self)
        #expect(!sent.contains("X-Admin"))
    }

    @Test(
        "An item the server did not run, or answered without a code, names its own request, not the batch's answer with the others' bodies")
    func itemFailuresNameTheirOwnRequest() async throws {
        let answer = #"[null, {"headers": []}, {"code": 201, "body": "{\"index\": 2, \"token\": \"secret\"}"}]"#
        let (repository, _) = try Self.repository(ScriptedBatch([answer]))
        var batch = Batch()
        let notes = (0..<3).map { batch.add(Endpoint<Created>.post("notes/\($0)")) }
        let results = try await BatchClient(repository: repository).send(batch).get()
        for (handle, reason) in zip(notes.prefix(2), [BatchWire.notRunReason, BatchWire.noCodeReason]) {
            guard case .failure(.invalidResponse(let found, let context)) = results[handle] else {
                Issue.record("expected invalidResponse, got \(results[handle])")
                continue
            }
            #expect(found == reason)
            #expect(context.request.url.path.hasPrefix("/notes/"))
            #expect(context.response == nil)
        }
        #expect(try results[notes[2]].get().index == 2)
    }

    /// An option this feature serves in the chain, and must: reading it requires the observer.
    enum ServedInChain: RequestOptionKey {
        static let defaultValue = false
        static var requiredHandler: String? { "add ChainOnlyReads" }
    }

    /// An observer that answers calls carrying ``ServedInChain`` itself, in the chain, and counts
    /// the exchanges reported to it.
    final class ChainOnlyReads: ExchangeObserver, Sendable {
        let reported = Mutex<[String]>([])

        var handledOptions: [any RequestOptionKey.Type] { [ServedInChain.self] }

        func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
            async throws(RepositoryError) -> TransportResponse
        {
            guard context.options[ServedInChain.self] else { return try await next(request) }
            return TransportResponse(
                statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"index": 42}"#.utf8), url: request.url)
        }

        func observe(_ request: TransportRequest, answeredBy response: TransportResponse, context: RequestContext) async {
            reported.withLock { $0.append(request.url.path) }
        }

        func requiresChain(_ request: TransportRequest, context: RequestContext) -> Bool { context.options[ServedInChain.self] }
    }

    @Test("A call an observer serves only in the chain goes through it on its own; an unhandled required option is refused, not sent")
    func callsServedInTheChainGoAlone() async throws {
        let script = ScriptedBatch([Self.created([7])])
        let transport = StubTransport(routes: [StubTransport.Route(.post, "batch") { request in script.answer(request) }])
        let observer = ChainOnlyReads()
        var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5)
        configuration.interceptors = [observer]
        let session = SessionManager<APIUser>()
        try session.login(user: APIUser(id: 1, name: "Ann"), token: "ann-token")
        let repository = APIRepository(configuration: configuration, sessionManager: session, transport: transport)
        var batch = Batch()
        let inChain = batch.add(Endpoint<Created>.get("notes/1").with(ServedInChain.self, true))
        let inBatch = batch.add(Endpoint<Created>.post("notes", parameters: ["n": 7]))

        let results = try await BatchClient(repository: repository).send(batch).get()

        #expect(try results[inChain].get().index == 42)
        #expect(try results[inBatch].get().index == 7)
        // One batch request, carrying only the other call; only that call is reported.
        #expect(transport.requests.count == 1)
        let sent = try #require(transport.requests.first?.body?.inMemoryData)
        let wire = try #require(try JSONSerialization.jsonObject(with: sent) as? [String: Any])
        #expect((wire["batch"] as? [Any])?.count == 1)
        #expect(observer.reported.withLock { $0 } == ["/notes"])

        // Without the observer, the option is required and nobody handles it: refused, not sent.
        let bare = APIRepository(
            configuration: try NetworkingConfiguration(useSecureConnection: false, domainURL: "api.test", timeout: 5),
            sessionManager: session, transport: transport)
        var refused = Batch()
        let unhandled = refused.add(Endpoint<Created>.get("notes/1").with(ServedInChain.self, true))
        let refusedResults = try await BatchClient(repository: bare).send(refused).get()
        guard case .failure(.invalidRequest(let reason, _)) = refusedResults[unhandled] else {
            Issue.record("expected the unhandled option to be refused, got \(refusedResults[unhandled])")
            return
        }
        #expect(reason.contains("add ChainOnlyReads"))
        #expect(transport.requests.count == 1)
    }

    @Test("An item's answer is handed on as UTF-8 text: its own length, compression and charset fields are not kept")
    func itemAnswersDescribeTheirUTF8Body() throws {
        let batch = TransportResponse(
            statusCode: 200, headers: ["Content-Type": "application/json"],
            body: Data(
                #"[{"code": 200, "headers": [{"name": "Content-Type", "value": "text/plain; Charset=\"ISO-8859-1\"; format=flowed"}, {"name": "Content-Length", "value": "4"}, {"name": "Content-Encoding", "value": "gzip"}, {"name": "ETag", "value": "\"v1\""}], "body": "café"}]"#
                    .utf8))
        let request = TransportRequest(method: .post, url: try #require(URL(string: "https://api.test/batch")))
        let item = try BatchWire.responses(in: batch, expected: 1, request: request).get()[0].get()
        #expect(item.headers["Content-Type"] == "text/plain; charset=utf-8; format=flowed")
        #expect(item.headers["Content-Length"] == nil && item.headers["Content-Encoding"] == nil)
        #expect(item.headers["ETag"] == "\"v1\"")
        #expect(item.text == "café")
    }

    @Test(
        "A call for the base URL itself cannot be an item (its relative_url would be empty), and the reason says so",
        arguments: ["https://api.test/v1", "https://api.test/v1/", "https://api.test/v1?page=2", "https://api.test/v1/?page=2"])
    func baseURLItself(url: String) throws {
        let base = try #require(URL(string: "https://api.test/v1"))
        let request = TransportRequest(method: .post, url: try #require(URL(string: url)))
        guard case .failure(.invalidRequest(let reason, _)) = BatchWire.item(for: request, baseURL: base) else {
            Issue.record("expected the item to be refused")
            return
        }
        #expect(reason.contains("the base URL itself"), "\(reason)")
        let sibling = TransportRequest(method: .post, url: try #require(URL(string: "https://api.test/v10/notes")))
        guard case .failure(.invalidRequest(let other, _)) = BatchWire.item(for: sibling, baseURL: base) else {
            Issue.record("expected the sibling to be refused")
            return
        }
        #expect(other.contains("not under the base URL"), "\(other)")
        let under = TransportRequest(method: .post, url: try #require(URL(string: "https://api.test/v1/notes?x=1")))
        #expect(throws: Never.self) { try BatchWire.item(for: under, baseURL: base).get() }
    }
}

import Foundation
import Networking
import Testing

@testable import NetworkingOffline

/// The batch client against the test API's Facebook-style `/batch`.
@Suite("Batch client end to end")
struct BatchClientIntegrationTests {
    struct Book: Decodable, Sendable {
        let id: Int
        let title: String
    }
    struct Created: Decodable, Sendable { let index: Int }

    enum BatchError: CustomRepositoryErrorType, Equatable {
        case notFound
        var name: String { "notFound" }
    }

    static func repository() async throws -> APIRepository {
        let base = try OfflineTestServers.apiURL()
        let session = SessionManager<APIUser>()
        let repository = APIRepository(
            configuration: try OfflineTestServers.configuration(base), sessionManager: session,
            customErrors: [.status(404, BatchError.notFound)])
        let login = try await repository.login()
        try session.login(user: login.user, token: login.token)
        return repository
    }

    @Test("Each item is decoded to its own type with its own status honoured, custom errors included; more items than the limit are split")
    func typedItems() async throws {
        let repository = try await Self.repository()
        let stream = UUID().uuidString
        var batch = Batch()
        let book = batch.add(Endpoint<Book>.get("books/3"))
        let missing = batch.add(Endpoint<Book>.get("books/99999"))
        var notes: [BatchHandle<Created>] = []
        for number in 0..<5 { notes.append(batch.add(Endpoint<Created>.post("journal/\(stream)", parameters: ["n": number]))) }
        let rejected = batch.add(Endpoint<Void>(.post, "journal/\(stream)", parameters: ["n": 99], query: ["fail": 422]))
        let results = try await BatchClient(repository: repository, limit: 3).send(batch).get()
        #expect(results.count == 8)
        #expect(try results[book].get().id == 3)
        guard case .failure(let notFound) = results[missing] else {
            Issue.record("expected the 404")
            return
        }
        #expect(notFound.customError(as: BatchError.self) == .notFound)
        #expect(try notes.map { try results[$0].get().index } == [0, 1, 2, 3, 4])
        guard case .failure(let invalid) = results[rejected] else {
            Issue.record("expected the 422")
            return
        }
        #expect(invalid.statusCode == 422)
        #expect(results.failures.map(\.position) == [missing.position, rejected.position])
        #expect(results.failures.map(\.position) == [1, 7])
        #expect(results.failures.map(\.error.statusCode) == [404, 422])
        let journal = try await repository.journal(stream)
        #expect(journal.entries.map { $0.body["n"] } == [0, 1, 2, 3, 4])
        #expect(journal.entries.allSatisfy { $0.userId == 1 }, "items inherit the batch's Authorization")
    }

    /// What the test API's `/echo` says of the request it got.
    struct Echo: Decodable, Sendable {
        let method: String
        let headers: [String: String]
        let json: [String: Int]?
    }

    @Test("An item answered with a redirect is followed on its own, as its call would be: 307 and 308 keep the write, 303 reads")
    func redirectedItemsAreFollowed() async throws {
        let repository = try await Self.repository()
        let stream = UUID().uuidString
        let api = try #require(URLComponents(url: try OfflineTestServers.apiURL(), resolvingAgainstBaseURL: false))
        var batch = Batch()
        let moved = [307, 308].map { status in
            batch.add(
                Endpoint<Created>(.post, "redirect/\(status)", parameters: ["n": status], query: ["to": "/api/v1/journal/\(stream)"]))
        }
        let seeOther = batch.add(Endpoint<Echo>(.post, "redirect/303", parameters: ["n": 303]))
        // The test API under another name: another origin, where the user's token must not go.
        let elsewhere = batch.add(
            Endpoint<Echo>(
                .post, "echo", parameters: ["n": 1], headers: ["X-Move-To": "http://localhost:\(api.port ?? 0)", "X-Move-Status": "307"]))
        let plain = batch.add(Endpoint<Created>.post("journal/\(stream)", parameters: ["n": 2]))
        let results = try await BatchClient(repository: repository).send(batch).get()
        // The plain write ran in the batch; the moved ones after it, where they were sent.
        #expect(try results[plain].get().index == 0)
        #expect(try moved.map { try results[$0].get().index } == [1, 2])
        let journal = try await repository.journal(stream)
        #expect(journal.entries.map { $0.body["n"] } == [2, 307, 308])
        #expect(journal.entries.allSatisfy { $0.userId == 1 }, "a redirect on the same origin is signed")
        let read = try results[seeOther].get()
        #expect(read.method == "GET" && read.json == nil)
        let echoed = try results[elsewhere].get()
        #expect(echoed.method == "POST" && echoed.json == ["n": 1])
        #expect(!echoed.headers.keys.contains { $0.lowercased() == "authorization" }, "\(echoed.headers)")
    }

    /// Logs in again for a new token: the test API's stand-in for a refresh.
    struct LoginAgain: TokenRefresher {
        let base: URL
        func refreshCredential(_ credential: Credential) async -> Result<Credential, RepositoryError> {
            do {
                let login = try await APIRepository(configuration: try OfflineTestServers.configuration(base)).login()
                return .success(Credential(accessToken: login.token))
            } catch {
                return .failure(.invalidRequest(reason: "logging in again failed: \(error)", request: nil))
            }
        }
    }

    @Test("Items answered 401 inside a batch refresh the session, and go again once with the new token")
    func refusedItemsRefreshTheSession() async throws {
        // Given a session whose token the server has expired (the batch endpoint itself does not check it)
        let base = try OfflineTestServers.apiURL()
        let session = SessionManager<APIUser>(refresher: LoginAgain(base: base))
        let repository = APIRepository(configuration: try OfflineTestServers.configuration(base), sessionManager: session)
        let login = try await repository.login()
        // (A refresh token, so that the session may refresh; LoginAgain does not read it.)
        try session.login(user: login.user, credential: Credential(accessToken: login.token, refreshToken: "log-in-again"))
        try await repository.expire(login.token)
        // When a batch of writes goes
        let stream = UUID().uuidString
        var batch = Batch()
        let notes = (0..<3).map { batch.add(Endpoint<Created>.post("journal/\(stream)", parameters: ["n": $0])) }
        let results = try await BatchClient(repository: repository).send(batch).get()
        // Then the session was refreshed and every write ran, once
        #expect(try notes.map { try results[$0].get().index } == [0, 1, 2])
        #expect(session.credential?.accessToken != login.token)
        #expect(try await repository.journal(stream).entries.map { $0.body["n"] } == [0, 1, 2])
    }

    @Test("A batch the endpoint refuses as too large (413) goes again in halves, down to what it takes; every item runs once, in order")
    func tooLargeBatchesAreSplit() async throws {
        let repository = try await Self.repository()
        let stream = UUID().uuidString
        var batch = Batch()
        // Each item carries at least its 45-byte path: eight are over the 700 bytes the endpoint
        // takes; one is well under.
        let notes = (0..<8).map { batch.add(Endpoint<Created>.post("journal/\(stream)", parameters: ["n": $0])) }
        let results = try await BatchClient(repository: repository, limit: 8, query: ["max_bytes": 700]).send(batch).get()
        #expect(try notes.map { try results[$0].get().index } == Array(0..<8))
        #expect(try await repository.journal(stream).entries.map { $0.body["n"] } == [0, 1, 2, 3, 4, 5, 6, 7])
    }

    @Test("An item too large even alone (413) keeps that error; the items after it still run, in one batch request")
    func oneItemTooLargeAlone() async throws {
        let repository = try await Self.repository()
        let stream = UUID().uuidString
        var batch = Batch()
        let big = batch.add(Endpoint<Created>.post("journal/\(stream)", parameters: ["n": 0, "text": String(repeating: "x", count: 800)]))
        let notes = (1...3).map { batch.add(Endpoint<Created>.post("journal/\(stream)", parameters: ["n": $0])) }
        let results = try await BatchClient(repository: repository, limit: 8, query: ["max_bytes": 700]).send(batch).get()
        #expect(results[big].failure?.statusCode == 413)
        #expect(try notes.map { try results[$0].get().index } == [0, 1, 2])
        #expect(try await repository.journal(stream).entries.map { $0.body["n"] } == [1, 2, 3])
    }

    @Test("A call made without the session goes in an unsigned batch request of its own: it never inherits the user's Authorization")
    func unsignedCallsAreNotSignedByTheBatch() async throws {
        let repository = try await Self.repository()
        let stream = UUID().uuidString
        var batch = Batch()
        let signed = batch.add(Endpoint<Created>.post("journal/\(stream)", parameters: ["n": 0]))
        let unsigned = batch.add(Endpoint<Created>.post("journal/\(stream)", parameters: ["n": 1]).withoutSession())
        let signedAgain = batch.add(Endpoint<Created>.post("journal/\(stream)", parameters: ["n": 2]))
        let results = try await BatchClient(repository: repository).send(batch).get()
        #expect(try results[signed].get().index == 0)
        guard case .failure(let refused) = results[unsigned] else {
            Issue.record("expected the unsigned write to be refused")
            return
        }
        #expect(refused.statusCode == 401)
        #expect(try results[signedAgain].get().index == 1)
        #expect(try await repository.journal(stream).entries.map { $0.body["n"] } == [0, 2])
    }

    @Test("A route that needs no session goes in the unsigned batch request, as the route says (not the endpoint made by name)")
    func routesWithoutSessionAreNotSigned() async throws {
        let repository = try await APIRepository.withJournalRoutes()
        let stream = UUID().uuidString
        var batch = Batch()
        let signed = batch.add(Endpoint<Created>.route("write", pathVariables: ["stream": stream], parameters: ["n": 0]))
        let unsigned = batch.add(Endpoint<Created>.route("publicWrite", pathVariables: ["stream": stream], parameters: ["n": 1]))
        let results = try await BatchClient(repository: repository).send(batch).get()
        #expect(try results[signed].get().index == 0)
        // The journal takes only signed writes: the route's unsigned one is refused.
        #expect(results[unsigned].failure?.statusCode == 401)
        #expect(try await repository.journal(stream).entries.map { $0.body["n"] } == [0])
    }

    @Test("A failure of the batch call itself is told apart from failures of its items")
    func batchFailure() async throws {
        let repository = try await Self.repository()
        var batch = Batch()
        batch.add(Endpoint<Book>.get("books/1"))
        let failed = await BatchClient(repository: repository, query: ["fail": 503]).send(batch)
        guard case .failure(let error) = failed else {
            Issue.record("expected the batch call to fail")
            return
        }
        #expect(error.statusCode == 503)
    }

    @Test("A batch request the server refuses after an earlier one ran keeps what ran; the items after it are not sent")
    func laterBatchRequestRefused() async throws {
        // Given a limit of 51 (the server takes at most 50 items): the first batch holds 2 notes
        // and 49 requests that could not be made, so only 2 items go on the wire; the second
        // holds 51 notes, which the server refuses as a whole (400 batch_too_large) without
        // running any; the third holds 1 note.
        let repository = try await Self.repository()
        let stream = UUID().uuidString
        func note(_ number: Int) throws -> Result<TransportRequest, RepositoryError> {
            let request = try repository.makeRequest(for: repository.note(stream, ["n": number]))
            return .success(request)
        }
        let unmade = RepositoryError.invalidRequest(reason: "could not be made", request: nil)
        var requests: [Result<TransportRequest, RepositoryError>] = []
        for number in 0..<2 { try requests.append(note(number)) }
        for _ in 0..<49 { requests.append(.failure(unmade)) }
        for number in 100..<151 { try requests.append(note(number)) }
        let last = try note(200)
        requests.append(last)

        // When they are sent.
        let answers = try await BatchClient(repository: repository, limit: 51).sendRaw(requests).get()

        // Then the first batch's notes were answered and the unmade requests keep their failure,
        try #require(answers.count == 103)
        #expect(try answers[0].get().statusCode == 201)
        #expect(try answers[1].get().statusCode == 201)
        for answer in answers[2..<51] {
            guard case .failure(.invalidRequest(let reason, _)) = answer else {
                Issue.record("expected the request's own failure, got \(answer)")
                continue
            }
            #expect(reason == "could not be made")
        }
        // the refused batch's items get its error,
        for answer in answers[51..<102] {
            guard case .failure(let error) = answer else {
                Issue.record("expected the batch request's 400, got \(answer)")
                continue
            }
            #expect(error.statusCode == 400)
        }
        // the note after it was not sent, and fails as an item the server did not run,
        guard case .failure(.invalidResponse(let reason, let context)) = answers[102], case .success(let lastRequest) = last else {
            Issue.record("expected the not-run failure, got \(answers[102])")
            return
        }
        #expect(reason == BatchWire.notRunReason)
        #expect(context.request == lastRequest.summary)
        // and only the first batch's notes reached the server.
        let journal = try await repository.journal(stream)
        #expect(journal.entries.map { $0.body["n"] } == [0, 1])
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

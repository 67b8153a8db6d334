import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// A model that is deliberately not `Decodable`: only an endpoint's own decoding step can make it.
private struct Shelf: Sendable, Equatable {
    var titles: [String]
    var total: Int
    var etag: String?
}

/// An error of the caller's own, neither a `DecodingError` nor a `RepositoryError`.
private struct ShelfRule: Error, CustomStringConvertible {
    let detail: String
    var description: String { "shelf rule broken: \(detail)" }
}

@Suite("Endpoint.decoding: custom decoding steps")
struct CustomDecodingTests {
    private static let booksJSON =
        #"{"data": [{"id": 1, "title": "Dune", "genre": "fiction"}, {"id": 2, "title": "Cosmos", "genre": "science"}], "page": {"current": 1, "total": 7}}"#

    private func repository(
        _ routes: [StubTransport.Route], hook: Recorder<DecodingFailure>? = nil
    ) throws -> (TestRepository, StubTransport) {
        let transport = StubTransport(routes: routes)
        var handler: DecodingFailureHandler?
        if let hook { handler = { hook.record($0) } }
        let configuration = try makeConfiguration(decodingFailureHandler: handler)
        return (TestRepository(configuration: configuration, transport: transport), transport)
    }

    @Test("For a Decodable type, the decoding step replaces the default decoding")
    func overridesDefault() async throws {
        // Given: the body is not a Book, so the default decoding would fail
        let (repository, _) = try repository([.json(.get, "books/1", #"{"data": {"id": 1, "title": "dune", "genre": "fiction"}}"#)])
        let endpoint = Endpoint<Book>.get("books/1").decoding { input in
            var book = try input.decode(Book.self, at: "data")
            book.title = book.title.capitalized
            return book
        }
        // When
        let book = try await repository.performRequest(endpoint).get()
        // Then
        #expect(book == Book(id: 1, title: "Dune", genre: .fiction))
        let plain = await repository.performRequest(Endpoint<Book>.get("books/1"))
        guard case .decodeError? = plain.failure else {
            Issue.record("the default decoding should fail on this body, got \(plain)")
            return
        }
    }

    @Test("A non-Decodable type is made by its decoding step, with decode(_:at:), json() and the response")
    func nonDecodable() async throws {
        // Given
        let (repository, _) = try repository([.status(.get, "books", 200, json: Self.booksJSON, headers: ["ETag": "\"p1\""])])
        let endpoint = Endpoint<Shelf>.get("books").decoding { input in
            let titles = try input.decode([Book].self, at: "data").map(\.title)
            let total = try input.json()["page"]?["total"]?.intValue ?? -1
            return Shelf(titles: titles, total: total, etag: input.response.headers["ETag"])
        }
        // When
        let shelf = try await repository.performRequest(endpoint).get()
        // Then
        #expect(shelf == Shelf(titles: ["Dune", "Cosmos"], total: 7, etag: "\"p1\""))
    }

    @Test("decode(_:at:) follows the configuration's decoder strategies")
    func decoderStrategies() async throws {
        // Given
        struct Stamp: Decodable, Sendable {
            let createdAt: Date
        }
        let transport = StubTransport(routes: [.json(.get, "stamp", #"{"item": {"created_at": "2024-01-02T03:04:05Z"}}"#)])
        let configuration = try makeConfiguration()
        configuration.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
        configuration.jsonDecoder.dateDecodingStrategy = .iso8601
        let repository = TestRepository(configuration: configuration, transport: transport)
        let endpoint = Endpoint<Date>.get("stamp").decoding { input in try input.decode(Stamp.self, at: "item").createdAt }
        // When
        let date = try await repository.performRequest(endpoint).get()
        // Then
        #expect(date == Date(timeIntervalSince1970: 1_704_164_645))
    }

    @Test("An endpoint for a non-Decodable type without a decoding step fails with .invalidRequest and sends nothing")
    func missingDecodingStep() async throws {
        // Given
        let (repository, transport) = try repository([.json(.get, "books", Self.booksJSON)])
        // When
        let result = await repository.performRequest(Endpoint<Shelf>.get("books"))
        // Then
        guard case .invalidRequest(let reason, let request)? = result.failure else {
            Issue.record("expected .invalidRequest, got \(result)")
            return
        }
        #expect(reason.contains("Shelf"))
        #expect(reason.contains("decoding"))
        #expect(request?.url.path == "/api/v1/books")
        #expect(transport.requests.isEmpty)
    }

    @Test("A DecodingError inside reaches the hook with request, response, status and coding path, as .decodeError")
    func decodingErrorReachesHook() async throws {
        // Given
        let hook = Recorder<DecodingFailure>()
        let body = #"{"data": [{"id": 1, "title": "Dune", "genre": "fiction"}, {"id": "two", "title": "Cosmos", "genre": "science"}]}"#
        let (repository, _) = try repository([.status(.get, "books", 200, json: body, headers: ["X-Trace": "t-1"])], hook: hook)
        let endpoint = Endpoint<Shelf>.get("books").decoding { input in
            Shelf(titles: try input.decode([Book].self, at: "data").map(\.title), total: 0)
        }
        // When
        let result = await repository.performRequest(endpoint)
        // Then
        guard case .decodeError(let failure)? = result.failure else {
            Issue.record("expected .decodeError, got \(result)")
            return
        }
        #expect(failure.kind == .mismatch)
        #expect(failure.codingPath == "data[1].id")
        #expect(failure.entityType == "Shelf")
        #expect(failure.statusCode == 200)
        #expect(failure.context.request.method == .get)
        #expect(failure.context.request.url.path == "/api/v1/books")
        #expect(failure.context.response?.headers["X-Trace"] == "t-1")
        #expect(failure.context.response?.body == Data(body.utf8))
        #expect(hook.all.count == 1)
        #expect(hook.all.first?.codingPath == "data[1].id")
        #expect(hook.all.first?.context.response?.statusCode == 200)
        #expect(hook.all.first?.context.request.url.path == "/api/v1/books")
    }

    @Test("A DecodingError on a body that is not JSON is .jsonError, and the hook is told")
    func notJSON() async throws {
        // Given
        let hook = Recorder<DecodingFailure>()
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "books") { request throws(TransportError) in
                TransportResponse(
                    statusCode: 200, headers: ["Content-Type": "text/html"], body: Data("<html>oops</html>".utf8), url: request.url)
            }
        ])
        let repository = TestRepository(
            configuration: try makeConfiguration(decodingFailureHandler: { hook.record($0) }), transport: transport)
        // When
        let viaDecode = await repository.performRequest(
            Endpoint<Shelf>.get("books").decoding { input in Shelf(titles: try input.decode([String].self), total: 0) })
        let viaJSON = await repository.performRequest(
            Endpoint<Shelf>.get("books").decoding { input in Shelf(titles: [], total: try input.json()["total"]?.intValue ?? 0) })
        // Then
        for result in [viaDecode, viaJSON] {
            guard case .jsonError(let failure)? = result.failure else {
                Issue.record("expected .jsonError, got \(result)")
                continue
            }
            #expect(failure.kind == .malformedJSON)
            #expect(failure.statusCode == 200)
            #expect(failure.bodyExcerpt.contains("oops"))
        }
        #expect(hook.all.map(\.kind) == [.malformedJSON, .malformedJSON])
    }

    @Test("Another error inside becomes .decodeError whose reason is its description")
    func otherError() async throws {
        // Given
        let hook = Recorder<DecodingFailure>()
        let (repository, _) = try repository([.json(.get, "books", Self.booksJSON)], hook: hook)
        let endpoint = Endpoint<Shelf>.get("books").decoding { _ in throw ShelfRule(detail: "too few books") }
        // When
        let result = await repository.performRequest(endpoint)
        // Then
        guard case .decodeError(let failure)? = result.failure else {
            Issue.record("expected .decodeError, got \(result)")
            return
        }
        #expect(failure.reason.contains("shelf rule broken: too few books"))
        #expect(failure.context.response?.statusCode == 200)
        #expect(hook.all.count == 1)
    }

    @Test("A RepositoryError thrown inside comes back unchanged")
    func repositoryErrorUnchanged() async throws {
        // Given
        let (repository, _) = try repository([.json(.get, "books", Self.booksJSON)])
        let endpoint = Endpoint<Shelf>.get("books").decoding { input in
            throw RepositoryError.invalidResponse(
                reason: "the shelf is upside down",
                context: ErrorContext(request: RequestSummary(method: .head, url: input.response.url ?? URL(fileURLWithPath: "/"))))
        }
        let decodable = Endpoint<Book>.get("books").decoding { _ in throw RepositoryError.invalidURL(reason: "mine") }
        // When
        let result = await repository.performRequest(endpoint)
        let decodableResult = await repository.performRequest(decodable)
        // Then
        guard case .invalidResponse(let reason, let context)? = result.failure else {
            Issue.record("expected the thrown .invalidResponse, got \(result)")
            return
        }
        #expect(reason == "the shelf is upside down")
        #expect(context.request.method == .head)
        guard case .invalidURL(reason: "mine")? = decodableResult.failure else {
            Issue.record("expected the thrown .invalidURL, got \(decodableResult)")
            return
        }
    }

    @Test("The decoding step runs only for a 2xx response; other statuses keep their errors")
    func onlyForSuccess() async throws {
        // Given
        let calls = Recorder<Int>()
        let (repository, _) = try repository([.status(.get, "books", 404, json: #"{"code": "not_found"}"#)])
        let endpoint = Endpoint<Shelf>.get("books").decoding { input in
            calls.record(input.response.statusCode)
            return Shelf(titles: [], total: 0)
        }
        // When
        let result = await repository.performRequest(endpoint)
        // Then
        guard case .requestError(let context)? = result.failure else {
            Issue.record("expected .requestError, got \(result)")
            return
        }
        #expect(context.statusCode == 404)
        #expect(calls.all.isEmpty)
    }

    @Test("A decoding step survives copies: a session-less copy with options still decodes with it")
    func survivesCopies() async throws {
        // Given
        enum Marker: RequestOptionKey { static let defaultValue = 0 }
        let (repository, transport) = try repository([.json(.post, "login", #"{"token": "abc"}"#)])
        let endpoint = Endpoint<String>.post("login", parameters: ["user": "ann"])
            .decoding { input in try input.json()["token"]?.stringValue ?? "" }
            .withoutSession()
            .with(Marker.self, 3)
        // When
        let token = try await repository.performRequest(endpoint).get()
        // Then
        #expect(token == "abc")
        #expect(transport.requests.count == 1)
    }

    @Test("The decoding step of an endpoint of a RepositoryResponse, of Void or of a raw response is run, not dropped")
    func stepsOfOtherResponseTypes() async throws {
        // Given
        let body = #"{"data": {"id": 1, "title": "dune", "genre": "fiction"}, "ok": false}"#
        let hook = Recorder<DecodingFailure>()
        let (repository, _) = try repository([.status(.get, "books/1", 200, json: body, headers: ["ETag": "\"b1\""])], hook: hook)
        let unused = RequestSummary(method: .get, url: URL(fileURLWithPath: "/"))
        // When: the value of a RepositoryResponse is the step's; the rest is the response's
        let response = try await repository.performRequest(
            Endpoint<RepositoryResponse<Book>>.get("books/1").decoding { input in
                RepositoryResponse(value: try input.decode(Book.self, at: "data"), statusCode: 0, request: unused)
            }
        ).get()
        let valueOnly = try await repository.performRequest(
            Endpoint<RepositoryResponse<Book>>.get("books/1").decoding { try $0.decode(Book.self, at: "data") }
        ).get()
        let shelf = try await repository.performRequest(
            Endpoint<RepositoryResponse<Shelf>>.get("books/1").decoding { input in
                Shelf(titles: [try input.decode(Book.self, at: "data").title], total: 1)
            }
        ).get()
        // Then
        for response in [response, valueOnly] {
            #expect(response.value == Book(id: 1, title: "dune", genre: .fiction))
            #expect(response.statusCode == 200)
            #expect(response.headers["ETag"] == "\"b1\"")
        }
        #expect(shelf.value == Shelf(titles: ["dune"], total: 1))
        #expect(shelf.statusCode == 200 && shelf.request.url.path.hasSuffix("books/1"))
        // When: the step of a call that ignores the body checks it, and its failure is a decoding failure
        let check: @Sendable (DecodingInput) throws -> Void = { input in
            guard try input.json()["ok"] == .bool(true) else { throw ShelfRule(detail: "not ok") }
        }
        let void = await repository.performRequest(Endpoint<Void>.get("books/1").decoding(check))
        let voidResponse = await repository.performRequest(
            Endpoint<RepositoryResponse<Void>>.get("books/1").decoding { input in
                try check(input)
                return RepositoryResponse(value: (), statusCode: 0, request: unused)
            })
        // Then
        for failure in [void.failure, voidResponse.failure] {
            guard case .decodeError(let decoding)? = failure else {
                Issue.record("expected the check's failure, got \(String(describing: failure))")
                continue
            }
            #expect(decoding.reason.contains("not ok"))
        }
        #expect(hook.all.count == 2)
        // When: a feature reads the answer itself (a batch's item), the check runs too
        let endpoint = Endpoint<Void>.get("books/1").decoding(check)
        let request = try repository.makeRequest(for: endpoint)
        let answer = TransportResponse(statusCode: 200, body: Data(body.utf8))
        guard case .decodeError? = repository.interpret(answer, to: request, for: endpoint).failure else {
            Issue.record("expected the check's failure from interpret")
            return
        }
        #expect(hook.all.count == 3)
        guard case .decodeError? = await repository.performPollingRequest(Endpoint<Void>.get("books/1").decoding(check)).failure else {
            Issue.record("expected the check's failure from a polled call")
            return
        }
        // When: a raw response's step makes the response returned
        let raw = try await repository.performRawRequest(
            Endpoint<TransportResponse>.get("books/1").decoding { input in
                TransportResponse(statusCode: input.response.statusCode, body: Data("replaced".utf8))
            }
        ).get()
        // Then
        #expect(raw.body == Data("replaced".utf8))
    }
}

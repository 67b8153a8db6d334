import Foundation
import Networking
import NetworkingTestSupport
import Testing

private enum LibraryError: String, CustomRepositoryErrorType {
    case closed = "library_closed"
}

@Suite("Custom error mapping")
struct CustomErrorMappingTests {
    let failures = Recorder<DecodingFailure>()

    /// The error of a `GET books` answered with `status` and `json`.
    private func mappedError(
        status: Int, json: String? = nil, repositoryErrors: CustomErrorMapping = [],
        endpointErrors: CustomErrorMapping = []
    ) async throws -> RepositoryError {
        let failures = failures
        let repository = TestRepository(
            configuration: try makeConfiguration(decodingFailureHandler: { failures.record($0) }),
            transport: StubTransport(routes: [.status(.get, "books", status, json: json)]),
            customErrors: repositoryErrors)
        let result = await repository.performRequest(Endpoint<[Book]>.get("books").mappingErrors(endpointErrors))
        return try #require(result.failure)
    }

    @Test("A rule matches its exact status only", arguments: [(400, true), (404, false), (4000, false), (40, false)])
    func exactStatus(status: Int, matches: Bool) async throws {
        // Given a rule for 400
        // When the server answers `status`
        let error = try await mappedError(status: status, repositoryErrors: [.status(400, BooksError.badRequest)])
        // Then only 400 becomes the custom error
        if matches {
            #expect(error.customError(as: BooksError.self) == .badRequest)
        } else {
            guard case .requestError(let context) = error else {
                Issue.record("expected requestError, got \(error)")
                return
            }
            #expect(context.statusCode == status)
        }
    }

    @Test(
        "API-code rules are tried before plain status rules, whatever the written order",
        arguments: [
            (#"{"code": "duplicate_isbn"}"#, BooksError.duplicate), (#"{"code": "other"}"#, .conflict),
            (#"{"message": "no code"}"#, .conflict), (nil, .conflict), ("<html>", .conflict),
            (#"{"code": 1062}"#, .gone),
        ] as [(String?, BooksError)])
    func apiCodes(body: String?, expected: BooksError) async throws {
        // Given
        let mapping: CustomErrorMapping = [
            .status(409, BooksError.conflict),
            .status(409, apiCode: "duplicate_isbn", BooksError.duplicate),
            .status(409, apiCode: "1062", BooksError.gone),
        ]
        // When
        let error = try await mappedError(status: 409, json: body, repositoryErrors: mapping)
        // Then
        #expect(error.customError(as: BooksError.self) == expected, "\(error)")
    }

    @Test("The API code is read at the mapping's key path")
    func apiCodeKeyPath() async throws {
        // Given
        let mapping = CustomErrorMapping([.status(409, apiCode: "duplicate_isbn", BooksError.duplicate)], apiCodeKeyPath: "error.code")
        // When
        let nested = try await mappedError(status: 409, json: #"{"error": {"code": "duplicate_isbn"}}"#, repositoryErrors: mapping)
        let topLevel = try await mappedError(status: 409, json: #"{"code": "duplicate_isbn"}"#, repositoryErrors: mapping)
        // Then
        #expect(nested.customError(as: BooksError.self) == .duplicate)
        #expect(topLevel.customError(as: BooksError.self) == nil)
    }

    @Test("Plain rules for the same status are tried in the order written")
    func writtenOrder() async throws {
        let error = try await mappedError(
            status: 404, repositoryErrors: [.status(404, BooksError.notFound), .status(404, BooksError.gone)])
        #expect(error.customError(as: BooksError.self) == .notFound)
    }

    @Test("The endpoint's mapping is tried before the repository's")
    func endpointFirst() async throws {
        // Given
        let repositoryErrors: CustomErrorMapping = [404: BooksError.notFound, 409: BooksError.conflict]
        let endpointErrors: CustomErrorMapping = [404: BooksError.gone]
        // When
        let fromEndpoint = try await mappedError(status: 404, repositoryErrors: repositoryErrors, endpointErrors: endpointErrors)
        let fromRepository = try await mappedError(status: 409, repositoryErrors: repositoryErrors, endpointErrors: endpointErrors)
        // Then
        #expect(fromEndpoint.customError(as: BooksError.self) == .gone)
        #expect(fromRepository.customError(as: BooksError.self) == .conflict)
    }

    @Test("A rule may decode the error body into the custom error")
    func validationBody() async throws {
        // Given
        let mapping: CustomErrorMapping = [.status(422, decoding: ValidationBody.self) { BooksError.validation($0.fields) }]
        // When
        let error = try await mappedError(
            status: 422, json: #"{"fields": {"title": "can't be blank"}}"#, repositoryErrors: mapping)
        // Then
        #expect(error.customError(as: BooksError.self) == .validation(["title": "can't be blank"]))
        guard case .customError(let name, _, let context) = error else {
            Issue.record("expected customError, got \(error)")
            return
        }
        #expect(name == "validation")
        #expect(context.statusCode == 422)
        #expect(context.request.url.path == "/api/v1/books")
        #expect(failures.all.isEmpty)
    }

    @Test("An empty error body decodes as nil for an optional body type, as on the success path")
    func emptyOptionalBody() async throws {
        // Given
        let mapping: CustomErrorMapping = [.status(404, decoding: ValidationBody?.self) { BooksError.validation($0?.fields ?? [:]) }]
        // When
        let error = try await mappedError(status: 404, repositoryErrors: mapping)
        // Then: matched, and nothing told to the hook
        #expect(error.customError(as: BooksError.self) == .validation([:]))
        #expect(failures.all.isEmpty)
    }

    @Test("An error body that fails to decode gives requestError and is told to the hook")
    func undecodableBody() async throws {
        // Given
        let mapping: CustomErrorMapping = [.status(422, decoding: ValidationBody.self) { BooksError.validation($0.fields) }]
        // When
        let error = try await mappedError(status: 422, json: #"{"errors": ["title"]}"#, repositoryErrors: mapping)
        // Then
        guard case .requestError(let context) = error else {
            Issue.record("expected requestError, got \(error)")
            return
        }
        #expect(context.statusCode == 422)
        let told = try #require(failures.all.first)
        #expect(failures.all.count == 1)
        #expect(told.entityType == "ValidationBody")
        #expect(told.codingPath == "fields")
        #expect(told.statusCode == 422)
    }

    @Test("An empty error body for a rule that decodes a type that is not optional does not match, and the hook is told the body is empty")
    func emptyBodyForRequiredType() async throws {
        // Given
        let mapping: CustomErrorMapping = [.status(404, decoding: ValidationBody.self) { BooksError.validation($0.fields) }]
        // When
        let error = try await mappedError(status: 404, repositoryErrors: mapping)
        // Then: before, the hook heard "not valid JSON (Unexpected end of file)"
        guard case .requestError(let context) = error else {
            Issue.record("expected requestError, got \(error)")
            return
        }
        #expect(context.statusCode == 404)
        let told = try #require(failures.all.first)
        #expect(failures.all.count == 1)
        #expect(told.kind == .mismatch)
        #expect(told.reason.contains("the body is empty (status 404) but a ValidationBody was expected"), "\(told.reason)")
    }

    @Test("An error body larger than 4 MiB is not searched for an API code: the plain rule applies")
    func hugeBodyHasNoAPICode() async throws {
        // Given
        let mapping: CustomErrorMapping = [
            .status(409, apiCode: "duplicate_isbn", BooksError.duplicate), .status(409, BooksError.conflict),
        ]
        let huge = #"{"code": "duplicate_isbn", "padding": ""# + String(repeating: "x", count: 4 * 1024 * 1024) + #""}"#
        // When
        let error = try await mappedError(status: 409, json: huge, repositoryErrors: mapping)
        let small = try await mappedError(status: 409, json: #"{"code": "duplicate_isbn"}"#, repositoryErrors: mapping)
        // Then
        #expect(error.customError(as: BooksError.self) == .conflict)
        #expect(small.customError(as: BooksError.self) == .duplicate)
    }

    @Test("The call's mapping and the repository's read the API code at their own key paths")
    func apiCodeForEachMapping() async throws {
        // Given: the call's rules read "error.code", the repository's "code"
        let call = CustomErrorMapping([.status(409, apiCode: "a", BooksError.duplicate)], apiCodeKeyPath: "error.code")
        let repository: CustomErrorMapping = [.status(409, apiCode: "b", BooksError.gone)]
        // When
        let nested = try await mappedError(
            status: 409, json: #"{"error": {"code": "a"}, "code": "b"}"#, repositoryErrors: repository, endpointErrors: call)
        let topLevel = try await mappedError(
            status: 409, json: #"{"error": {"code": "x"}, "code": "b"}"#, repositoryErrors: repository, endpointErrors: call)
        // Then
        #expect(nested.customError(as: BooksError.self) == .duplicate)
        #expect(topLevel.customError(as: BooksError.self) == .gone)
    }

    @Test("A failed decoding rule lets a later rule for the same status match")
    func fallThrough() async throws {
        let mapping: CustomErrorMapping = [
            .status(422, decoding: ValidationBody.self) { BooksError.validation($0.fields) },
            .status(422, BooksError.badRequest),
        ]
        let error = try await mappedError(status: 422, json: "[]", repositoryErrors: mapping)
        #expect(error.customError(as: BooksError.self) == .badRequest)
        #expect(failures.all.count == 1)
    }

    @Test("customError(as:) gives the error only as its own type; raw-value enums name themselves")
    func customErrorHelper() async throws {
        // Given
        let error = try await mappedError(status: 503, repositoryErrors: [503: LibraryError.closed])
        let plain = try await mappedError(status: 503)
        // Then
        #expect(error.customError(as: LibraryError.self) == .closed)
        #expect(error.customError(as: BooksError.self) == nil)
        #expect(plain.customError(as: LibraryError.self) == nil)
        guard case .customError(let name, _, _) = error else {
            Issue.record("expected customError, got \(error)")
            return
        }
        #expect(name == "library_closed")
    }

    @Test("A dictionary literal maps statuses in ascending order")
    func dictionaryLiteral() {
        let mapping: CustomErrorMapping = [409: BooksError.conflict, 404: BooksError.notFound]
        #expect(mapping.rules.map(\.statusCode) == [404, 409])
        #expect(mapping.rules.allSatisfy { $0.apiCode == nil })
        #expect(mapping.apiCodeKeyPath == "code")
        #expect(!mapping.isEmpty)
        // `CustomErrorMapping()` is ambiguous (the literal initialisers accept zero arguments): use `[]`.
        let empty: CustomErrorMapping = []
        #expect(empty.isEmpty)
        #expect(CustomErrorMapping([], apiCodeKeyPath: "error.code").isEmpty)
    }

    @Test("A 401 rule never applies to a request signed with a session")
    func unauthorizedSessionIgnoresRules() async throws {
        // Given
        let session = SessionManager<User>()
        try session.login(user: User(id: 1, name: "Ann"), token: "t1")
        let repository = TestRepository(
            configuration: try makeConfiguration(), sessionManager: session,
            transport: StubTransport(routes: [.status(.get, "books", 401)]), customErrors: [401: BooksError.wrongCredentials])
        // When
        let result = await repository.performRequest(Endpoint<Void>.get("books"))
        // Then
        guard case .unauthenticatedSession(let context?) = result.failure else {
            Issue.record("expected unauthenticatedSession, got \(result)")
            return
        }
        #expect(context.statusCode == 401)
        #expect(!session.isLoggedIn)
    }
}

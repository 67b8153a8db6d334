import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

@Suite("ResponseDecoder")
struct ResponseDecoderTests {
    let failures = Recorder<DecodingFailure>()
    let decoder: ResponseDecoder
    let request = RequestSummary(method: .get, url: URL(string: "http://api.test/api/v1/books?page=2")!)

    init() throws {
        let failures = failures
        decoder = ResponseDecoder(configuration: try makeConfiguration(decodingFailureHandler: { failures.record($0) }))
    }

    private func response(_ json: String, status: Int = 200) -> TransportResponse {
        TransportResponse(statusCode: status, body: Data(json.utf8))
    }

    private func decode<T: Decodable>(_ type: T.Type, _ json: String, keyPath: String? = nil) throws(RepositoryError) -> T {
        try decoder.decode(type, from: response(json), request: request, keyPath: keyPath)
    }

    /// The failure a decode throws, checking it was also told to the hook.
    private func decodingFailure<T: Decodable>(_ type: T.Type, _ json: String, keyPath: String? = nil) -> DecodingFailure? {
        do {
            let value = try decode(type, json, keyPath: keyPath)
            Issue.record("expected a decoding failure, got \(value)")
            return nil
        } catch {
            switch error {
            case .jsonError(let failure), .decodeError(let failure):
                #expect(failures.all.last?.reason == failure.reason, "the hook is told about every failure")
                return failure
            default:
                Issue.record("expected a decoding error, got \(error)")
                return nil
            }
        }
    }

    private let page =
        #"{"data": [{"id": 1, "title": "Dune", "genre": "fiction"}, {"id": 2, "title": "SPQR", "genre": "history"}], "page": {"current": 3, "total": 9}}"#

    @Test("A rejected value quoted in a decoding reason has its secret pairs redacted, as the value found does")
    func rejectedValueRedacted() throws {
        let failure = try #require(
            decodingFailure(Book.self, #"{"id": 1, "title": "Dune", "genre": "https://h.test/cb?access_token=t-1"}"#))
        #expect(!failure.reason.contains("t-1") && failure.reason.contains("Genre"), "\(failure.reason)")
    }

    @Test("Entities, collections and values at key paths decode")
    func successes() throws {
        #expect(try decode(Book.self, #"{"id": 1, "title": "Dune", "genre": "fiction"}"#).title == "Dune")
        #expect(try decode([Book].self, #"[{"id": 1, "title": "Dune", "genre": "fiction"}]"#).count == 1)
        #expect(try decode(BooksPage.self, page).page.current == 3)
        #expect(try decode([Book].self, page, keyPath: "data").map(\.id) == [1, 2])
        #expect(try decode(Int.self, page, keyPath: "page.current") == 3)
        #expect(try decode(Book.self, page, keyPath: "data.1").title == "SPQR")
        #expect(try decode(Genre.self, page, keyPath: "data.0.genre") == .fiction)
        #expect(try decode(BooksPage.self, page, keyPath: "").data.count == 2)
        #expect(failures.all.isEmpty)
    }

    @Test("A value nested to the decoder's limit where the model wants a string is named, not printed, on a 256 KiB thread")
    func deeplyNestedMismatch() async throws {
        struct Titled: Decodable { let title: String }
        let body = #"{"title": "# + String(repeating: "[", count: 510) + String(repeating: "]", count: 510) + "}"
        let decoder = ResponseDecoder(configuration: try makeConfiguration())
        let request = request
        let reason = await onPlainThread(stackSize: 256 << 10) { () -> String? in
            do throws(RepositoryError) {
                _ = try decoder.decode(
                    Titled.self, from: TransportResponse(statusCode: 200, body: Data(body.utf8)), request: request, keyPath: nil)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(reason?.contains("nested too deep to show") == true, "\(reason ?? "")")
    }

    @Test("An empty body is nil for an Optional model")
    func emptyOptional() throws {
        let book = try decoder.decode(Book?.self, from: TransportResponse(statusCode: 204), request: request, keyPath: nil)
        #expect(book == nil)
    }

    @Test("An empty body for a non-Optional model is a decode error saying the body is empty")
    func emptyBody() throws {
        // Given / When
        let failure = try #require(decodingFailure(Book.self, ""))
        // Then
        #expect(failure.kind == .mismatch)
        #expect(failure.reason.contains("empty"))
        #expect(failure.reason.contains("Endpoint<Void>"))
        #expect(failure.bodyExcerpt.isEmpty)
    }

    @Test("Malformed JSON is a JSON error of kind malformedJSON")
    func malformed() throws {
        // Given / When
        let failure = try #require(decodingFailure(Book.self, "<html>Bad Gateway</html>"))
        // Then
        #expect(failure.kind == .malformedJSON)
        #expect(failure.reason.contains("not valid JSON"))
        #expect(failure.bodyExcerpt == "<html>Bad Gateway</html>")
        #expect(failures.all.first?.kind == .malformedJSON)
    }

    @Test("A mismatch in a body whose JSON is invalid only in a member never read is a mismatch where it failed, as JSONDecoder says")
    func mismatchBesideAnInvalidMember() throws {
        // Given an id of the wrong type, and a truncated emoji in a member the model does not read
        let failure = try #require(decodingFailure(Book.self, #"{"id": "42", "title": "Dune", "bio": "\ud83d"}"#))
        // Then it is the id's mismatch, not malformed JSON
        #expect(failure.kind == .mismatch)
        #expect(failure.codingPath == "id")
        #expect(failure.reason.contains("expected Int but found a value that cannot be shown"), "\(failure.reason)")
    }

    @Test("A body above 4 MiB that fails is checked, not parsed again into a value: a mismatch says so, invalid JSON is still malformed")
    func largeBodies() throws {
        // Given a mismatch in a body of 5 MiB (before, it was built into a JSONValue — many times
        // its size in memory — to quote the value at the path)
        let padding = String(repeating: "x", count: 5 * 1024 * 1024)
        let mismatch = try #require(decodingFailure(Book.self, #"{"id": "42", "title": "Dune", "padding": "\#(padding)"}"#))
        #expect(mismatch.kind == .mismatch)
        #expect(mismatch.codingPath == "id")
        #expect(
            mismatch.reason.contains("expected Int but found a value not shown (the body is too large to look into)"), "\(mismatch.reason)")
        // Given invalid JSON of 5 MiB
        let invalid = try #require(decodingFailure(Book.self, #"{"id": 42, "padding": "\#(padding)""#))
        #expect(invalid.kind == .malformedJSON)
        #expect(invalid.reason.contains("not valid JSON"))
    }

    @Test("A wrong shape names the coding path from the document's root and what was found")
    func wrongShape() throws {
        // Given the second book's genre is a number
        let json = #"{"data": [{"id": 1, "title": "Dune", "genre": "fiction"}, {"id": 2, "title": "SPQR", "genre": 7}]}"#
        // When decoded through the "data" key path
        let failure = try #require(decodingFailure([Book].self, json, keyPath: "data"))
        // Then
        #expect(failure.kind == .mismatch)
        #expect(failure.codingPath == "data[1].genre")
        #expect(failure.reason.contains("expected String but found a number 7"), "\(failure.reason)")
        #expect(failure.entityType == "Array<Book>")
    }

    @Test("A missing key names the key and its parent")
    func missingKey() throws {
        let failure = try #require(decodingFailure(BooksPage.self, #"{"data": [], "page": {"current": 1}}"#))
        #expect(failure.codingPath == "page.total")
        #expect(failure.reason == "missing key \"total\" in page")
    }

    @Test("A null where a value is required says so")
    func nullValue() throws {
        let failure = try #require(decodingFailure(Book.self, #"{"id": null, "title": "Dune", "genre": "fiction"}"#))
        #expect(failure.codingPath == "id")
        #expect(failure.reason.contains("found null"), "\(failure.reason)")
    }

    @Test("An unknown enum raw value names the enum type and the value")
    func unknownEnumValue() throws {
        // Given
        let json = #"{"id": 1, "title": "Dune", "genre": "poetry"}"#
        // When
        let failure = try #require(decodingFailure(Book.self, json))
        // Then
        #expect(failure.codingPath == "genre")
        #expect(failure.reason.contains("Genre"), "\(failure.reason)")
        #expect(failure.reason.contains("poetry"), "\(failure.reason)")
    }

    @Test("A key path that is not in the body says which component is missing")
    func missingKeyPath() throws {
        let missingKey = try #require(decodingFailure([Book].self, page, keyPath: "items"))
        let missingIndex = try #require(decodingFailure(Book.self, page, keyPath: "data.5"))
        #expect(missingKey.reason.contains("missing key \"items\""), "\(missingKey.reason)")
        #expect(missingIndex.codingPath == "data[5]")
        #expect(missingIndex.reason == "expected Book but found nothing", "\(missingIndex.reason)")
    }

    @Test("The report carries type, request, status, path, reason and a bounded, redacted excerpt")
    func reportContents() throws {
        // Given a long body with credentials whose last element has the wrong shape
        let books = (0..<40).map { #"{"id": \#($0), "title": "\#(String(repeating: "t", count: 40))", "genre": "fiction"}"# }
        let json =
            #"{"a_token": "t0k3n-abc", "a_password": "hunter2", "data": ["# + books.joined(separator: ",")
            + #", {"id": "x", "title": "Bad", "genre": "fiction"}]}"#
        // When
        let returned = try #require(decodingFailure([Book].self, json, keyPath: "data"))
        let told = try #require(failures.all.last)
        // Then
        for failure in [returned, told] {
            #expect(failure.entityType == "Array<Book>")
            #expect(failure.context.request == request)
            #expect(failure.statusCode == 200)
            #expect(failure.codingPath == "data[40].id")
            #expect(failure.reason.contains("expected Int but found a string"), "\(failure.reason)")
            let marker = try #require(failure.bodyExcerpt.range(of: "… ("))
            #expect(failure.bodyExcerpt[..<marker.lowerBound].utf8.count <= DecodingFailure.excerptLimit)
            #expect(failure.bodyExcerpt.hasSuffix("more bytes)"))
            #expect(!failure.bodyExcerpt.contains("t0k3n-abc"))
            #expect(!failure.bodyExcerpt.contains("hunter2"))
            #expect(failure.bodyExcerpt.hasPrefix(#"{"a_password":"<redacted>","a_token":"<redacted>","data":["#))
            #expect(failure.description.contains("GET http://api.test/api/v1/books?page=2"))
            #expect(failure.description.contains("does not match Array<Book> at data[40].id"))
        }
    }

    @Test("Under snake-case keys, a reason shows the value found under the body's name, and secret names match either spelling")
    func snakeCaseReasons() throws {
        var configuration = try makeConfiguration()
        configuration.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
        configuration.secretFields = ["card_number"]
        let decoder = ResponseDecoder(configuration: configuration)
        struct Order: Decodable { let userId: Int }
        struct Payment: Decodable { let cardNumber: Genre }
        func failure<T: Decodable>(_ type: T.Type, _ json: String) -> DecodingFailure? {
            do throws(RepositoryError) {
                let value: T = try decoder.decode(type, from: response(json), request: request, keyPath: nil)
                Issue.record("expected a decoding failure, got \(value)")
            } catch {
                if case .decodeError(let failure) = error { return failure }
            }
            return nil
        }
        let order = try #require(failure(Order.self, #"{"user_id": "abc"}"#))
        #expect(order.codingPath == "userId")
        #expect(order.reason.contains(#"expected Int but found a string "abc""#), "\(order.reason)")
        let payment = try #require(failure(Payment.self, #"{"card_number": "4111111111111111"}"#))
        #expect(!payment.reason.contains("4111"), "\(payment.reason)")
    }

    @Test("A JSONDecoder subclass decodes a repository's bodies itself: its decode(_:from:) may do more than its settings")
    func decoderSubclass() async throws {
        final class Unwrapping: JSONDecoder, @unchecked Sendable {
            override func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
                // An API that wraps every answer in {"result": ...}
                let text = String(decoding: data, as: UTF8.self)
                let inner = text.hasPrefix(#"{"result":"#) ? String(text.dropFirst(10).dropLast()) : text
                return try super.decode(type, from: Data(inner.utf8))
            }
        }
        var configuration = try makeConfiguration()
        configuration.jsonDecoder = Unwrapping()
        let transport = StubTransport(routes: [.json(.get, "books/7", #"{"result":{"id": 7, "title": "Dune", "genre": "fiction"}}"#)])
        let repository = TestRepository(configuration: configuration, transport: transport)
        let book: Book = try await repository.performRequest(.get("books/7")).get()
        #expect(book.id == 7)
    }

    @Test("A JSONEncoder subclass encodes a repository's bodies itself: its encode(_:) may do more than its settings")
    func encoderSubclass() async throws {
        final class Wrapping: JSONEncoder, @unchecked Sendable {
            override func encode<T: Encodable>(_ value: T) throws -> Data {
                // An API that wants every body wrapped in {"data": ...}
                Data(#"{"data":"#.utf8) + (try super.encode(value)) + Data("}".utf8)
            }
        }
        struct Title: Encodable, Sendable { let title: String }
        var configuration = try makeConfiguration()
        configuration.jsonEncoder = Wrapping()
        let transport = StubTransport(routes: [.status(.post, "books", 204)])
        let repository = TestRepository(configuration: configuration, transport: transport)
        try await repository.performRequest(Endpoint<Void>.post("books", parameters: Parameters(Title(title: "Dune")))).get()
        let body = transport.requests.first?.body?.inMemoryData.map { String(decoding: $0, as: UTF8.self) }
        #expect(body == #"{"data":{"title":"Dune"}}"#)
    }

    @Test("Values quoted in a reason never show credentials")
    func reasonRedaction() throws {
        // Given bodies whose mismatch sits at, or contains, a credential
        let atCredential = try #require(
            decodingFailure(LoginResponse.self, #"{"token": ["s3cret-token"], "user": {"id": 1, "name": "Ann"}}"#))
        let containsCredential = try #require(decodingFailure([Book].self, #"{"token": "s3cret-token", "password": "hunter2"}"#))
        struct Secretive: Decodable { var password: Genre }
        let enumAtCredential = try #require(decodingFailure(Secretive.self, #"{"password": "s3cret-token"}"#))
        // Then
        for failure in [atCredential, containsCredential, enumAtCredential] {
            #expect(!failure.reason.contains("s3cret-token"), "\(failure.reason)")
            #expect(!failure.reason.contains("hunter2"), "\(failure.reason)")
            #expect(!failure.description.contains("s3cret-token"))
            #expect(!RepositoryError.decodeError(failure).description.contains("s3cret-token"))
        }
        #expect(atCredential.codingPath == "token")
    }

    @Test("With JSON5 allowed, a JSON5 body that does not fit the model is a mismatch that shows the value, not invalid JSON")
    func json5Mismatch() throws {
        let json5 = JSONDecoder()
        json5.allowsJSON5 = true
        json5.keyDecodingStrategy = .convertFromSnakeCase
        var configuration = try makeConfiguration()
        configuration.jsonDecoder = json5
        let decoder = ResponseDecoder(configuration: configuration)
        for (body, path) in [("'poetry'", ""), ("{data: {genre: 'poetry',},}", "data.genre")] {
            do {
                _ = try decoder.decode(Genre.self, from: response(body), request: request, keyPath: path.isEmpty ? nil : path)
                Issue.record("expected a mismatch for \(body)")
            } catch {
                guard case .decodeError(let failure) = error else {
                    Issue.record("expected a mismatch for \(body), got \(error)")
                    continue
                }
                #expect(failure.codingPath == path)
                #expect(failure.reason.contains("poetry"), "\(failure.reason)")
            }
        }
        // Not JSON5 either: invalid.
        do {
            _ = try decoder.decode(Genre.self, from: response("{data: "), request: request, keyPath: nil)
        } catch {
            guard case .jsonError = error else {
                Issue.record("expected invalid JSON, got \(error)")
                return
            }
        }
    }

    @Test("A step's failure keeps the step's prefix, and a step's empty body says so")
    func stepFailures() throws {
        let corrupt: (DecodingInput) throws -> Book = { _ in
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "not a CSV row"))
        }
        do {
            _ = try decoder.decode(with: corrupt, from: response("a;b\n1"), request: request, reasonPrefix: "the mapping step failed: ")
            Issue.record("expected a failure")
        } catch {
            guard case .jsonError(let failure) = error else {
                Issue.record("expected a malformed-body failure, got \(error)")
                return
            }
            #expect(failure.reason.hasPrefix("the mapping step failed: "), "\(failure.reason)")
        }
        let decodesData: (DecodingInput) throws -> Book = { try $0.decode(Book.self, at: "data") }
        do {
            _ = try decoder.decode(with: decodesData, from: response("", status: 204), request: request)
            Issue.record("expected a failure")
        } catch {
            guard case .decodeError(let failure) = error else {
                Issue.record("expected a mismatch, got \(error)")
                return
            }
            #expect(failure.reason.contains("the body is empty (status 204)"), "\(failure.reason)")
        }
        // A step's own error about an answer without a body keeps its message.
        let checksHeader: (DecodingInput) throws -> Book = { _ in
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "no X-Book header"))
        }
        do {
            _ = try decoder.decode(with: checksHeader, from: response("", status: 204), request: request)
        } catch {
            guard case .decodeError(let failure) = error else {
                Issue.record("expected a mismatch, got \(error)")
                return
            }
            #expect(failure.reason == "the body is empty (status 204); no X-Book header", "\(failure.reason)")
        }
        let optional = try decoder.decode(
            with: { try $0.decode(Book?.self, at: "data") }, from: response("", status: 204), request: request)
        #expect(optional == nil)
    }

    @Test("Coding paths are written with dots for keys and brackets for indices; a dictionary's numeric key is a key")
    func pathText() throws {
        struct Price: Decodable { let amount: Int }
        let inArray = try #require(decodingFailure([[Book]].self, #"[[], [{"id": 1, "title": "Dune", "genre": 7}]]"#))
        #expect(inArray.codingPath == "[1][0].genre")
        let inDictionaries = #"{"prices": {"5": {"amount": "x"}}}"#
        for usesFoundation in [false, true] {
            var configuration = try makeConfiguration()
            configuration.usesFoundationJSONDecoder = usesFoundation
            let decoder = ResponseDecoder(configuration: configuration)
            let response = response(inDictionaries)
            for keyed in [false, true] {
                do {
                    if keyed {
                        _ = try decoder.decode([String: [Int: Price]].self, from: response, request: request, keyPath: nil)
                    } else {
                        _ = try decoder.decode([String: [String: Price]].self, from: response, request: request, keyPath: nil)
                    }
                    Issue.record("expected a mismatch")
                } catch {
                    guard case .decodeError(let failure) = error else {
                        Issue.record("expected a decode error, got \(error)")
                        continue
                    }
                    #expect(failure.codingPath == "prices.5.amount", "usesFoundation \(usesFoundation), Int keys \(keyed)")
                }
            }
        }
        #expect(ResponseDecoder.pathText([]).isEmpty)
    }
}

import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// Answers by itself, as a cache would, with a response marked as coming from storage.
private struct CachedAnswerInterceptor: Interceptor {
    let source: ResponseSource

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        TransportResponse(
            statusCode: 200, headers: ["Content-Type": "application/json", "Age": "12"],
            body: Data(#"{"id": 7, "title": "Cached", "genre": "history"}"#.utf8), url: request.url, source: source)
    }
}

@Suite("RepositoryResponse: metadata on success")
struct RepositoryResponseTests {
    private static let bookJSON = #"{"id": 1, "title": "Dune", "genre": "fiction"}"#

    @Test("A Decodable model comes with status, headers, URL, request and source")
    func decodableMetadata() async throws {
        // Given
        let transport = StubTransport(routes: [
            .status(
                .get, "books/1", 200, json: Self.bookJSON,
                headers: ["ETag": "\"v3\"", "X-RateLimit-Remaining": "41"])
        ])
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        // When
        let result: Result<RepositoryResponse<Book>, RepositoryError> = await repository.performRequest(.get("books/1"))
        // Then
        let response = try result.get()
        #expect(response.value == Book(id: 1, title: "Dune", genre: .fiction))
        #expect(response.statusCode == 200)
        #expect(response.headers["etag"] == "\"v3\"")
        #expect(response.headers["X-RateLimit-Remaining"] == "41")
        #expect(response.url?.absoluteString == "http://api.test/api/v1/books/1")
        #expect(response.request.method == .get)
        #expect(response.request.url.absoluteString == "http://api.test/api/v1/books/1")
        #expect(response.source == .network)
        #expect(transport.requests.count == 1)
    }

    @Test("A model at a key path is decoded there and keeps the response's metadata")
    func keyPathMetadata() async throws {
        // Given
        let transport = StubTransport(routes: [
            .status(.get, "books/1", 200, json: #"{"data": \#(Self.bookJSON)}"#, headers: ["X-Request-ID": "abc"])
        ])
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        // When
        let result: Result<RepositoryResponse<Book>, RepositoryError> = await repository.performRequest(
            .get("books/1", keyPath: "data"))
        // Then
        let response = try result.get()
        #expect(response.value.title == "Dune")
        #expect(response.headers["X-Request-ID"] == "abc")
    }

    @Test("Void: the body is ignored and status, headers and URL are returned")
    func voidMetadata() async throws {
        // Given
        let transport = StubTransport(routes: [
            .status(.post, "books", 201, json: #"{"ignored": true}"#, headers: ["Location": "/api/v1/books/99"])
        ])
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        // When
        let result: Result<RepositoryResponse<Void>, RepositoryError> = await repository.performRequest(
            .post("books", parameters: ["title": "Dune"]))
        // Then
        let response = try result.get()
        #expect(response.statusCode == 201)
        #expect(response.headers["Location"] == "/api/v1/books/99")
        #expect(response.request.method == .post)
        #expect(response.url?.path == "/api/v1/books")
        #expect(response.source == .network)
    }

    @Test("A failure is still a RepositoryError: a 404 is .requestError, not a response")
    func failureIsError() async throws {
        // Given
        let transport = StubTransport(routes: [.status(.get, "books/9", 404, json: #"{"code": "not_found"}"#)])
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        // When
        let result: Result<RepositoryResponse<Book>, RepositoryError> = await repository.performRequest(.get("books/9"))
        // Then
        guard case .requestError(let context)? = result.failure else {
            Issue.record("expected .requestError, got \(result)")
            return
        }
        #expect(context.statusCode == 404)
    }

    @Test("Polling returns the final response's metadata, after the 202s")
    func pollingMetadata() async throws {
        // Given
        let route = SequenceRoute(statuses: [202, 202, 200])
        let transport = StubTransport(routes: [route.route(.get, "reports/1")])
        var configuration = try makeConfiguration(secondsBetweenPolls: 0.5)
        let clock = TestClock()
        configuration.clock = clock.networkingClock
        let repository = TestRepository(configuration: configuration, transport: transport)
        // When
        let result: Result<RepositoryResponse<Book>, RepositoryError> = await repository.performPollingRequest(
            .get("reports/1"))
        // Then
        let response = try result.get()
        #expect(response.value.title == "Dune")
        #expect(response.statusCode == 200)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(response.request.url.path == "/api/v1/reports/1")
        #expect(route.count == 3)
        #expect(clock.sleeps == [.milliseconds(500), .milliseconds(500)])
    }

    @Test("The source an interceptor gives (a cache) reaches the caller")
    func sourceFromInterceptor() async throws {
        // Given
        let transport = StubTransport(routes: [])
        let repository = TestRepository(
            configuration: try makeConfiguration(), transport: transport,
            interceptors: [CachedAnswerInterceptor(source: .revalidated)])
        // When
        let result: Result<RepositoryResponse<Book>, RepositoryError> = await repository.performRequest(.get("books/7"))
        // Then
        let response = try result.get()
        #expect(response.source == .revalidated)
        #expect(response.headers["Age"] == "12")
        #expect(response.value.title == "Cached")
        #expect(transport.requests.isEmpty)
    }

    @Test("map keeps every piece of metadata around the new value")
    func map() throws {
        // Given
        let request = RequestSummary(method: .get, url: try #require(URL(string: "https://api.example.com/books")))
        let response = RepositoryResponse(
            value: 3, statusCode: 206, headers: ["ETag": "x"], url: URL(string: "https://cdn.example.com/books"),
            request: request, source: .stale)
        // When
        let mapped = response.map { "\($0 * 2)" }
        // Then
        #expect(mapped.value == "6")
        #expect(mapped.statusCode == 206)
        #expect(mapped.headers["ETag"] == "x")
        #expect(mapped.url?.host == "cdn.example.com")
        #expect(mapped.request == request)
        #expect(mapped.source == .stale)
    }
}

@Suite("RepositoryResponse: raw TransportResponse")
struct RawTransportResponseTests {
    @Test("TransportResponse is not Decodable, so it can never be decoded from a body by mistake")
    func notDecodable() {
        #expect(!(TransportResponse.self is any Decodable.Type))
    }

    @Test("performRequest(Endpoint<TransportResponse>) returns the response as it came; the body is not decoded")
    func rawIsNotDecoded() async throws {
        // Given: a body that is not JSON at all, and one that is the JSON of a TransportResponse
        let garbage = Data([0xFF, 0x00, 0x7B, 0x22])
        let lookalike = #"{"statusCode": 418, "headers": [], "body": "", "source": "cache"}"#
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "blob") { request throws(TransportError) in
                TransportResponse(statusCode: 200, headers: ["Content-Type": "application/octet-stream"], body: garbage, url: request.url)
            },
            .json(.get, "lookalike", lookalike),
        ])
        let hook = Recorder<DecodingFailure>()
        let configuration = try makeConfiguration(decodingFailureHandler: { hook.record($0) })
        let repository = TestRepository(configuration: configuration, transport: transport)
        // When
        let blob = try await repository.performRequest(Endpoint<TransportResponse>.get("blob")).get()
        let raw = try await repository.performRequest(Endpoint<TransportResponse>.get("lookalike")).get()
        // Then
        #expect(blob.body == garbage)
        #expect(blob.headers["Content-Type"] == "application/octet-stream")
        #expect(raw.statusCode == 200)
        #expect(raw.source == .network)
        #expect(raw.text == lookalike)
        #expect(hook.all.isEmpty)
    }

    @Test("A raw call to a non-2xx status still fails with the status's error")
    func rawStatusError() async throws {
        // Given
        let transport = StubTransport(routes: [.status(.get, "teapot", 418, json: #"{"code": "teapot"}"#)])
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        // When
        let result = await repository.performRequest(Endpoint<TransportResponse>.get("teapot"))
        // Then
        guard case .requestError(let context)? = result.failure else {
            Issue.record("expected .requestError, got \(result)")
            return
        }
        #expect(context.response?.json?["code"] == "teapot")
    }
}

@Suite("RepositoryResponse.link(rel:) (RFC 8288)")
struct LinkHeaderTests {
    private static let pageURL = URL(string: "https://api.example.com/api/v1/books?page=2")

    private func response(links: [String], url: URL? = LinkHeaderTests.pageURL) throws -> RepositoryResponse<Void> {
        var headers = HTTPHeaders()
        for link in links { headers.add(name: "Link", value: link) }
        let request = RequestSummary(method: .get, url: try #require(URL(string: "https://api.example.com/api/v1/books")))
        return RepositoryResponse(value: (), statusCode: 200, headers: headers, url: url, request: request)
    }

    @Test("One link with a quoted rel")
    func single() throws {
        // Given
        let response = try response(links: [#"<https://api.example.com/api/v1/books?page=3>; rel="next""#])
        // When / Then
        #expect(response.link(rel: "next")?.absoluteString == "https://api.example.com/api/v1/books?page=3")
        #expect(response.link(rel: "prev") == nil)
    }

    @Test("Several links in one field, each found by its rel")
    func severalInOneField() throws {
        // Given
        let response = try response(links: [
            #"<https://api.example.com/api/v1/books?page=3>; rel="next", <https://api.example.com/api/v1/books?page=1>; rel="prev","#
                + #" <https://api.example.com/api/v1/books?page=9>; rel=last"#
        ])
        // When / Then
        #expect(response.link(rel: "next")?.query == "page=3")
        #expect(response.link(rel: "prev")?.query == "page=1")
        #expect(response.link(rel: "last")?.query == "page=9")
        #expect(response.link(rel: "first") == nil)
    }

    @Test("Links spread over several Link fields")
    func severalFields() throws {
        // Given
        let response = try response(links: [
            #"<https://api.example.com/a>; rel="prev""#, #"<https://api.example.com/b>; rel="next""#,
        ])
        // When / Then
        #expect(response.link(rel: "prev")?.path == "/a")
        #expect(response.link(rel: "next")?.path == "/b")
    }

    @Test("A quoted rel with several relation types matches each of them")
    func severalRelations() throws {
        // Given
        let response = try response(links: [
            #"<https://api.example.com/api/v1/books?page=9>; rel="next last""#,
            #"<https://api.example.com/api/v1/books?page=1>; rel="first  prev""#,
        ])
        // When / Then
        #expect(response.link(rel: "next")?.query == "page=9")
        #expect(response.link(rel: "last")?.query == "page=9")
        #expect(response.link(rel: "first")?.query == "page=1")
        #expect(response.link(rel: "prev")?.query == "page=1")
        #expect(response.link(rel: "next last") == nil)
    }

    @Test("Relation types and the rel parameter name compare case-insensitively")
    func caseInsensitive() throws {
        // Given
        let response = try response(links: [#"<https://api.example.com/n>; REL="Next""#])
        // When / Then
        #expect(response.link(rel: "next")?.path == "/n")
        #expect(response.link(rel: "NEXT")?.path == "/n")
    }

    @Test("Relative targets resolve against the URL that answered")
    func relativeTargets() throws {
        // Given
        let response = try response(links: [
            #"</api/v1/books?page=3>; rel="next", <?page=1>; rel="prev", <books-archive>; rel="archives", <//cdn.example.com/x>; rel="alternate""#
        ])
        // When / Then
        #expect(response.link(rel: "next")?.absoluteString == "https://api.example.com/api/v1/books?page=3")
        #expect(response.link(rel: "prev")?.absoluteString == "https://api.example.com/api/v1/books?page=1")
        #expect(response.link(rel: "archives")?.absoluteString == "https://api.example.com/api/v1/books-archive")
        #expect(response.link(rel: "alternate")?.absoluteString == "https://cdn.example.com/x")
    }

    @Test("Without the response's URL, relative targets resolve against the request's URL")
    func relativeToRequest() throws {
        // Given
        let response = try response(links: [#"</api/v2/books>; rel="successor-version""#], url: nil)
        // When / Then
        #expect(response.link(rel: "successor-version")?.absoluteString == "https://api.example.com/api/v2/books")
    }

    @Test("Other parameters, before or after rel, with commas inside quotes, do not confuse the parser")
    func otherParameters() throws {
        // Given
        let response = try response(links: [
            #"<https://api.example.com/a>; title="Chapter 1, part 2"; rel="prev"; type="application/json", "#
                + #"<https://api.example.com/b>;rel=next;hreflang=en"#
        ])
        // When / Then
        #expect(response.link(rel: "prev")?.path == "/a")
        #expect(response.link(rel: "next")?.path == "/b")
    }

    @Test("A target holding commas and semicolons is taken whole")
    func targetWithSeparators() throws {
        // Given
        let response = try response(links: [#"<https://api.example.com/books?ids=1,2;3>; rel="next""#])
        // When / Then
        #expect(response.link(rel: "next")?.query == "ids=1,2;3")
    }

    @Test("A semicolon inside a quoted parameter value is not a parameter separator")
    func quotedSemicolon() throws {
        // Given: the title's text looks like a rel parameter; only rel="prev" is one
        let response = try response(links: [#"<https://api.example.com/a>; title="see; rel=next"; rel="prev""#])
        // When / Then
        #expect(response.link(rel: "prev")?.path == "/a")
        #expect(response.link(rel: "next") == nil)
    }

    @Test("Escaped quotes inside a quoted parameter neither end it nor split the field; only the first rel counts")
    func escapedQuotesAndFirstRel() throws {
        let response = try response(links: [
            #"<https://api.example.com/a?page=1>; title="say \"hi, there\"; ok"; rel="prev", <https://api.example.com/a?page=3>; rel="next""#,
            #"<https://api.example.com/a?page=9>; rel="last"; rel="first""#,
        ])
        #expect(response.link(rel: "prev")?.query == "page=1")
        #expect(response.link(rel: "next")?.query == "page=3")
        #expect(response.link(rel: "last")?.query == "page=9")
        #expect(response.link(rel: "first") == nil)
    }

    @Test("No Link field, an empty one, or one without rel gives nil")
    func absent() throws {
        #expect(try response(links: []).link(rel: "next") == nil)
        #expect(try response(links: [""]).link(rel: "next") == nil)
        #expect(try response(links: ["<https://api.example.com/a>; title=\"x\""]).link(rel: "next") == nil)
        #expect(try response(links: ["garbage without brackets"]).link(rel: "next") == nil)
    }

    @Test("A combining mark after a quote or a comma hides neither: a reflected title cannot smuggle in a link")
    func combiningMarks() throws {
        let response = try response(links: [
            "<https://api.example.com/a?page=3>; title=\"\u{301}x, <https://evil.example/>; rel=next\"; rel=\"next\""
        ])
        #expect(response.link(rel: "next")?.absoluteString == "https://api.example.com/a?page=3")
    }

    @Test("A link anchored to another resource is about that resource; one anchored to this one counts")
    func anchor() throws {
        let other = try response(links: [#"<https://api.example.com/p2>; rel="next"; anchor="https://api.example.com/other""#])
        #expect(other.link(rel: "next") == nil)
        let same = try response(links: [#"<https://api.example.com/p3>; anchor="books?page=2#top"; rel="next""#])
        #expect(same.link(rel: "next")?.path == "/p3")
        for anchor in ["", "HTTPS://API.example.com:443/api/v1/books?page=2"] {
            let context = try response(links: ["<https://api.example.com/p4>; rel=next; anchor=\"\(anchor)\""])
            #expect(context.link(rel: "next")?.path == "/p4", "anchor \(anchor)")
        }
    }

    @Test("An element that does not start with '<' is skipped whole: a link inside its quoted title is none")
    func elementWithoutTarget() throws {
        let links = try response(links: [
            #"rel="prev"; title="<https://evil.example/>; rel=next", <https://api.example.com/p5>; rel="next""#
        ])
        #expect(links.link(rel: "next")?.absoluteString == "https://api.example.com/p5")
        let only = try response(links: [#"title="<https://evil.example/>; rel=next""#])
        #expect(only.link(rel: "next") == nil)
    }

    @Test("A target that is no URL does not hide a later link of the same relation")
    func unparsableTarget() throws {
        let links = try response(links: ["<http://[::1>; rel=next, <https://api.example.com/p6>; rel=next"])
        #expect(links.link(rel: "next")?.path == "/p6")
    }
}

import Foundation
import Testing

@testable import Networking

@Suite("RequestBuilder")
struct RequestBuilderTests {
    let builder: RequestBuilder

    init() throws {
        builder = RequestBuilder(configuration: try makeConfiguration())
    }

    private func build<R>(_ endpoint: Endpoint<R>, with builder: RequestBuilder? = nil) throws -> TransportRequest {
        try (builder ?? self.builder).build(endpoint)
    }

    private func invalidRequestReason<R>(_ endpoint: Endpoint<R>) -> String? {
        do {
            _ = try builder.build(endpoint)
            Issue.record("expected invalidRequest")
            return nil
        } catch {
            guard case .invalidRequest(let reason, let request) = error else {
                Issue.record("expected invalidRequest, got \(error)")
                return nil
            }
            #expect(request?.method == endpoint.method)
            return reason
        }
    }

    // MARK: - Paths

    @Test(
        "Path segments are percent-encoded and taken literally",
        arguments: [
            ("books", "/api/v1/books"),
            ("/books/12", "/api/v1/books/12"),
            ("books/12/", "/api/v1/books/12"),
            ("books//12", "/api/v1/books/12"),
            ("books/my book", "/api/v1/books/my%20book"),
            ("books/what?", "/api/v1/books/what%3F"),
            ("books/c#", "/api/v1/books/c%23"),
            ("books/100%", "/api/v1/books/100%25"),
            ("books/café", "/api/v1/books/caf%C3%A9"),
            ("books/📚", "/api/v1/books/%F0%9F%93%9A"),
            ("books/a:b@c;d=e", "/api/v1/books/a:b@c;d=e"),
            ("", "/api/v1"),
            ("/", "/api/v1"),
        ])
    func pathEncoding(path: String, expected: String) throws {
        // Given an endpoint with a path written unencoded
        // When it is built
        let request = try build(Endpoint<Void>.get(path))
        // Then each segment is percent-encoded under the base URL, with no query added
        #expect(request.url.absoluteString == "http://api.test" + expected)
    }

    @Test("An empty path under a host without subdomain is the bare base URL")
    func emptyPathWithoutSubdomain() throws {
        // Given
        let builder = RequestBuilder(configuration: try NetworkingConfiguration(domainURL: "api.test"))
        // When
        let root = try build(Endpoint<Void>.get(""), with: builder)
        let books = try build(Endpoint<Void>.get("books"), with: builder)
        // Then
        #expect(root.url.absoluteString == "https://api.test")
        #expect(books.url.absoluteString == "https://api.test/books")
    }

    @Test(
        "An invalid URL's error shows it with its password and secret query values redacted",
        arguments: [
            "https://alice:s3cret@/reports", "https://alice:s3cret@/reports?access_token=s3cret", "https://alice:s3cret/x?y#z@/reports",
        ])
    func invalidURLRedacted(path: String) {
        // Given: an absolute URL without a host, holding a password (and a token)
        do {
            // When
            _ = try builder.build(Endpoint<Void>.get(path))
            Issue.record("expected invalidURL for \(path)")
        } catch {
            // Then: the reason, the description and the dump name the URL without the secrets
            guard case .invalidURL(let reason) = error else {
                Issue.record("expected invalidURL, got \(error)")
                return
            }
            #expect(!reason.contains("s3cret"), "\(reason)")
            #expect(reason.contains("https://<redacted>@/reports"), "\(reason)")
            #expect(!error.localizedDescription.contains("s3cret"))
            #expect(!String(describing: error).contains("s3cret"))
            #expect(!String(reflecting: error).contains("s3cret"))
        }
    }

    // MARK: - Where parameters go

    @Test("GET, HEAD and DELETE put parameters in the query and send no body", arguments: [HTTPMethod.get, .head, .delete])
    func queryMethods(method: HTTPMethod) throws {
        // Given / When
        let request = try build(Endpoint<Void>(method, "books", parameters: ["page": 2, "q": "a b"]))
        // Then
        #expect(request.url.absoluteString == "http://api.test/api/v1/books?page=2&q=a%20b")
        #expect(request.body == nil)
        #expect(request.headers["Content-Type"] == nil)
    }

    @Test("An absolute URL with brackets keeps its encoded values encoded once; parameters go before a fragment")
    func absoluteURLsAsGiven() throws {
        // Foundation encodes the brackets and then every % of the query: q=C%252B%252B.
        let brackets = try build(Endpoint<Void>.get("https://h.test/x?a[]=1&q=C%2B%2B"))
        #expect(brackets.url.absoluteString == "https://h.test/x?a%5B%5D=1&q=C%2B%2B")
        let ipv6 = try build(Endpoint<Void>.get("http://[::1]:8080/a b?c=%zz"))
        #expect(ipv6.url.absoluteString == "http://[::1]:8080/a%20b?c=%25zz")
        // The query went after the fragment, where it is never sent.
        let fragment = try build(Endpoint<Void>.get("https://h.test/list#top", parameters: ["page": 2]))
        #expect(fragment.url.absoluteString == "https://h.test/list?page=2#top")
        #expect(fragment.url.query == "page=2")
    }

    @Test("POST, PUT and PATCH send parameters as a JSON body", arguments: [HTTPMethod.post, .put, .patch])
    func bodyMethods(method: HTTPMethod) throws {
        // Given / When
        let request = try build(Endpoint<Void>(method, "books", parameters: ["title": "Dune", "year": 1965]))
        // Then
        #expect(request.url.query == nil)
        #expect(try jsonBody(of: request) == ["title": "Dune", "year": 1965])
        #expect(request.headers["Content-Type"] == "application/json")
    }

    @Test("The per-call encoding overrides the method's default")
    func encodingOverride() throws {
        // Given / When
        let jsonDelete = try build(Endpoint<Void>(.delete, "books", parameters: ["ids": [1, 2]], encoding: .json))
        let queryPost = try build(Endpoint<Void>(.post, "search", parameters: ["q": "dune"], encoding: .query))
        let formPost = try build(
            Endpoint<Void>(.post, "oauth/token", parameters: ["grant_type": "password", "scope": "a b&c"], encoding: .form))
        // Then
        #expect(jsonDelete.url.query == nil)
        #expect(try jsonBody(of: jsonDelete) == ["ids": [1, 2]])
        #expect(jsonDelete.headers["Content-Type"] == "application/json")
        #expect(queryPost.url.absoluteString.hasSuffix("/search?q=dune"))
        #expect(queryPost.body == nil)
        #expect(formPost.body?.inMemoryData.map { String(decoding: $0, as: UTF8.self) } == "grant_type=password&scope=a%20b%26c")
        #expect(formPost.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(formPost.url.query == nil)
    }

    @Test("Array parameters are always a JSON body", arguments: [HTTPMethod.post, .put, .delete])
    func arraysAreBodies(method: HTTPMethod) throws {
        // Given / When
        let request = try build(Endpoint<Void>(method, "books/batch", parameters: [1, "two", ["three": 3]]))
        // Then
        #expect(request.url.query == nil)
        #expect(try jsonBody(of: request) == [1, "two", ["three": 3]])
    }

    @Test("Array parameters on GET and HEAD are rejected", arguments: [HTTPMethod.get, .head])
    func arraysRejectedWithoutBody(method: HTTPMethod) {
        // Given / When
        let reason = invalidRequestReason(Endpoint<Void>(method, "books", parameters: [1, 2]))
        // Then
        #expect(reason?.contains("\(method) cannot carry a body") == true, "\(reason ?? "nil")")
        #expect(reason?.contains("an array") == true)
        // A dictionary asked to go as JSON is told where it can go instead.
        let json = invalidRequestReason(Endpoint<Void>(method, "books", parameters: ["q": "x"], encoding: .json))
        #expect(json == "\(method) cannot carry a JSON body: send its parameters in the query (encoding .query)")
    }

    @Test("A HEAD with a form, a multipart form or an upload is refused: the transports would send it without its body")
    func headCarriesNoBody() throws {
        var form = MultipartFormData()
        form.append(Data("q1".utf8), name: "report", fileName: "report.txt", contentType: "text/plain")
        let endpoints: [Endpoint<Void>] = [
            Endpoint(.head, "books", parameters: ["a": 1], encoding: .form),
            .upload(.head, "books", form: form),
            .upload(.head, "books", body: .data(Data("x".utf8))),
        ]
        for endpoint in endpoints {
            #expect(invalidRequestReason(endpoint)?.contains("HEAD request cannot carry a body") == true)
        }
        // Its parameters in the query are fine, and so is an empty form.
        #expect(try build(Endpoint<Void>(.head, "books", parameters: [:], encoding: .form)).method == .head)
        #expect(try build(Endpoint<Void>(.head, "books", parameters: ["a": 1])).url.query == "a=1")
    }

    @Test("Non-object parameters with a multipart form are refused, never sent as JSON in place of the form")
    func multipartNonObjectParameters() throws {
        // Given: a form with a file, and parameters that cannot be its text fields
        var form = MultipartFormData()
        form.append(Data("q1".utf8), name: "report", fileName: "report.txt", contentType: "text/plain")
        let expected = "a multipart form's parameters are its text fields, so they must be a dictionary, not an array"
        // When
        let withForm = invalidRequestReason(Endpoint<Void>.upload(.post, "reports", form: form, parameters: ["a", "b"]))
        let byEncoding = invalidRequestReason(Endpoint<Void>(.post, "reports", parameters: [1, 2], encoding: .multipart))
        let scalar = invalidRequestReason(Endpoint<Void>.upload(.put, "reports", form: form, parameters: Parameters(json: 7)))
        // Then
        #expect(withForm == expected)
        #expect(byEncoding == expected)
        #expect(scalar == "a multipart form's parameters are its text fields, so they must be a dictionary, not a number")
        // A dictionary still becomes the form's fields.
        let request = try build(Endpoint<Void>.upload(.post, "reports", form: form, parameters: ["title": "Q1"]))
        #expect(request.headers["Content-Type"]?.hasPrefix("multipart/form-data") == true)
    }

    @Test("A NaN or an infinity in a JSONValue parameter is refused alike in a query, a JSON body and a multipart form")
    func nonFiniteJSONValues() {
        // Before: `nan` in a query, `null` in a multipart field, refused only in a JSON body.
        let parameters = Parameters(json: ["page": ["ratio": .double(.nan)]])
        let query = invalidRequestReason(Endpoint<Void>.get("books", parameters: parameters))
        let body = invalidRequestReason(Endpoint<Void>.post("books", parameters: parameters))
        let form = invalidRequestReason(Endpoint<Void>(.post, "books", parameters: parameters, encoding: .multipart))
        for reason in [query, body, form] {
            #expect(reason?.contains(#"parameter "page.ratio" is nan, which JSON cannot carry"#) == true, "\(reason ?? "")")
        }
        let nested = invalidRequestReason(Endpoint<Void>.get("books", parameters: ["limits": [JSONValue.double(-.infinity)]]))
        #expect(nested?.contains(#"parameter "limits[0]" is -inf"#) == true, "\(nested ?? "")")
    }

    @Test("A form's Content-Type (its boundary) wins over the configuration's default headers")
    func formContentTypeWinsOverDefaults() throws {
        // Given: a configuration that sets a Content-Type for every call, as some apps do
        let builder = RequestBuilder(configuration: try makeConfiguration(defaultHeaders: ["Content-Type": "application/json"]))
        var form = MultipartFormData()
        form.append(Data("q1".utf8), name: "report", fileName: "report.txt", contentType: "text/plain")
        // When
        let upload = try build(Endpoint<Void>.upload(.post, "reports", form: form), with: builder)
        let fields = try build(Endpoint<Void>(.post, "reports", parameters: ["title": "Q1"], encoding: .multipart), with: builder)
        let json = try build(Endpoint<Void>(.post, "reports", parameters: ["title": "Q1"]), with: builder)
        let urlEncoded = try build(Endpoint<Void>(.post, "reports", parameters: ["title": "Q1"], encoding: .form), with: builder)
        // Then
        #expect(upload.headers["Content-Type"] == form.contentType)
        #expect(urlEncoded.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(fields.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=") == true)
        #expect(json.headers["Content-Type"] == "application/json")
    }

    @Test("An upload's Content-Type, its own or guessed, wins over the configuration's default one")
    func uploadContentTypeWinsOverDefaults() throws {
        // Given
        let builder = RequestBuilder(configuration: try makeConfiguration(defaultHeaders: ["Content-Type": "application/json"]))
        let file = URL(fileURLWithPath: "/tmp/cover.png")
        // When
        let typed = try build(
            Endpoint<Void>.upload(.put, "photos/1", body: .data(Data([0x89, 0x50])), contentType: "image/png"), with: builder)
        let guessed = try build(Endpoint<Void>.upload(.put, "photos/1", body: .file(file)), with: builder)
        let untyped = try build(Endpoint<Void>.upload(.post, "photos", body: .data(Data("{}".utf8))), with: builder)
        // Then: bytes of no known type leave the default in place
        #expect(typed.headers.values(for: "Content-Type") == ["image/png"])
        #expect(guessed.headers.values(for: "Content-Type") == ["image/png"])
        #expect(untyped.headers.values(for: "Content-Type") == ["application/json"])
    }

    @Test("A form and a body of its own are refused together; uploading(_:) replaces the other")
    func formAndBodyTogether() throws {
        // Given
        var form = MultipartFormData()
        form.append(Data("q1".utf8), name: "report")
        var both = Endpoint<Void>.upload(.post, "reports", form: form)
        both.requestBody = .data(Data("raw".utf8))
        // When
        let reason = invalidRequestReason(both)
        let withParameters = invalidRequestReason(
            {
                var endpoint = both
                endpoint.parameters = ["a": 1]
                return endpoint
            }())
        let replaced = try build(Endpoint<Void>.upload(.post, "reports", form: form).uploading(.data(Data("raw".utf8))))
        let formLast = try build(Endpoint<Void>.upload(.post, "reports", body: .data(Data("raw".utf8))).uploading(form))
        // Then
        #expect(reason == "a request sends either a multipart form or a body of its own, not both")
        #expect(withParameters == reason)
        #expect(replaced.body?.inMemoryData == Data("raw".utf8))
        #expect(replaced.headers["Content-Type"] == "application/octet-stream")
        #expect(formLast.headers["Content-Type"] == form.contentType)
    }

    @Test("Encodable bodies are encoded with the configuration's encoder")
    func encodableBody() throws {
        // Given / When
        let post = try build(Endpoint<Void>.post("books", body: NewBook(title: "Dune", genre: .fiction)))
        let get = try build(Endpoint<Void>(.get, "books", body: NewBook(title: "A/B", genre: .science)))
        // Then
        #expect(post.body?.inMemoryData.map { String(decoding: $0, as: UTF8.self) } == #"{"genre":"fiction","title":"Dune"}"#)
        #expect(get.url.absoluteString.hasSuffix("/books?genre=science&title=A%2FB"))
    }

    @Test("Numbers a Double cannot hold keep every digit: an Encodable's JSON body is the encoder's text, a query writes the digits")
    func exactNumbers() throws {
        struct Payment: Encodable, Sendable {
            var amount = Decimal(string: "1.23456789012345678901") ?? 0
            var id = UInt64.max
        }
        var endpoint = Endpoint<Void>.post("payments", parameters: Parameters(Payment()))
        endpoint.requestRootKey = "payment.data"
        let post = try build(endpoint)
        #expect(
            post.body?.inMemoryData.map { String(decoding: $0, as: UTF8.self) }
                == #"{"payment":{"data":{"amount":1.23456789012345678901,"id":18446744073709551615}}}"#)
        #expect(post.headers["Content-Type"] == "application/json")
        let get = try build(Endpoint<Void>.get("payments", parameters: Parameters(Payment())))
        #expect(get.url.query == "amount=1.23456789012345678901&id=18446744073709551615")
        var form = Endpoint<Void>.post("payments", parameters: ["id": UInt64.max])
        form.encoding = .form
        #expect(try build(form).body?.inMemoryData == Data("id=18446744073709551615".utf8))
        var query = Endpoint<Void>.delete("payments")
        query.query = ["amount": Decimal(string: "0.1000000000000000055") ?? 0, "literal": 3.133 as Decimal]
        #expect(try build(query).url.query == "amount=0.1000000000000000055&literal=3.133", "a float literal's binary error left out")
        struct Small: Encodable, Sendable { var price = Decimal(string: "0.00001") ?? 0 }
        #expect(try build(Endpoint<Void>.get("payments", parameters: Parameters(Small()))).url.query == "price=0.00001")
        var multipart = Endpoint<Void>.post("payments", parameters: ["meta": ["price": Decimal(string: "1.5") ?? 0]])
        multipart.encoding = .multipart
        let fields = try build(multipart).body.map { String(describing: $0) } ?? ""
        #expect(!fields.contains(#""1.5""#), "a number inside a multipart field's JSON stays a number")
    }

    @Test("An empty dictionary on GET adds no query")
    func emptyQuery() throws {
        let request = try build(Endpoint<Void>.get("books", parameters: [:]))
        #expect(request.url.absoluteString == "http://api.test/api/v1/books")
    }

    @Test("Unsupported parameter values fail with invalidRequest naming the parameter")
    func unsupportedValue() {
        // Given a value of a type that cannot be sent
        struct Opaque: Sendable {}
        // When / Then
        let reason = invalidRequestReason(Endpoint<Void>.post("books", parameters: ["filter": ["owner": Opaque()]]))
        #expect(reason?.contains("parameter \"filter.owner\"") == true, "\(reason ?? "nil")")
        #expect(reason?.contains("Opaque") == true)
    }

    // MARK: - Headers

    @Test("Accept defaults to JSON; Content-Type is set only when there is a body")
    func defaultHeaders() throws {
        // Given / When
        let get = try build(Endpoint<Void>.get("books"))
        let emptyPost = try build(Endpoint<Void>.post("books/refresh"))
        let post = try build(Endpoint<Void>.post("books", parameters: ["a": 1]))
        // Then
        #expect(get.headers["Accept"] == "application/json")
        #expect(get.headers["Content-Type"] == nil)
        #expect(emptyPost.headers["Content-Type"] == nil)
        #expect(emptyPost.body == nil)
        #expect(post.headers["Content-Type"] == "application/json")
    }

    @Test("Per-call headers are kept and win over the library defaults")
    func perCallHeaders() throws {
        // Given / When
        let request = try build(
            Endpoint<Void>.post(
                "books", parameters: ["a": 1],
                headers: ["accept": "text/csv", "content-type": "application/vnd.books+json", "X-Trace": "t1"]))
        // Then
        #expect(request.headers["Accept"] == "text/csv")
        #expect(request.headers.values(for: "Accept").count == 1)
        #expect(request.headers["Content-Type"] == "application/vnd.books+json")
        #expect(request.headers["X-Trace"] == "t1")
    }

    @Test("Configuration default headers win over per-call headers")
    func configurationHeadersWin() throws {
        // Given
        let builder = RequestBuilder(
            configuration: try makeConfiguration(defaultHeaders: ["X-Client": "app/1.0", "Accept": "application/hal+json"]))
        // When
        let request = try build(
            Endpoint<Void>.get("books", headers: ["x-client": "other", "Accept": "text/plain", "X-Trace": "t1"]),
            with: builder)
        // Then
        #expect(request.headers["X-Client"] == "app/1.0")
        #expect(request.headers.values(for: "x-client") == ["app/1.0"])
        #expect(request.headers["Accept"] == "application/hal+json")
        #expect(request.headers["X-Trace"] == "t1")
    }

    @Test("A call's repeated Cookie fields go as one, joined with a semicolon; a default Cookie replaces them")
    func cookiesJoined() throws {
        let builder = RequestBuilder(configuration: try makeConfiguration(defaultHeaders: ["Cookie": "theme=dark"]))
        var headers: HTTPHeaders = ["Cookie": "a=1"]
        headers.add(name: "Cookie", value: "b=2")
        let call = try build(Endpoint<Void>.get("books", headers: headers), with: builder)
        let own = try build(Endpoint<Void>.get("books", headers: headers))
        #expect(call.headers.values(for: "Cookie") == ["theme=dark"])
        #expect(own.headers.values(for: "Cookie") == ["a=1; b=2"])
    }

    @Test("A default credential goes only to the API's hosts: an absolute URL elsewhere goes without it, other defaults kept")
    func defaultCredentialsStayOnTheAPIsHosts() throws {
        // Given
        var configuration = try makeConfiguration(
            defaultHeaders: ["Authorization": "Key k1", "X-Api-Key": "k2", "X-Client": "app/1.0"])
        configuration.sessionHosts = ["files.api.test"]
        let builder = RequestBuilder(configuration: configuration)
        // When
        let storage = try build(Endpoint<Void>.get("https://bucket.storage.test/o?X-Signature=s"), with: builder)
        let own = try build(
            Endpoint<Void>.get("https://bucket.storage.test/o", headers: ["Authorization": "Bearer own"]), with: builder)
        let api = try build(Endpoint<Void>.get("http://API.test/api/v1/books"), with: builder)
        let files = try build(Endpoint<Void>.get("https://files.api.test/f/1"), with: builder)
        let relative = try build(Endpoint<Void>.get("books"), with: builder)
        // Then
        #expect(storage.headers["Authorization"] == nil && storage.headers["X-Api-Key"] == nil)
        #expect(storage.headers["X-Client"] == "app/1.0")
        #expect(own.headers["Authorization"] == "Bearer own")
        for request in [api, files, relative] {
            #expect(request.headers["Authorization"] == "Key k1" && request.headers["X-Api-Key"] == "k2", "\(request.url)")
        }
        #expect(configuration.defaultHeaders(for: storage.url) == ["X-Client": "app/1.0"])
        // An https API's key never goes over plain http, even to its own host
        var secure = try NetworkingConfiguration(baseURL: "https://api.test/api/v1")
        secure.defaultHeaders = ["X-Api-Key": "k2", "X-Client": "app/1.0"]
        #expect(secure.defaultHeaders(for: try #require(URL(string: "http://api.test/api/v1/books"))) == ["X-Client": "app/1.0"])
        #expect(secure.defaultHeaders(for: try #require(URL(string: "https://api.test/api/v1/books")))["X-Api-Key"] == "k2")
    }

    @Test(
        "Per-call headers with a line break or another control character are rejected",
        arguments: ["a\r\nInjected: 1", "a\nb", "a\rb", "a\0b", "a\u{0B}b", "a\u{7F}"])
    func headerInjection(value: String) {
        // Given / When
        let reason = invalidRequestReason(Endpoint<Void>.get("books", headers: ["X-Trace": value]))
        // Then
        #expect(reason?.contains("X-Trace") == true, "\(reason ?? "nil")")
        #expect(reason?.contains("line break, NUL or another control character") == true)
    }

    // MARK: - Timeout and security

    @Test("The endpoint's timeout overrides the configuration's")
    func timeouts() throws {
        // Given / When
        let plain = try build(Endpoint<Void>.get("books"))
        let quick = try build(Endpoint<Void>(.get, "books", timeout: 5))
        // Then
        #expect(plain.timeout == 75)
        #expect(quick.timeout == 5)
    }

    @Test("Only an exchange with no time limit gets the configuration's idle timeout, and not a stream")
    func idleTimeout() throws {
        var configuration = try makeConfiguration()
        let builder = RequestBuilder(configuration: configuration)
        #expect(try build(Endpoint<Void>.get("books")).idleTimeout == nil)
        #expect(try build(Endpoint<Void>(.get, "books", timeout: .infinity)).idleTimeout == 60)
        var stream = Endpoint<ResponseChunks>(.get, "logs", timeout: .infinity)
        stream.responseBodySink = ResponseChunks(method: .get, unreadLimit: .max, wire: WireActivity()).sink
        #expect(try build(stream, with: builder).idleTimeout == nil)
        // The endpoint's own: for any call, `.infinity` for none.
        var poll = Endpoint<Void>(.get, "events", timeout: .infinity)
        poll.idleTimeout = .infinity
        #expect(try build(poll, with: builder).idleTimeout == nil)
        var quick = Endpoint<Void>.get("books")
        quick.idleTimeout = 5
        #expect(try build(quick, with: builder).idleTimeout == 5)
        stream.idleTimeout = 30
        #expect(try build(stream, with: builder).idleTimeout == 30)
        quick.idleTimeout = 0
        #expect(invalidRequestReason(quick)?.contains("idle timeout") == true)
        configuration.idleTimeout = nil
        #expect(
            try build(Endpoint<Void>(.get, "books", timeout: .infinity), with: RequestBuilder(configuration: configuration)).idleTimeout
                == nil)
        for invalid in [0, -1, TimeInterval.nan] {
            configuration.idleTimeout = invalid
            #expect(configuration.validationError?.description.contains("idleTimeout") == true)
        }
    }

    @Test("A file's transfer with no timeout of its own has no time limit and the idle timeout; other calls keep the configuration's")
    func transferTimeouts() throws {
        var configuration = try makeConfiguration()
        let file = URL(fileURLWithPath: "/tmp/upload.bin")
        func limits<R>(_ endpoint: Endpoint<R>) throws -> [TimeInterval?] {
            let request = try build(endpoint, with: RequestBuilder(configuration: configuration))
            return [request.timeout, request.idleTimeout]
        }
        #expect(try limits(Endpoint<DownloadedFile>.get("file")) == [.infinity, 60])
        #expect(try limits(Endpoint<Void>.upload(.put, "file", body: .file(file))) == [.infinity, 60])
        #expect(try limits(Endpoint<Void>.upload(.put, "file", body: .data(Data("a".utf8)))) == [75, nil])
        #expect(try limits(Endpoint<DownloadedFile>.get("file").timingOut(after: 600)) == [600, nil])
        #expect(try limits(Endpoint<DownloadedFile>.get("file").timingOut(whenIdleFor: 30)) == [.infinity, 30])
        #expect(try limits(Endpoint<DownloadedFile>.get("file").timingOut(whenIdleFor: .infinity)) == [.infinity, nil])
        var chunks = Endpoint<ResponseChunks>.upload(.post, "echo", body: .file(file))
        chunks.responseBodySink = ResponseChunks(method: .post, unreadLimit: .max, wire: WireActivity()).sink
        #expect(try limits(chunks) == [75, nil], "a stream's answer judges its silence itself")
        configuration.idleTimeout = nil
        #expect(try limits(Endpoint<DownloadedFile>.get("file")) == [75, nil], "never with no limit at all unless asked")
    }

    @Test("Requests carry pins only when pinning is on")
    func security() throws {
        // Given
        let pin = try PublicKeyPin(sha256Digest: Data(repeating: 9, count: 32))
        let ca = FileManager.default.temporaryDirectory.appendingPathComponent("private-ca-\(UUID().uuidString).pem")
        try Data(testAuthorityPEM.utf8).write(to: ca)
        defer { try? FileManager.default.removeItem(at: ca) }
        let pinning = RequestBuilder(
            configuration: try NetworkingConfiguration(
                domainURL: "api.test", usePinningCertificate: true, pinnedPublicKeys: [pin], certificateAuthorityFile: ca))
        let notPinning = RequestBuilder(
            configuration: try NetworkingConfiguration(domainURL: "api.test", usePinningCertificate: false, pinnedPublicKeys: [pin]))
        // When
        let pinned = try build(Endpoint<Void>.get("books"), with: pinning)
        let unpinned = try build(Endpoint<Void>.get("books"), with: notPinning)
        // Then
        #expect(pinned.security.pinnedPublicKeys == [pin])
        #expect(pinned.security.certificateAuthorityFile == ca)
        #expect(unpinned.security == .default)
    }
}

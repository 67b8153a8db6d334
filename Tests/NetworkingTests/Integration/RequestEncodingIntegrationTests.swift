import Foundation
import Networking
import Testing

/// What the server really receives: paths, queries, bodies and headers, seen through `/echo`
/// and httpbin.
@Suite("Request encoding seen by the server")
struct RequestEncodingIntegrationTests {
    @Test("path segments are percent-encoded and arrive literally")
    func pathEncoding() async throws {
        let repository = try TestAPI.anonymous()
        let echo: TestAPI.Echo = try await repository.performRequest(
            Endpoint<TestAPI.Echo>.get("echo/a b/ü?x=1#y/100%").withoutSession()
        ).get()
        #expect(echo.path == "/api/v1/echo/a%20b/%C3%BC%3Fx=1%23y/100%25")
        #expect(echo.query.isEmpty)
    }

    @Test("a base URL with an encoded space in its path reaches that path")
    func baseURLWithASpace() async throws {
        let servers = try TestServers.require()
        let configuration = try NetworkingConfiguration(baseURL: servers.apiURL + "/echo/Team%20Site")
        let repository = TestAPI.Repository(configuration: configuration)
        let echo: TestAPI.Echo = try await repository.performRequest(
            Endpoint<TestAPI.Echo>.get("lists/a b").withoutSession()
        ).get()
        #expect(echo.path == "/api/v1/echo/Team%20Site/lists/a%20b")
    }

    @Test("GET parameters go to the query: sorted, nested, arrays, reserved characters encoded")
    func queryEncoding() async throws {
        let repository = try TestAPI.anonymous()
        let echo: TestAPI.Echo = try await repository.performRequest(
            Endpoint<TestAPI.Echo>.get(
                "echo",
                parameters: [
                    "q": "a&b=c+d e", "page": 2, "tags": ["x", "y"], "filter": ["genre": "novel"], "draft": false,
                    "missing": String?.none as any Sendable,
                ]
            )
            .withoutSession()
        ).get()
        #expect(echo.args["q"] == ["a&b=c+d e"])
        #expect(echo.args["page"] == ["2"])
        #expect(echo.args["tags[]"] == ["x", "y"])
        #expect(echo.args["filter[genre]"] == ["novel"])
        #expect(echo.args["draft"] == ["false"])
        #expect(echo.args["missing"] == nil)
        #expect(echo.query.hasPrefix("draft=false&filter%5Bgenre%5D=novel&page=2&q=a%26b%3Dc%2Bd%20e"))
        #expect(echo.json == nil)
    }

    @Test("POST, PUT and PATCH send JSON bodies; DELETE uses the query unless told otherwise")
    func bodies() async throws {
        let repository = try TestAPI.anonymous()
        for method in [HTTPMethod.post, .put, .patch] {
            let echo: TestAPI.Echo = try await repository.performRequest(
                Endpoint<TestAPI.Echo>(method, "echo", parameters: ["title": "Dune", "year": 1965]).withoutSession()
            ).get()
            #expect(echo.method == method.rawValue)
            #expect(echo.json == ["title": "Dune", "year": 1965])
            #expect(echo.header("Content-Type") == "application/json")
        }
        let delete: TestAPI.Echo = try await repository.performRequest(
            Endpoint<TestAPI.Echo>(.delete, "echo", parameters: ["id": 7]).withoutSession()
        ).get()
        #expect(delete.args["id"] == ["7"])
        let deleteWithBody: TestAPI.Echo = try await repository.performRequest(
            Endpoint<TestAPI.Echo>(.delete, "echo", parameters: ["ids": [1, 2]], encoding: .json).withoutSession()
        ).get()
        #expect(deleteWithBody.json == ["ids": [1, 2]])
    }

    @Test("array bodies, Encodable bodies and form bodies")
    func otherBodies() async throws {
        let repository = try TestAPI.anonymous()
        let array: TestAPI.Echo = try await repository.performRequest(
            Endpoint<TestAPI.Echo>.post("echo", parameters: [1, "two", ["three": 3]]).withoutSession()
        ).get()
        #expect(array.json == [1, "two", ["three": 3]])
        let model: TestAPI.Echo = try await repository.performRequest(
            Endpoint<TestAPI.Echo>.post("echo", body: TestAPI.NewBook(title: "T", author: "A", genre: "novel", year: 1)).withoutSession()
        ).get()
        #expect(model.json == ["title": "T", "author": "A", "genre": "novel", "year": 1])
        let form: TestAPI.Echo = try await repository.performRequest(
            Endpoint<TestAPI.Echo>(.post, "echo", parameters: ["grant_type": "password", "scope": "a b"], encoding: .form)
                .withoutSession()
        ).get()
        #expect(form.data == "grant_type=password&scope=a%20b")
        #expect(form.header("Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true)
    }

    @Test("header precedence: per-call < session Authorization < default headers")
    func headerPrecedence() async throws {
        let servers = try TestServers.require()
        let (_, session, login) = try await TestAPI.loggedIn()
        let plain = TestAPI.Repository(configuration: try TestServers.configuration(servers.apiURL), sessionManager: session)
        let overriding = TestAPI.Repository(
            configuration: try TestServers.configuration(
                servers.apiURL, defaultHeaders: ["Authorization": "Default", "X-Client": "default"]),
            sessionManager: session)
        let headers: HTTPHeaders = ["Authorization": "PerCall", "X-Client": "per-call", "X-Only-Call": "1"]
        let signed: TestAPI.Echo = try await plain.performRequest(Endpoint<TestAPI.Echo>.get("echo", headers: headers)).get()
        let defaulted: TestAPI.Echo = try await overriding.performRequest(Endpoint<TestAPI.Echo>.get("echo", headers: headers)).get()
        #expect(signed.header("Authorization") == "Bearer \(login.token)")
        #expect(signed.header("X-Client") == "per-call")
        #expect(defaulted.header("Authorization") == "Default")
        #expect(defaulted.header("X-Client") == "default")
        #expect(defaulted.header("X-Only-Call") == "1")
        #expect(signed.header("Accept") == "application/json")
    }

    @Test("httpbin sees the same JSON body, method and headers")
    func httpbinAnything() async throws {
        struct Anything: Decodable, Sendable {
            let method: String
            let json: JSONValue?
            let headers: [String: String]
            let args: [String: JSONValue]
        }
        let servers = try TestServers.require()
        let repository = TestAPI.Repository(
            configuration: try TestServers.configuration(servers.httpbinURL, defaultHeaders: ["X-Default": "d"]))
        let posted: Anything = try await repository.performRequest(
            Endpoint<Anything>.post("anything/books", parameters: ["title": "Dune"], headers: ["X-Call": "c"]).withoutSession()
        ).get()
        #expect(posted.method == "POST")
        #expect(posted.json == ["title": "Dune"])
        #expect(posted.headers["X-Call"] == "c")
        #expect(posted.headers["X-Default"] == "d")
        let got: Anything = try await repository.performRequest(
            Endpoint<Anything>.get("anything", parameters: ["page": 1]).withoutSession()
        ).get()
        #expect(got.args["page"] == "1")
    }

    @Test("httpbin: gzip and deflate bodies arrive decoded; status codes map to errors")
    func httpbinBehaviour() async throws {
        struct Compressed: Decodable, Sendable {
            let gzipped: Bool?
            let deflated: Bool?
        }
        let servers = try TestServers.require()
        let repository = TestAPI.Repository(configuration: try TestServers.configuration(servers.httpbinURL))
        let gzip: Compressed = try await repository.performRequest(Endpoint<Compressed>.get("gzip").withoutSession()).get()
        let deflate: Compressed = try await repository.performRequest(Endpoint<Compressed>.get("deflate").withoutSession()).get()
        #expect(gzip.gzipped == true)
        #expect(deflate.deflated == true)
        let teapot = await repository.performRequest(Endpoint<Void>.get("status/418").withoutSession())
        #expect(teapot.failure?.statusCode == 418)
    }

    @Test("a 401 with WWW-Authenticate: Basic is answered, not hung (httpbin and the test API)")
    func basicAuthChallenge() async throws {
        let servers = try TestServers.require()
        let httpbin = TestAPI.Repository(configuration: try TestServers.configuration(servers.httpbinURL, timeout: 10))
        let api = try TestAPI.anonymous(timeout: 10)
        let fromHttpbin = await httpbin.performRequest(Endpoint<Void>.get("basic-auth/user/passwd"))
        let fromAPI = await api.performRequest(Endpoint<Void>.get("basic-auth-401"))
        #expect(fromHttpbin.failure?.statusCode == 401)
        #expect(fromAPI.failure?.statusCode == 401)
        guard case .unauthenticatedSession(let context?)? = fromAPI.failure else {
            Issue.record("expected .unauthenticatedSession, got \(String(describing: fromAPI.failure))")
            return
        }
        #expect(context.response?.headers["WWW-Authenticate"]?.hasPrefix("Basic") == true)
    }
}

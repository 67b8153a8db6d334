import Foundation
import Testing

@testable import Networking

/// What every transport must do with a well-behaved server: methods, headers, bodies, statuses
/// and compression, against the real test API and httpbin on loopback.
@Suite("Transport conformance")
struct TransportConformanceTests {
    static let methods: [HTTPMethod] = [.get, .post, .put, .patch, .delete, .options]

    @Test("Each method reaches the server as sent", arguments: TransportUnderTest.all, methods)
    func methodIsSent(transport: TransportUnderTest, method: HTTPMethod) async throws {
        // Given
        let servers = try TestServers.require()
        let request = try Wire.request(method, servers.apiURL + "/echo")
        // When
        let response = try await Wire.response(request, over: transport.shared)
        // Then
        #expect(response.statusCode == 200)
        #expect(try Wire.echo(response).method == method.rawValue)
    }

    @Test("HEAD returns the headers and no body", arguments: TransportUnderTest.all)
    func headHasNoBody(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let response = try await Wire.response(try Wire.request(.head, servers.apiURL + "/echo"), over: transport.shared)
        #expect(response.statusCode == 200)
        #expect(response.body.isEmpty)
        #expect(response.headers["Content-Type"] == "application/json")
    }

    @Test("Request headers, query and path are sent unchanged", arguments: TransportUnderTest.all)
    func headersAndQueryAreSent(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let request = try Wire.request(
            servers.apiURL + "/echo/a%2Fb?q=two%20words&n=1",
            headers: ["X-Custom": "value 1", "Authorization": "Bearer token-123", "X-Empty": ""])
        let echo = try Wire.echo(try await Wire.response(request, over: transport.shared))
        #expect(echo.path == "/api/v1/echo/a%2Fb")
        #expect(echo.query == "q=two%20words&n=1")
        #expect(echo.header("X-Custom") == "value 1")
        #expect(echo.header("Authorization") == "Bearer token-123")
    }

    @Test(
        "A header value with a line break (a token from a server, a field from an interceptor) is refused, not sent as extra fields",
        arguments: TransportUnderTest.all, ["token\r\nX-Injected: 1", "token\nX-Injected: 1", "a\u{0}b"])
    func headerInjectionIsRefused(transport: TransportUnderTest, value: String) async throws {
        let servers = try TestServers.require()
        let request = try Wire.request(servers.apiURL + "/echo", headers: ["Authorization": "Bearer \(value)"])
        guard case .invalidRequest(let reason) = await Wire.send(request, over: transport.shared).failure else {
            Issue.record("expected invalidRequest")
            return
        }
        #expect(reason.contains("Authorization"))
    }

    @Test("A URL that is not http or https is refused by every transport", arguments: TransportUnderTest.all)
    func otherSchemesAreRefused(transport: TransportUnderTest) async throws {
        let request = try Wire.request("file:///etc/hostname")
        guard case .invalidRequest? = await Wire.send(request, over: transport.shared).failure else {
            Issue.record("expected invalidRequest")
            return
        }
    }

    @Test("Response headers and the final URL are returned", arguments: TransportUnderTest.all)
    func responseHeaders(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let url = servers.httpbinURL + "/response-headers?X-Answer=42&X-Answer=43"
        let response = try await Wire.response(try Wire.request(url), over: transport.shared)
        #expect(response.statusCode == 200)
        #expect(response.headers.values(for: "x-answer").joined(separator: ", ") == "42, 43")
        #expect(response.url?.absoluteString == url)
    }

    @Test("A JSON body is sent with its method", arguments: TransportUnderTest.all, [HTTPMethod.post, .put, .patch, .delete])
    func jsonBody(transport: TransportUnderTest, method: HTTPMethod) async throws {
        let servers = try TestServers.require()
        let body = Data(#"{"name":"Ada","tags":["x","y"]}"#.utf8)
        let request = try Wire.request(method, servers.apiURL + "/echo", headers: ["Content-Type": "application/json"], body: body)
        let echo = try Wire.echo(try await Wire.response(request, over: transport.shared))
        #expect(echo.method == method.rawValue)
        #expect(echo.data == String(decoding: body, as: UTF8.self))
        #expect(echo.header("Content-Length") == "\(body.count)")
    }

    @Test("A caller's Content-Length is replaced by the body's own", arguments: TransportUnderTest.all)
    func staleContentLength(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let request = try Wire.request(
            .post, servers.apiURL + "/echo", headers: ["Content-Type": "text/plain", "Content-Length": "2"], body: Data("hello".utf8))
        let echo = try Wire.echo(try await Wire.response(request, over: transport.shared))
        #expect(echo.data == "hello")
        #expect(echo.header("Content-Length") == "5")
    }

    @Test("A POST without a body sends Content-Length 0", arguments: TransportUnderTest.all)
    func emptyPost(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let echo = try Wire.echo(try await Wire.response(try Wire.request(.post, servers.apiURL + "/echo"), over: transport.shared))
        #expect(echo.method == "POST")
        #expect(echo.data.isEmpty)
    }

    @Test("A body of several megabytes is sent whole", arguments: TransportUnderTest.all)
    func largeRequestBody(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let size = 3 * 1024 * 1024 + 17
        let body = Data((0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) })
        let request = try Wire.request(.put, servers.apiURL + "/echo", headers: ["Content-Type": "text/plain"], body: body)
        let echo = try Wire.echo(try await Wire.response(request, over: transport.shared))
        #expect(echo.data.utf8.count == size)
        #expect(echo.data.utf8.elementsEqual(body))
    }

    @Test("A body from a slice of a larger Data is sent from its own start", arguments: TransportUnderTest.all)
    func slicedBody(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let whole = Data("0123456789".utf8)
        let slice = whole[3..<7]
        let request = try Wire.request(.post, servers.apiURL + "/echo", headers: ["Content-Type": "text/plain"], body: slice)
        #expect(try Wire.echo(try await Wire.response(request, over: transport.shared)).data == "3456")
    }

    @Test("A response of several megabytes arrives intact", arguments: TransportUnderTest.all)
    func largeResponseBody(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let size = 5_000_000
        let response = try await Wire.response(try Wire.request(servers.apiURL + "/bytes/\(size)"), over: transport.shared)
        #expect(response.body.count == size)
        let intact = response.body.enumerated().allSatisfy { index, byte in byte == UInt8(index % 251) }
        #expect(intact)
    }

    @Test("Statuses are responses, not errors", arguments: TransportUnderTest.all, [200, 201, 202, 204, 400, 404, 409, 422, 500, 503])
    func statusCodes(transport: TransportUnderTest, status: Int) async throws {
        let servers = try TestServers.require()
        let response = try await Wire.response(try Wire.request(servers.apiURL + "/status/\(status)"), over: transport.shared)
        #expect(response.statusCode == status)
        if status == 204 { #expect(response.body.isEmpty) } else { #expect(!response.body.isEmpty) }
    }

    @Test("An empty 200 has an empty body", arguments: TransportUnderTest.all)
    func emptyBody(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let response = try await Wire.response(try Wire.request(servers.apiURL + "/empty"), over: transport.shared)
        #expect(response.statusCode == 200)
        #expect(response.body.isEmpty)
    }

    @Test("A 401 with WWW-Authenticate: Basic is returned, not hung on", arguments: TransportUnderTest.all)
    func basicChallengeDoesNotHang(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let response = try await Wire.response(
            try Wire.request(servers.apiURL + "/basic-auth-401", timeout: 10), over: transport.shared)
        #expect(response.statusCode == 401)
        #expect(response.headers["WWW-Authenticate"] == #"Basic realm="test""#)
    }

    @Test("gzip and deflate bodies are decoded", arguments: TransportUnderTest.all, ["gzip", "deflate"])
    func compressedBodies(transport: TransportUnderTest, encoding: String) async throws {
        let servers = try TestServers.require()
        let api = try await Wire.response(try Wire.request(servers.apiURL + "/\(encoding)"), over: transport.shared)
        #expect(api.json?["compressed"] == .string(encoding))
        let httpbin = try await Wire.response(try Wire.request(servers.httpbinURL + "/\(encoding)"), over: transport.shared)
        #expect(httpbin.json?[encoding == "gzip" ? "gzipped" : "deflated"] == .bool(true))
    }
}

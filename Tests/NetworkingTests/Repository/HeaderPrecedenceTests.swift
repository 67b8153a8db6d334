import Foundation
import Networking
import NetworkingTestSupport
import Testing

@Suite("Header precedence through the pipeline")
struct HeaderPrecedenceTests {
    private func send(
        headers: HTTPHeaders, defaultHeaders: HTTPHeaders = [:], scheme: AuthorizationScheme = .bearer,
        token: String? = "t0k3n", authentication: Bool = false
    ) async throws -> TransportRequest {
        let session = SessionManager<User>(authorizationScheme: scheme)
        if let token { try session.login(user: User(id: 1, name: "Ann"), token: token) }
        let transport = StubTransport(routes: [.status(.get, "books", 204)])
        let repository = TestRepository(
            configuration: try makeConfiguration(defaultHeaders: defaultHeaders), sessionManager: session,
            transport: transport)
        let endpoint = Endpoint<Void>.get("books", headers: headers)
        let result =
            authentication
            ? await repository.performAuthenticationRequest(endpoint) : await repository.performRequest(endpoint)
        try result.get()
        return try #require(transport.requests.first)
    }

    @Test("The session's Authorization wins over the per-call one, as Bearer by default")
    func sessionOverCall() async throws {
        // Given / When
        let request = try await send(headers: ["authorization": "Basic per-call", "X-Trace": "t1"])
        // Then
        #expect(request.headers.values(for: "Authorization") == ["Bearer t0k3n"])
        #expect(request.headers["X-Trace"] == "t1")
    }

    @Test("The raw scheme sends the token alone")
    func rawScheme() async throws {
        let request = try await send(headers: ["Authorization": "Basic per-call"], scheme: .raw)
        #expect(request.headers.values(for: "Authorization") == ["t0k3n"])
    }

    @Test("A custom scheme formats the header")
    func customScheme() async throws {
        let request = try await send(headers: [:], scheme: AuthorizationScheme { "Token token=\($0.accessToken)" })
        #expect(request.headers["Authorization"] == "Token token=t0k3n")
    }

    @Test("The configuration's default Authorization wins over the session's and the per-call one")
    func configurationOverSession() async throws {
        // Given / When
        let request = try await send(
            headers: ["Authorization": "Basic per-call"], defaultHeaders: ["AUTHORIZATION": "ApiKey fixed"])
        // Then
        #expect(request.headers.values(for: "Authorization") == ["ApiKey fixed"])
    }

    @Test("An authentication request keeps its per-call Authorization and is not signed by the session")
    func authenticationRequestUnsigned() async throws {
        // Given / When
        let withHeader = try await send(headers: ["Authorization": "Basic dXNlcjpwdw=="], authentication: true)
        let withoutHeader = try await send(headers: [:], authentication: true)
        let loggedOut = try await send(headers: [:], token: nil, authentication: true)
        // Then
        #expect(withHeader.headers["Authorization"] == "Basic dXNlcjpwdw==")
        #expect(withoutHeader.headers["Authorization"] == nil)
        #expect(loggedOut.headers["Authorization"] == nil)
    }

    @Test("Other defaults, per-call and configuration headers combine in the documented order")
    func combined() async throws {
        // Given / When
        let request = try await send(
            headers: ["Accept": "text/csv", "X-Client": "call", "X-Call": "1"],
            defaultHeaders: ["x-client": "config", "X-Config": "2"])
        // Then
        #expect(request.headers["Accept"] == "text/csv")
        #expect(request.headers.values(for: "X-Client") == ["config"])
        #expect(request.headers["X-Call"] == "1")
        #expect(request.headers["X-Config"] == "2")
        #expect(request.headers["Authorization"] == "Bearer t0k3n")
    }
}

import Foundation
import Networking
import NetworkingCache
import NetworkingTestSupport
import Testing

/// Stale answers standing in when the network cannot be reached.
@Suite struct ResponseCacheStaleTests {
    /// A stub whose `resource` answers with `headers` while `online`, and fails to connect otherwise.
    static func transport(online: Shared<Bool>, headers: HTTPHeaders, failure: TransportError = .network(.connectionRefused))
        -> StubTransport
    {
        StubTransport(routes: [
            StubTransport.Route(.get, "resource") { request throws(TransportError) in
                guard online.current else { throw failure }
                var fields = headers
                fields["Content-Type"] = "application/json"
                return TransportResponse(statusCode: 200, headers: fields, body: Data(#"{"n":1}"#.utf8), url: request.url)
            }
        ])
    }

    private func run(headers: HTTPHeaders, allowed: Bool, failure: TransportError = .network(.connectionRefused)) async throws
        -> Result<RepositoryResponse<JSONValue>, RepositoryError>
    {
        let clock = TestClock()
        let cache = try ResponseCache(configuration: .init(clock: clock.networkingClock))
        let online = Shared(true)
        let repository = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cache),
            transport: Self.transport(online: online, headers: headers, failure: failure))
        let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("resource").withoutSession().servingStaleOnConnectivityFailure(allowed)
        _ = try await repository.fetch(endpoint).get()
        clock.advance(by: 120)
        online.set(false)
        return await repository.fetch(endpoint)
    }

    @Test func aStaleAnswerStandsInWhenTheServerCannotBeReached() async throws {
        let result = try await run(headers: ["Cache-Control": "max-age=60", "ETag": "\"a\""], allowed: true)
        let response = try result.get()
        #expect(response.source == .stale)
        #expect(response.n == 1)
        #expect(response.headers["Age"] == "120")
        // A timeout counts as well.
        #expect(try await run(headers: ["Cache-Control": "max-age=60"], allowed: true, failure: .timedOut).get().source == .stale)
    }

    @Test func neverWhenNotAllowedOrForbiddenByTheResponse() async throws {
        #expect(try await run(headers: ["Cache-Control": "max-age=60"], allowed: false).failure?.isConnectivityFailure == true)
        #expect(
            try await run(headers: ["Cache-Control": "max-age=60, must-revalidate"], allowed: true).failure?.isConnectivityFailure == true)
        #expect(
            try await run(headers: ["Cache-Control": "no-cache", "ETag": "\"a\""], allowed: true).failure?.isConnectivityFailure == true)
        // Only connectivity failures: a TLS failure is not one.
        let tls = try await run(
            headers: ["Cache-Control": "max-age=60"], allowed: true, failure: .tls(.untrustedCertificate("self-signed")))
        #expect(tls.failure != nil)
    }

    @Test func aWholeAnswerThatSaysWhatTheResourceIsNowToARevalidationRetiresTheStoredAnswer() async throws {
        // Given an answer stored for a minute, now stale, with stale answers allowed
        let clock = TestClock()
        let cache = try ResponseCache(configuration: .init(servesStaleOnConnectivityFailure: true, clock: clock.networkingClock))
        let status = Shared(200)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "resource") { request throws(TransportError) in
                let code = status.current
                var headers: HTTPHeaders = ["Content-Type": "application/json"]
                if code == 200 {
                    headers["Cache-Control"] = "max-age=60"
                    headers["ETag"] = "\"a\""
                }
                return TransportResponse(statusCode: code, headers: headers, body: Data(#"{"status":\#(code)}"#.utf8), url: request.url)
            }
        ])
        let repository = CacheRepository(configuration: try CacheHarness.configuration(cache: cache), transport: transport)
        let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("resource").withoutSession()
        _ = try await repository.fetch(endpoint).get()
        clock.advance(by: 120)

        // When the revalidation is answered with an error that says nothing about the resource,
        // the stored answer stays and may still stand in
        for code in [503, 429, 403] {
            status.set(code)
            #expect(await repository.fetch(endpoint).failure?.statusCode == code)
            #expect(try await repository.fetch(endpoint.cacheOnly()).get().source == .stale)
        }

        // When it is answered with a 404 instead
        status.set(404)
        #expect(await repository.fetch(endpoint).failure?.statusCode == 404)

        // Then the old 200 is gone: a call that would take a stale answer finds nothing
        #expect(await repository.fetch(endpoint.cacheOnly()).failure?.isCacheMiss == true)
        #expect(transport.requests.count == 5)
        #expect(transport.requests.last?.headers["If-None-Match"] == "\"a\"")
    }

    @Test func aTimeToLiveAnswerAndTheConfigurationDefault() async throws {
        let clock = TestClock()
        let cache = try ResponseCache(configuration: .init(servesStaleOnConnectivityFailure: true, clock: clock.networkingClock))
        let online = Shared(true)
        let repository = CacheRepository(
            configuration: try CacheHarness.configuration(cache: cache), transport: Self.transport(online: online, headers: [:]))
        let endpoint = Endpoint<RepositoryResponse<JSONValue>>.get("resource").withoutSession().cached(for: 10)
        _ = try await repository.fetch(endpoint).get()
        clock.advance(by: 11)
        online.set(false)
        #expect(try await repository.fetch(endpoint).get().source == .stale)
        // Cache-only calls may use stale answers too when allowed.
        #expect(try await repository.fetch(endpoint.cacheOnly()).get().source == .stale)
    }
}

import Foundation
import Networking
import NetworkingCache
import Testing

/// The cache against the fault server's `/control-bytes`: validators whose lines end in a bare CR,
/// which libcurl passes on.
@Suite struct ControlBytesCacheIntegrationTests {
    @Test(
        "An ETag and a Last-Modified with a bare CR are stored clean and sent back: every later call of the URL still goes",
        arguments: [false, true])
    func validatorsWithABareCarriageReturn(urlSession: Bool) async throws {
        let servers = try TestServers.require()
        let cache = try ResponseCache()
        let repository = CacheRepository(
            configuration: try TestServers.configuration(servers.faultURL, interceptors: [cache]),
            transport: urlSession ? URLSessionTransport() : LibcurlTransport())
        let endpoint = Endpoint<TransportResponse>.get("control-bytes").withoutSession()
        let first = try await repository.performRawRequest(endpoint).get()
        #expect(first.headers["ETag"] == "\"v1\"")
        #expect(first.headers["Last-Modified"] == "Wed, 21 Oct 2015 07:28:00 GMT")
        // Stored with `no-cache`: the next call asks again with the validators.
        let second = try await repository.performRawRequest(endpoint).get()
        #expect(second.source == .network)
        #expect(second.requestHeaders?["If-None-Match"] == "\"v1\"")
    }
}

import Foundation
import Networking
import NetworkingTestSupport
import Testing

/// Options whose feature lives in another product (the response cache, the offline queue) load
/// and travel with the call as options that must be handled: a call through a chain that has no
/// interceptor for them fails, naming the product to add — they are never silently ignored.
@Suite("Route options of features in other products")
struct RouteLaterFeaturesTests {
    struct LaterOption: Sendable, CustomTestStringConvertible {
        let json: String
        let product: String
        var testDescription: String { json }
    }

    static let laterOptions: [LaterOption] = [
        LaterOption(json: #""cacheTTL": 60"#, product: "ResponseCache"),
        LaterOption(json: #""invalidatesCachedRouteNames": ["books"]"#, product: "ResponseCache"),
        LaterOption(json: #""cacheIgnoreQueryParameters": true"#, product: "ResponseCache"),
        LaterOption(json: #""offline": true"#, product: "OfflineQueue"),
    ]

    @Test("They load, and a call without the product's interceptor fails before anything is sent", arguments: laterOptions)
    func refusedWithoutHandler(_ option: LaterOption) async throws {
        // Given
        let routes = try RouteTable(json: Data((#"{"r": {"method": "POST", "path": "x", "# + option.json + "}}").utf8))
        let transport = StubTransport(routes: [.status(.post, "x", 204)])
        let repository = TestRepository(configuration: try routedConfiguration(routes), transport: transport)
        // When
        let result = await repository.performRequest(Endpoint<Void>.route("r"))
        // Then
        let reason = invalidRequestReason(result)
        #expect(reason.contains("the call \"r\" asks for"))
        #expect(reason.contains(option.product))
        #expect(transport.requests.isEmpty)
    }

    @Test("A time to live of 0 alone says \"not cached\" (WebApiClient's meaning): the call goes without a cache")
    func aZeroTimeToLiveNeedsNoCache() async throws {
        let routes = try RouteTable(json: Data(#"{"r": {"method": "GET", "path": "x", "cacheTTL": 0}}"#.utf8))
        let transport = StubTransport(routes: [.status(.get, "x", 204)])
        let repository = TestRepository(configuration: try routedConfiguration(routes), transport: transport)
        _ = try await repository.performRequest(Endpoint<Void>.route("r")).get()
        #expect(transport.requests.count == 1)
    }

    @Test("gzip, saveAsResource, multipart and raw are part of this version and load")
    func transferOptionsLoad() throws {
        let routes = try RouteTable(
            json: Data(
                #"""
                {"a": {"path": "x", "gzip": true}, "b": {"path": "y", "saveAsResource": true},
                 "c": {"path": "z", "serialization": "multipart"}, "d": {"path": "w", "serializationName": "none"}}
                """#.utf8))
        #expect(routes["a"]?.gzip == true && routes["b"]?.saveAsResource == true)
        #expect(routes["c"]?.serialization == .multipart && routes["d"]?.serialization == .raw)
    }
}

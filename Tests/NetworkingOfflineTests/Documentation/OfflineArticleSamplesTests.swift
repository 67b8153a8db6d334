// swift-format-ignore-file
// The documentation's code, kept as the articles and the README show it (their drift tests compare
// line by line), so the formatter leaves this folder alone.
import Foundation
import Networking
import NetworkingOffline
import NetworkingTestSupport
import Testing

// The offline article's samples (OfflineArticleSamples.swift), run against a stub.
@Suite("Offline article samples")
struct OfflineArticleSamplesTests {
    @Test("The batch sample reads each item's own result")
    func batchSample() async throws {
        let transport = StubTransport(routes: [
            .json(.post, "batch", #"[{"code": 200, "body": "{\"id\": 1, \"title\": \"Dune\"}"}, {"code": 204, "body": ""}]"#)
        ])
        let library = OfflineArticle.LibraryRepository(configuration: try NetworkingConfiguration(domainURL: "api.example.com"), transport: transport)
        try await OfflineArticle.loadShelf(library)
        #expect(transport.requests.count == 1)
    }
}

import Foundation
import Testing

@testable import Networking

/// A file's transfer is bounded by silence, not by the configuration's timeout for a whole
/// exchange, against httpbin's `/drip` (bytes spread over seconds) and `/delay` (a late answer).
@Suite("Transfer timeouts end to end")
struct TransferTimeoutIntegrationTests {
    @Test(
        "A download to a file and an upload of a file outlast the configuration's 1 s timeout; the same exchanges in memory time out",
        arguments: TransportUnderTest.all)
    func transfersAreBoundedBySilence(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let repository = try TestAPI.anonymous(servers.httpbinURL, transport: transport.shared, timeout: 1)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("transfers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let upload = folder.appendingPathComponent("upload.bin")
        try Data(repeating: 7, count: 1_000).write(to: upload)
        let drip: Parameters = ["numbytes": 20, "duration": 2, "delay": 0]

        async let downloaded = repository.performRequest(
            Endpoint<DownloadedFile>.get("drip", parameters: drip).downloading(to: folder.appendingPathComponent("drip.bin")))
        async let uploaded = repository.performRequest(Endpoint.upload(.post, "delay/2", body: .file(upload)) as Endpoint<Void>)
        async let read = repository.performRequest(Endpoint<Data>.get("drip", parameters: drip))
        async let posted = repository.performRequest(
            Endpoint.upload(.post, "delay/2", body: .data(Data(repeating: 7, count: 1_000))) as Endpoint<Void>)
        // A transfer's own timeout still bounds it.
        async let limited = repository.performRequest(
            Endpoint<DownloadedFile>.get("drip", parameters: drip).downloading(to: folder.appendingPathComponent("limited.bin"))
                .timingOut(after: 1))

        #expect(try await downloaded.get().size == 20)
        #expect(await uploaded.failure == nil)
        for (name, result) in [("read", await read.map { _ in () }), ("posted", await posted), ("limited", await limited.map { _ in () })] {
            guard case .timeout? = result.failure else {
                Issue.record("\(name): expected a timeout, got \(result)")
                continue
            }
        }
    }
}

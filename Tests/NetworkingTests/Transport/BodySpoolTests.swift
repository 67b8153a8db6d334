import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

@Suite("Body spool")
struct BodySpoolTests {
    @Test("Cancelling while a stream has nothing to give stops the staging at once")
    func cancelWhileTheStreamWaits() async throws {
        let (chunks, producer) = AsyncStream<Data>.makeStream()
        defer { producer.finish() }
        let staging = Task { () async -> TransportError? in
            do throws(TransportError) {
                let file = try await BodySpool.spool(.stream(chunks))
                try? FileManager.default.removeItem(at: file)
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        staging.cancel()
        #expect(await staging.value(within: .seconds(10)) == .some(.cancelled))
    }
}

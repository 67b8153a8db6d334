import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

/// Upload and download progress through a repository, against the test API, on every transport.
@Suite("Progress end to end")
struct ProgressIntegrationTests {
    final class Recorder: Sendable {
        private let updates = Mutex<[TransferProgress]>([])
        var all: [TransferProgress] { updates.withLock { $0 } }
        func record(_ progress: TransferProgress) { updates.withLock { $0.append(progress) } }
    }

    @Test("a 2 MB download reports growing byte counts up to the Content-Length", arguments: TransportUnderTest.all)
    func download(transport: TransportUnderTest) async throws {
        let repository = try TestAPI.anonymous(transport: transport.make())
        let recorder = Recorder()
        let response = try await repository.performRawRequest(
            Endpoint<TransportResponse>.get("bytes/2000000").withoutSession().reportingProgress(recorder.record)
        ).get()
        let updates = recorder.all
        #expect(response.body.count == 2_000_000)
        #expect(updates.count > 1)
        #expect(updates.last?.bytesReceived == 2_000_000)
        #expect(updates.last?.totalBytesToReceive == 2_000_000)
        #expect(updates.last?.downloadFraction == 1)
        #expect(zip(updates, updates.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived })
    }

    @Test("a 1 MB upload reports bytes sent up to the body size", arguments: TransportUnderTest.all)
    func upload(transport: TransportUnderTest) async throws {
        let repository = try TestAPI.anonymous(transport: transport.make())
        let recorder = Recorder()
        let text = String(repeating: "x", count: 1_000_000)
        let echo: TestAPI.Echo = try await repository.performRequest(
            Endpoint<TestAPI.Echo>.post("echo", parameters: Parameters(json: .string(text))).withoutSession()
                .reportingProgress(recorder.record)
        ).get()
        #expect(echo.json == .string(text))
        let total = Int64(1_000_002)  // the JSON string with its quotes
        #expect(recorder.all.last { $0.bytesSent > 0 }?.bytesSent == total)
        #expect(recorder.all.first?.totalBytesToSend == total)
    }

    @Test("nothing is reported after a call is cancelled", arguments: TransportUnderTest.all)
    func noProgressAfterCancellation(transport: TransportUnderTest) async throws {
        let repository = try TestAPI.anonymous(transport: transport.make(), timeout: 30)
        let recorder = Recorder()
        let cancelling = Mutex(false)
        let cancelled = Mutex(false)
        let lateReports = Mutex(0)
        let task = Task {
            await repository.performRawRequest(
                Endpoint<TransportResponse>.get("bytes/50000000").withoutSession().reportingProgress { progress in
                    if cancelled.withLock({ $0 }) { lateReports.withLock { $0 += 1 } }
                    recorder.record(progress)
                    // A slow consumer that holds the transfer until the test cancels it (at most
                    // 10 s), so that it is still running then however busy the machine is.
                    var waited = 0
                    repeat {
                        usleep(1000)
                        waited += 1
                    } while !cancelling.withLock({ $0 }) && waited < 10_000
                })
        }
        while recorder.all.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        cancelling.withLock { $0 = true }
        task.cancel()
        let result = await task.value
        cancelled.withLock { $0 = true }
        try await Task.sleep(for: .milliseconds(200))
        guard case .cancelled? = result.failure else {
            Issue.record("expected .cancelled, got \(String(describing: result.failure))")
            return
        }
        #expect(lateReports.withLock { $0 } == 0)
    }

    @Test(
        "a progress handler may cancel its own call, downloading or uploading",
        arguments: TransportUnderTest.all, [false, true])
    func handlerCancelsItsCall(transport: TransportUnderTest, uploading: Bool) async throws {
        let repository = try TestAPI.anonymous(transport: transport.make(), timeout: 30)
        let call = Mutex<Task<Result<TransportResponse, RepositoryError>, Never>?>(nil)
        let endpoint =
            uploading
            ? Endpoint<TransportResponse>.post("echo", parameters: Parameters(json: .string(String(repeating: "x", count: 20_000_000))))
            : Endpoint<TransportResponse>.get("bytes/50000000")
        let started = Mutex(false)
        let task = Task {
            // The handler waits until the task exists, then cancels it from its own thread.
            while !started.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(1)) }
            return await repository.performRawRequest(
                endpoint.withoutSession().reportingProgress { _ in call.withLock { $0 }?.cancel() })
        }
        call.withLock { $0 = task }
        started.withLock { $0 = true }
        guard let result = await task.value(within: .seconds(60)) else {
            Issue.record("the call never ended")
            return
        }
        guard case .cancelled? = result.failure else {
            Issue.record("expected .cancelled, got \(String(describing: result.failure))")
            return
        }
    }
}

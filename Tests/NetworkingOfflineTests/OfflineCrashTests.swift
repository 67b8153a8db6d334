import Foundation
import Networking
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The honest crash test: a child process (`OfflineStressWorker`) queues numbered writes and
/// flushes them while the test kills it with `kill -9` at random moments, 200 times; a last child
/// drains what is left. Every write a child reported as queued reaches the server (0 lost), and
/// no write reaches it twice (0 duplicates) — the journal's fsync and the Idempotency-Key at work.
@Suite("Offline queue under kill -9", .timeLimit(.minutes(3)))
struct OfflineCrashTests {
    /// `OfflineStressWorker`, built beside this test binary.
    static func worker() throws -> URL {
        let executable = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        var folder = executable.deletingLastPathComponent()
        while folder.pathExtension == "xctest" || folder.lastPathComponent == "Contents" || folder.lastPathComponent == "MacOS" {
            folder.deleteLastPathComponent()
        }
        let worker = folder.appendingPathComponent("OfflineStressWorker")
        guard FileManager.default.isExecutableFile(atPath: worker.path) else {
            throw OfflineTestServers.Unavailable(
                description: "\(worker.path) is missing: build everything first (swift build --build-tests)")
        }
        return worker
    }

    /// Starts the worker; its standard output is collected.
    static func start(_ worker: URL, _ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = worker
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, output)
    }

    /// Waits for `process` on a plain thread, so the cooperative pool's few threads stay free for
    /// the tests running alongside.
    static func waitForExit(of process: Process) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                process.waitUntilExit()
                continuation.resume()
            }.start()
        }
    }

    /// The complete lines of what a finished process wrote.
    static func lines(of pipe: Pipe) -> [String] {
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        var lines = text.components(separatedBy: "\n")
        lines.removeLast()  // the part after the last newline, if any, is a torn line
        return lines
    }

    @Test("200 kills at random moments while queueing and flushing: 0 lost, 0 delivered twice")
    func killNine() async throws {
        let api = try OfflineTestServers.apiURL()
        let worker = try Self.worker()
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stream = "crash-\(UUID().uuidString)"
        let common = ["--folder", folder.path, "--api", api.absoluteString, "--stream", stream]
        var acknowledged = Set<String>()
        var kills = 0
        var run = 0
        // Until 200 workers were killed while running (at most 400 starts).
        while kills < 200, run < 400 {
            run += 1
            let (process, output) = try Self.start(worker, common + ["--run", "\(run)", "--count", "30"])
            // Somewhere between start-up, login, queueing (each write fsynced) and flushing.
            try await Task.sleep(for: .milliseconds(Int.random(in: 15...90)))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                kills += 1
            }
            await Self.waitForExit(of: process)
            for line in Self.lines(of: output) where line.hasPrefix("queued ") { acknowledged.insert(String(line.dropFirst(7))) }
        }
        let (drainer, drained) = try Self.start(worker, common + ["--run", "drain", "--drain"])
        await Self.waitForExit(of: drainer)
        let last = Self.lines(of: drained).last ?? ""
        #expect(drainer.terminationStatus == 0, "the last worker could not drain the queue: \(last)")
        // What the server received.
        let repository = APIRepository(configuration: try OfflineTestServers.configuration(api))
        let journal = try await repository.journal(stream)
        let delivered = journal.entries.compactMap { entry -> String? in
            guard case .string(let run)? = entry.body["run"], case .int(let number)? = entry.body["n"] else { return nil }
            return "\(run)-\(number)"
        }
        let lost = acknowledged.subtracting(delivered)
        let duplicates = delivered.count - Set(delivered).count
        #expect(kills >= 200, "only \(kills) of \(run) workers were still running when killed")
        #expect(acknowledged.count > 100, "too few writes were queued to mean anything: \(acknowledged.count)")
        #expect(lost.isEmpty, "lost: \(lost.sorted().prefix(10))")
        #expect(duplicates == 0, "delivered twice: \(duplicates)")
        print(
            "offline crash test: \(kills) kills, \(acknowledged.count) writes queued, \(delivered.count) delivered, \(journal.deliveries) POSTs received (replays included), \(lost.count) lost, \(duplicates) duplicates"
        )
    }
}

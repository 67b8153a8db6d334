import Foundation
import Networking
import NetworkingCache
import NetworkingTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Several processes sharing one cache folder never corrupt it: two child processes (this test
/// binary again, running only ``worker()``) write and read the same keys concurrently through
/// `ResponseCache`, with limits small enough that each evicts files the other is reading; every
/// read must be a miss or a valid, complete answer. Then a writer is killed (`SIGKILL`) at a
/// random moment, and what it left must read back as misses or valid answers too.
@Suite(.serialized) struct SharedFolderTests {
    static let folderVariable = "NETWORKING_CACHE_WORKER_FOLDER"

    @Test func twoProcessesWritingAndReadingTheSameKeysNeverSeeDamage() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let children = try (1...2).map { id in try Self.spawn(folder: folder.url, id: id, mode: "stress", iterations: 300) }
        var totals = (hits: 0, misses: 0, writes: 0)
        for child in children {
            let output = try await child.finish()
            #expect(child.process.terminationStatus == 0, "worker failed:\n\(output.suffix(2_000))")
            let result = try #require(Self.result(in: output), "no result line in:\n\(output.suffix(2_000))")
            totals = (totals.hits + result.hits, totals.misses + result.misses, totals.writes + result.writes)
        }
        // Both kinds of read happened, so the processes really did share entries.
        #expect(totals.writes >= 300)
        #expect(totals.hits > 0)
        #expect(totals.misses > 0)
        #expect(folder.files().allSatisfy { !$0.hasPrefix(".tmp-") })
    }

    @Test func aWriterKilledMidWayLeavesNothingThatReadsAsDamage() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let child = try Self.spawn(folder: folder.url, id: 1, mode: "write", iterations: 1_000_000)
        // Let it get going, then kill it without warning at some point of its work.
        for _ in 0..<12_000 where folder.files().count < 4 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(Int.random(in: 20...200)))
        kill(child.process.processIdentifier, SIGKILL)
        _ = try await child.finish()
        #expect(child.process.terminationReason == .uncaughtSignal)

        // A new process's cache reads every key: a miss or a valid answer, never damage.
        let worker = try Worker(folder: folder.url, id: 3)
        var hits = 0
        for key in Worker.keys {
            switch try await worker.read(key) {
            case .hit: hits += 1
            case .miss: break
            }
        }
        #expect(hits > 0)
    }

    /// The child's side: does its work only when started by the tests above.
    @Test func worker() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment[Self.folderVariable] else { return }
        let id = Int(environment["NETWORKING_CACHE_WORKER_ID"] ?? "") ?? 0
        let iterations = Int(environment["NETWORKING_CACHE_WORKER_ITERATIONS"] ?? "") ?? 100
        let worker = try Worker(folder: URL(fileURLWithPath: path), id: id)
        var (hits, misses, writes) = (0, 0, 0)
        for iteration in 0..<iterations {
            let key = Worker.keys[Int.random(in: 0..<Worker.keys.count)]
            if environment["NETWORKING_CACHE_WORKER_MODE"] == "write" || iteration % 2 == 0 {
                try await worker.write(key, iteration: iteration)
                writes += 1
            } else {
                switch try await worker.read(key) {
                case .hit: hits += 1
                case .miss: misses += 1
                }
            }
        }
        print("WORKER-RESULT hits=\(hits) misses=\(misses) writes=\(writes)")
    }

    // MARK: - Processes

    struct Child {
        let process: Process
        let output: URL
        let ended: Shared<Bool>

        /// Waits for the process to end — without holding a thread of the shared pool, which
        /// other tests need — and returns what it printed.
        func finish() async throws -> String {
            while !ended.current { try await Task.sleep(for: .milliseconds(10)) }
            defer { try? FileManager.default.removeItem(at: output) }
            return (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        }
    }

    /// This test binary again, running only ``worker()`` — at the lowest priority (`nice -n 19`), so
    /// that the children never slow down the other tests running meanwhile.
    static func spawn(folder: URL, id: Int, mode: String, iterations: Int) throws -> Child {
        let executable = try #require(try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("cache-worker-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["nice", "-n", "19", executable, "--testing-library", "swift-testing", "--filter", "SharedFolderTests/worker"]
        var environment = ProcessInfo.processInfo.environment
        environment[folderVariable] = folder.path
        environment["NETWORKING_CACHE_WORKER_ID"] = String(id)
        environment["NETWORKING_CACHE_WORKER_MODE"] = mode
        environment["NETWORKING_CACHE_WORKER_ITERATIONS"] = String(iterations)
        process.environment = environment
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        let ended = Shared(false)
        process.terminationHandler = { _ in ended.set(true) }
        try process.run()
        return Child(process: process, output: output, ended: ended)
    }

    static func result(in output: String) -> (hits: Int, misses: Int, writes: Int)? {
        guard let line = output.split(separator: "\n").first(where: { $0.contains("WORKER-RESULT") }) else { return nil }
        var values: [String: Int] = [:]
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=")
            if parts.count == 2 { values[String(parts[0])] = Int(parts[1]) }
        }
        guard let hits = values["hits"], let misses = values["misses"], let writes = values["writes"] else { return nil }
        return (hits, misses, writes)
    }
}

/// One process's use of the shared folder: a disk-only `ResponseCache` whose "server" answers
/// with self-checking bodies (the key, the writer, a padding of random length, and the padding's
/// digest), written with reload calls and read with cache-only calls.
struct Worker {
    enum Read { case hit, miss }

    struct Failure: Error, CustomStringConvertible { let description: String }

    static let keys = (0..<16).map { "key\($0)" }

    let repository: CacheRepository

    init(folder: URL, id: Int) throws {
        // Small limits: each process evicts files the other may be reading.
        let cache = try ResponseCache(
            configuration: .init(memoryEntryLimit: 0, diskFolder: folder, diskEntryLimit: 8, synchronizesDiskWrites: false))
        let transport = StubTransport(
            routes: Self.keys.map { key in
                StubTransport.Route(.get, "entries/\(key)") { request throws(TransportError) in
                    let padding = String(repeating: "abcdefghij", count: Int.random(in: 1...2_000))
                    let body = #"{"key":"\#(key)","writer":\#(id),"padding":"\#(padding)","check":\#(Self.check(padding))}"#
                    return TransportResponse(
                        statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8), url: request.url)
                }
            })
        repository = CacheRepository(
            configuration: try NetworkingConfiguration(domainURL: "shared.example.com"), transport: transport,
            interceptors: [cache])
    }

    func write(_ key: String, iteration: Int) async throws {
        let response = try await repository.fetch(endpoint(key).cachePolicy(CachePolicy(mode: .reload, timeToLive: 3_600))).get()
        guard response.source == .network else { throw Failure(description: "a reload came from \(response.source)") }
    }

    func read(_ key: String) async throws -> Read {
        switch await repository.fetch(endpoint(key).cachePolicy(CachePolicy(mode: .cacheOnly, timeToLive: 3_600))) {
        case .failure(let error) where error.isCacheMiss:
            return .miss
        case .failure(let error):
            throw Failure(description: "reading \(key) failed: \(error)")
        case .success(let response):
            guard response.source == .cache, response.value[string: "key"] == key,
                let padding = response.value[string: "padding"], response.value[int: "check"] == Self.check(padding)
            else {
                throw Failure(description: "reading \(key) gave a damaged or foreign answer: \(response.source)")
            }
            return .hit
        }
    }

    private func endpoint(_ key: String) -> Endpoint<RepositoryResponse<JSONValue>> {
        Endpoint<RepositoryResponse<JSONValue>>.get("entries/\(key)").withoutSession()
    }

    /// A checksum of the padding that a torn or mixed body would not match.
    static func check(_ text: String) -> Int {
        text.utf8.reduce(5381) { ($0 &* 33 &+ Int($1)) & 0x7fff_ffff }
    }
}

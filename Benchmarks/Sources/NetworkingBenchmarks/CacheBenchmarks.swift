import Foundation
import Networking
import NetworkingCache

/// The response cache: typed repository GETs of the 148-byte `book.json` answered by a warm
/// memory tier and by a warm disk tier of 10,000 entries (memory tier off, a new cache over the
/// folder, so every hit reads and checks a file), beside the same GET as a network round trip to
/// nginx — hits per second, CPU, resident memory, and the ratios.
enum CacheBenchmarks {
    /// The measured runs, and what filling the disk tier cost.
    struct Outcome: Sendable {
        var results: [BenchmarkResult] = []
        var diskEntries = 0
        var diskBytes = 0
        var fillSeconds = 0.0
        var fillRSSGrowthKB = 0
    }

    static func run(baseURL: String, workFolder: URL, requests: Int, entries: Int) async throws -> Outcome {
        guard let url = URL(string: baseURL), let host = url.host else { throw UsageError(description: "bad base URL") }
        let transport: any Transport = {
            #if os(Linux)
                LibcurlTransport()
            #else
                URLSessionTransport()
            #endif
        }()
        func repository(_ cache: ResponseCache?) throws -> CachedBooksRepository {
            var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: host, port: url.port, timeout: 30)
            if let cache { configuration.interceptors.append(cache) }
            return CachedBooksRepository(configuration: configuration, transport: transport)
        }
        var outcome = Outcome()

        // The network round trip, as the libcurl case measures it.
        let network = try repository(nil)
        for _ in 0..<2_000 { _ = await network.book() }
        for concurrency in [1, 8] {
            let name = "cache-network-small-\(concurrency == 1 ? "sequential" : "concurrent")"
            if let result = await measure(name, requests: requests, concurrency: concurrency, operation: { await network.book().isHit }) {
                outcome.results.append(result)
            }
        }

        // Memory: one warm entry with a time to live.
        let memory = try repository(try ResponseCache())
        _ = await memory.book(ttl: 3_600)
        for _ in 0..<2_000 { _ = await memory.book(ttl: 3_600) }
        for concurrency in [1, 8] {
            let name = "cache-memory-hit-small-\(concurrency == 1 ? "sequential" : "concurrent")"
            let result = await measure(name, requests: requests, concurrency: concurrency) {
                await memory.book(ttl: 3_600).isHit(from: .cache)
            }
            if let result { outcome.results.append(result) }
        }

        // Disk: `entries` answers (book.json?entry=N), written through the cache from the network.
        let folder = workFolder.appendingPathComponent("response-cache-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fillStart = ResidentMemory.current().rss
        let clock = ContinuousClock()
        let began = clock.now
        do {
            // The fill does not wait for fsync: the hits measured below do not depend on it.
            let writer = try repository(
                try ResponseCache(configuration: .init(memoryEntryLimit: 0, diskFolder: folder, synchronizesDiskWrites: false)))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for entry in stride(from: worker, to: entries, by: 8) {
                            guard await writer.book(entry: entry, ttl: 3_600).isHit(from: .network) else {
                                throw UsageError(description: "filling the disk cache failed at entry \(entry)")
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        outcome.fillSeconds = (clock.now - began).seconds
        outcome.fillRSSGrowthKB = ResidentMemory.current().rss - fillStart
        let files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: [.fileSizeKey])) ?? []
        outcome.diskEntries = files.count
        outcome.diskBytes = files.reduce(0) { $0 + ((try? $1.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) }

        // A new cache over the folder (a new launch), memory tier off: every hit reads a file.
        let disk = try repository(try ResponseCache(configuration: .init(memoryEntryLimit: 0, diskFolder: folder)))
        for _ in 0..<500 { _ = await disk.book(entry: Int.random(in: 0..<entries), ttl: 3_600) }
        for concurrency in [1, 8] {
            let name = "cache-disk-hit-small-\(concurrency == 1 ? "sequential" : "concurrent")"
            let result = await measure(name, requests: requests, concurrency: concurrency) {
                await disk.book(entry: Int.random(in: 0..<entries), ttl: 3_600).isHit(from: .cache)
            }
            if let result { outcome.results.append(result) }
        }
        return outcome
    }

    static func report(_ outcome: Outcome, json: Bool) {
        func rate(_ name: String) -> Double? { outcome.results.first { $0.name == name }?.requestsPerSecond }
        func ratio(_ first: String, _ second: String) -> Double? {
            guard let a = rate(first), let b = rate(second), b > 0 else { return nil }
            return (a / b * 100).rounded() / 100
        }
        let ratios: [(String, Double?)] = [
            ("cache_memory_hit_vs_network_small_sequential", ratio("cache-memory-hit-small-sequential", "cache-network-small-sequential")),
            ("cache_memory_hit_vs_network_small_concurrent", ratio("cache-memory-hit-small-concurrent", "cache-network-small-concurrent")),
            ("cache_disk_hit_vs_network_small_sequential", ratio("cache-disk-hit-small-sequential", "cache-network-small-sequential")),
            ("cache_disk_hit_vs_network_small_concurrent", ratio("cache-disk-hit-small-concurrent", "cache-network-small-concurrent")),
            (
                "cache_memory_hit_vs_disk_hit_small_sequential",
                ratio("cache-memory-hit-small-sequential", "cache-disk-hit-small-sequential")
            ),
        ]
        if json {
            for result in outcome.results { print(result.json) }
            var fields = ratios.compactMap { name, value in value.map { "\"\(name)\":\($0)" } }
            fields.append("\"cache_disk_entries\":\(outcome.diskEntries)")
            fields.append("\"cache_disk_bytes\":\(outcome.diskBytes)")
            fields.append("\"cache_disk_fill_seconds\":\((outcome.fillSeconds * 100).rounded() / 100)")
            fields.append("\"cache_disk_fill_rss_growth_kb\":\(outcome.fillRSSGrowthKB)")
            print("{" + fields.joined(separator: ",") + "}")
            return
        }
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
        }
        func lpad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
        }
        print("")
        print(
            pad("case", 34) + lpad("requests", 9) + lpad("in flight", 10) + lpad("seconds", 9) + lpad("req/s", 10)
                + lpad("CPU ms/1000", 13) + lpad("RSS start", 11) + lpad("RSS end", 10))
        for result in outcome.results {
            print(
                pad(result.name, 34) + lpad("\(result.requests)", 9) + lpad("\(result.concurrency)", 10)
                    + lpad(String(format: "%.2f", result.seconds), 9) + lpad(String(format: "%.0f", result.requestsPerSecond), 10)
                    + lpad(String(format: "%.0f", result.cpuMillisecondsPerThousand), 13) + lpad("\(result.rssStartKB) kB", 11)
                    + lpad("\(result.rssEndKB) kB", 10))
        }
        print("")
        for (name, value) in ratios { print(pad(name, 48) + (value.map { String(format: "%.2f×", $0) } ?? "n/a")) }
        print(
            pad("disk tier", 48)
                + "\(outcome.diskEntries) files, \(outcome.diskBytes / 1024) kB, filled in \(String(format: "%.1f", outcome.fillSeconds)) s "
                + "from the network (RSS +\(outcome.fillRSSGrowthKB) kB)")
    }
}

/// The benchmark's repository, with the cache's endpoint options. `@unchecked Sendable` as every
/// repository: it adds no stored state to `AbstractRepository`, whose state is immutable.
final class CachedBooksRepository: AbstractRepository, @unchecked Sendable {
    /// The 148-byte object, from the network (no cache in the chain).
    func book() async -> Result<RepositoryResponse<Book>, RepositoryError> {
        await performRequest(.get("book.json"))
    }

    /// The 148-byte object, fresh for `ttl` seconds; `entry` makes a key of its own (nginx ignores the query).
    func book(entry: Int? = nil, ttl: TimeInterval) async -> Result<RepositoryResponse<Book>, RepositoryError> {
        await performRequest(Endpoint.get("book.json", parameters: entry.map { ["entry": $0] }).cached(for: ttl))
    }
}

extension Result where Success == RepositoryResponse<Book> {
    /// Whether the call succeeded.
    var isHit: Bool { (try? get()) != nil }

    /// Whether the call succeeded with an answer from `source`.
    func isHit(from source: ResponseSource) -> Bool { (try? get())?.source == source }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

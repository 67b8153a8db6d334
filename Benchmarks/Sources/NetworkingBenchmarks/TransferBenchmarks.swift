import Foundation
import Networking
import Synchronization

/// 1 GiB (by default) downloads and uploads — a raw file and a multipart form — through each
/// transport and through the `curl` command-line tool, against the same nginx: throughput and the
/// growth of resident memory during each transfer (sampled every few milliseconds).
enum TransferBenchmarks {
    /// One measured transfer.
    struct Result: Sendable {
        let name: String
        let bytes: Int64
        let seconds: Double
        let cpuSeconds: Double
        let rssGrowthKB: Int

        var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / seconds / 1_048_576 : 0 }

        var json: String {
            let rate = (megabytesPerSecond * 10).rounded() / 10
            return
                #"{"case":"\#(name)","bytes":\#(bytes),"seconds":\#((seconds * 1000).rounded() / 1000),"mb_per_second":\#(rate),"cpu_seconds":\#((cpuSeconds * 100).rounded() / 100),"rss_growth_kb":\#(rssGrowthKB)}"#
        }
    }

    static func run(baseURL: String, file: URL, workFolder: URL) async throws -> [Result] {
        guard let url = URL(string: baseURL), let host = url.host else { throw UsageError(description: "bad base URL") }
        let size = ((try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber)?.int64Value ?? 0
        var results: [Result] = []
        let transports: [(String, any Transport)] = {
            var list: [(String, any Transport)] = []
            #if os(Linux)
                list.append(("libcurl", LibcurlTransport()))
            #endif
            list.append(("urlsession", URLSessionTransport()))
            return list
        }()
        let configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: host, port: url.port, timeout: 3600)
        let name = file.lastPathComponent
        // Downloads: two rounds, the second in the opposite order, keeping each one's faster run:
        // how fast a 1 GiB file lands in the page cache depends on what the disk and the cache
        // were doing just before, which would otherwise favour whoever comes later.
        let downloaders: [(String, () async throws -> Void)] =
            transports.map { label, transport in
                let repository = BooksRepository(configuration: configuration, transport: transport)
                let destination = workFolder.appendingPathComponent("download-\(label).bin")
                return (
                    label,
                    {
                        _ = try await repository.performRequest(
                            Endpoint<DownloadedFile>.get(name).downloading(to: destination).withoutSession()
                        ).get()
                        try? FileManager.default.removeItem(at: destination)
                    }
                )
            } + [
                (
                    "curl",
                    {
                        // Flushed to disk like the library's downloads (which fsync before the
                        // atomic move), so that both leave a durable file.
                        let target = workFolder.appendingPathComponent("download-curl.bin")
                        try curl(["-o", target.path, "\(baseURL)/\(name)"])
                        try flush(target)
                        try? FileManager.default.removeItem(at: target)
                    }
                )
            ]
        var fastest: [String: Result] = [:]
        for round in 0..<2 {
            for (label, download) in round == 0 ? downloaders : downloaders.reversed() {
                let result = try await measure("\(label)-download", bytes: size, download)
                if fastest[label].map({ $0.seconds > result.seconds }) ?? true { fastest[label] = result }
            }
        }
        results += downloaders.compactMap { fastest[$0.0] }
        for (label, transport) in transports {
            let repository = BooksRepository(configuration: configuration, transport: transport)
            results.append(
                try await measure("\(label)-upload-raw", bytes: size) {
                    try await repository.performRequest(Endpoint<Void>.upload(.post, "sink", body: .file(file)).withoutSession()).get()
                })
            var form = MultipartFormData()
            try form.append(fileAt: file, name: "file")
            let formSize = form.contentLength
            results.append(
                try await measure("\(label)-upload-multipart", bytes: formSize) {
                    try await repository.performRequest(Endpoint<Void>.upload(.post, "sink", form: form).withoutSession()).get()
                })
        }
        results.append(try await measure("curl-upload-raw", bytes: size) { try curl(["-T", file.path, "-X", "POST", "\(baseURL)/sink"]) })
        results.append(
            try await measure("curl-upload-multipart", bytes: size) { try curl(["-F", "file=@\(file.path)", "\(baseURL)/sink"]) })
        return results
    }

    /// Times one transfer and samples this process's resident memory while it runs.
    private static func measure(_ name: String, bytes: Int64, _ transfer: () async throws -> Void) async throws -> Result {
        // The previous case's file written back first, so that no case pays for another's.
        sync()
        let sampler = MemorySampler()
        let start = ResidentMemory.current().rss
        let cpu = CPUTime.current()
        let clock = ContinuousClock()
        let began = clock.now
        sampler.start()
        try await transfer()
        let elapsed = clock.now - began
        let peak = sampler.stop()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Result(
            name: name, bytes: bytes, seconds: seconds, cpuSeconds: CPUTime.current() - cpu, rssGrowthKB: max(0, peak - start))
    }

    /// Flushes a file to disk (`fsync`).
    private static func flush(_ file: URL) throws {
        let descriptor = open(file.path, O_RDONLY)
        defer { if descriptor >= 0 { close(descriptor) } }
        guard descriptor >= 0, fsync(descriptor) == 0 else { throw UsageError(description: "could not flush \(file.path)") }
    }

    /// Runs `curl -sS -f -o /dev/null` (unless told where to write) and waits for it.
    private static func curl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let output = arguments.contains("-o") ? [] : ["-o", "/dev/null"]
        process.arguments = ["curl", "-sS", "-f", "--max-time", "600"] + output + arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw UsageError(description: "curl \(arguments) failed: \(process.terminationStatus)")
        }
    }

    static func report(_ results: [Result], json: Bool) {
        func rate(_ name: String) -> Double? { results.first { $0.name == name }?.megabytesPerSecond }
        var ratios: [(String, Double?)] = []
        for label in ["libcurl", "urlsession"] {
            for kind in ["download", "upload-raw", "upload-multipart"] {
                let value = rate("\(label)-\(kind)").flatMap { own in rate("curl-\(kind)").map { own / $0 } }
                ratios.append(
                    ("\(label)_vs_curl_\(kind.replacingOccurrences(of: "-", with: "_"))", value.map { ($0 * 100).rounded() / 100 }))
            }
        }
        if json {
            for result in results { print(result.json) }
            print("{" + ratios.compactMap { name, value in value.map { "\"\(name)\":\($0)" } }.joined(separator: ",") + "}")
            return
        }
        print("")
        print("transfer".padding(toLength: 30, withPad: " ", startingAt: 0) + "   MiB    seconds   MiB/s   CPU s   RSS growth")
        for result in results {
            print(
                result.name.padding(toLength: 30, withPad: " ", startingAt: 0)
                    + String(
                        format: "%6d %10.2f %7.0f %7.2f %9d kB", result.bytes / 1_048_576, result.seconds, result.megabytesPerSecond,
                        result.cpuSeconds, result.rssGrowthKB))
        }
        print("")
        for (name, value) in ratios {
            print(name.padding(toLength: 48, withPad: " ", startingAt: 0) + (value.map { String(format: "%.2f×", $0) } ?? "n/a"))
        }
    }
}

/// Samples resident memory every 5 ms on a thread of its own, keeping the highest value.
final class MemorySampler: Sendable {
    private let state = Mutex<(running: Bool, peak: Int)>((false, 0))

    func start() {
        state.withLock { $0 = (true, ResidentMemory.current().rss) }
        Thread.detachNewThread { [self] in
            while state.withLock({ $0.running }) {
                let rss = ResidentMemory.current().rss
                state.withLock { $0.peak = max($0.peak, rss) }
                usleep(5000)
            }
        }
    }

    /// Stops sampling; the highest resident memory seen, in kB.
    func stop() -> Int {
        let rss = ResidentMemory.current().rss
        return state.withLock { state in
            state.running = false
            return max(state.peak, rss)
        }
    }
}

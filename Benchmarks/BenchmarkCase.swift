import Foundation

/// One measured run: how many requests, how many at once, how long, and resident memory.
struct BenchmarkResult: Sendable {
    let name: String
    let requests: Int
    let concurrency: Int
    let seconds: Double
    let rssStartKB: Int
    let rssEndKB: Int
    let rssPeakKB: Int

    var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }

    /// One JSON object with exactly the documented keys.
    var json: String {
        let rate = (requestsPerSecond * 10).rounded() / 10
        let time = (seconds * 10_000).rounded() / 10_000
        return #"{"case":"\#(name)","requests":\#(requests),"concurrency":\#(concurrency),"seconds":\#(time),"requests_per_second":\#(rate),"rss_start_kb":\#(rssStartKB),"rss_end_kb":\#(rssEndKB)}"#
    }
}

/// Resident memory of this process, from `/proc/self/status` (Linux; zero elsewhere).
enum ResidentMemory {
    /// `VmRSS` (current) and `VmHWM` (peak) in kB.
    static func current() -> (rss: Int, peak: Int) {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        func value(_ key: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return 0 }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return (value("VmRSS"), value("VmHWM"))
    }
}

/// Runs `operation` `requests` times, `concurrency` at a time, and measures it.
///
/// Each of the `concurrency` workers runs its share one after another, so exactly
/// `concurrency` requests are in flight until the end.
func measure(
    _ name: String, requests: Int, concurrency: Int, operation: @escaping @Sendable () async -> Bool
) async -> BenchmarkResult? {
    let start = ResidentMemory.current()
    let clock = ContinuousClock()
    let began = clock.now
    let failures = await withTaskGroup(of: Int.self) { group in
        for worker in 0..<concurrency {
            let share = requests / concurrency + (worker < requests % concurrency ? 1 : 0)
            group.addTask {
                var failed = 0
                for _ in 0..<share {
                    if await !operation() { failed += 1 }
                }
                return failed
            }
        }
        return await group.reduce(0, +)
    }
    let elapsed = clock.now - began
    let end = ResidentMemory.current()
    guard failures == 0 else {
        FileHandle.standardError.write(Data("\(name): \(failures) of \(requests) requests failed\n".utf8))
        return nil
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return BenchmarkResult(
        name: name, requests: requests, concurrency: concurrency, seconds: seconds, rssStartKB: start.rss,
        rssEndKB: end.rss, rssPeakKB: end.peak)
}

/// Measures a synchronous run that performs `requests` requests and returns how many failed.
func measureSynchronously(_ name: String, requests: Int, concurrency: Int, run: () -> Int) -> BenchmarkResult? {
    let start = ResidentMemory.current()
    let clock = ContinuousClock()
    let began = clock.now
    let failures = run()
    let elapsed = clock.now - began
    let end = ResidentMemory.current()
    guard failures == 0 else {
        FileHandle.standardError.write(Data("\(name): \(failures) of \(requests) requests failed\n".utf8))
        return nil
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return BenchmarkResult(
        name: name, requests: requests, concurrency: concurrency, seconds: seconds, rssStartKB: start.rss,
        rssEndKB: end.rss, rssPeakKB: end.peak)
}

import Foundation
import Synchronization

/// The cases that failed, or ran no request: the run then ends with exit status 3.
let failedCases = Mutex<[String]>([])

/// Runs `operation` `requests` times, `concurrency` at a time, and measures it.
///
/// Each of the `concurrency` workers runs its share one after another, so exactly
/// `concurrency` requests are in flight until the end.
func measure(
    _ name: String, requests: Int, concurrency: Int, executor: (any TaskExecutor)? = nil,
    operation: @escaping @Sendable () async -> Bool
) async -> BenchmarkResult? {
    let start = ResidentMemory.current()
    let cpu = CPUTime.current()
    let clock = ContinuousClock()
    let began = clock.now
    let failures = await withTaskGroup(of: Int.self) { group in
        for worker in 0..<concurrency {
            let share = requests / concurrency + (worker < requests % concurrency ? 1 : 0)
            group.addTask(executorPreference: executor) {
                var failed = 0
                for _ in 0..<share {
                    if await !operation() { failed += 1 }
                }
                return failed
            }
        }
        return await group.reduce(0, +)
    }
    return result(
        name, requests: requests, concurrency: concurrency, failures: failures, elapsed: clock.now - began, start: start,
        cpu: CPUTime.current() - cpu)
}

/// Measures a synchronous run that performs `requests` requests and returns how many failed.
func measureSynchronously(_ name: String, requests: Int, concurrency: Int, run: () -> Int) -> BenchmarkResult? {
    let start = ResidentMemory.current()
    let cpu = CPUTime.current()
    let clock = ContinuousClock()
    let began = clock.now
    let failures = run()
    return result(
        name, requests: requests, concurrency: concurrency, failures: failures, elapsed: clock.now - began, start: start,
        cpu: CPUTime.current() - cpu)
}

/// The result of a run that began with `start`'s memory figures, or `nil` (reported) when a request failed.
private func result(
    _ name: String, requests: Int, concurrency: Int, failures: Int, elapsed: Duration, start: (rss: Int, peak: Int),
    cpu: Double
) -> BenchmarkResult? {
    let end = ResidentMemory.current()
    guard failures == 0, requests > 0 else {
        FileHandle.standardError.write(Data("\(name): \(failures) of \(requests) requests failed\n".utf8))
        failedCases.withLock { $0.append(name) }
        return nil
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return BenchmarkResult(
        name: name, requests: requests, concurrency: concurrency, seconds: seconds, cpuSeconds: cpu, rssStartKB: start.rss,
        rssEndKB: end.rss, rssPeakKB: end.peak)
}

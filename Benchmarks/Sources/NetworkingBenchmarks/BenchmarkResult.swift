import Foundation

/// One measured run: how many requests, how many at once, how long, how much CPU, and resident memory.
struct BenchmarkResult: Sendable {
    let name: String
    let requests: Int
    let concurrency: Int
    let seconds: Double
    /// CPU time (user + system) of the whole process during the run.
    let cpuSeconds: Double
    let rssStartKB: Int
    let rssEndKB: Int
    let rssPeakKB: Int

    var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }

    /// CPU milliseconds per 1,000 requests: what each request costs the machine, whatever the rate.
    var cpuMillisecondsPerThousand: Double { requests > 0 ? cpuSeconds * 1000 / Double(requests) * 1000 : 0 }

    /// One JSON object with exactly the documented keys.
    var json: String {
        let rate = (requestsPerSecond * 10).rounded() / 10
        let time = (seconds * 10_000).rounded() / 10_000
        return
            #"{"case":"\#(name)","requests":\#(requests),"concurrency":\#(concurrency),"seconds":\#(time),"requests_per_second":\#(rate),"cpu_ms_per_1000":\#((cpuMillisecondsPerThousand * 10).rounded() / 10),"rss_start_kb":\#(rssStartKB),"rss_end_kb":\#(rssEndKB)}"#
    }
}

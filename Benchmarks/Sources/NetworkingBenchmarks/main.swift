import Foundation
import Networking

/// script/bench's measuring program. Usage:
///   NetworkingBenchmarks --base-url http://127.0.0.1:PORT [--requests N] [--memory-requests N]
///                        [--cases libcurl,memory,urlsession,raw,asynchttpclient,decode,pipeline,transfers,cache]
///                        [--cache-entries N] [--only CASE] [--transfer-file PATH] [--work-folder PATH] [--json]
/// The server must serve /book.json (148 bytes) and /books.json (~15 KB).
struct Options {
    var baseURL = ""
    var requests = 20_000
    var memoryRequests = 100_000
    var json = false
    var cases: Set<String> = [
        "libcurl", "memory", "urlsession", "raw", "asynchttpclient", "decode", "pipeline", "transfers", "cache",
    ]
    var cacheEntries = 10_000
    /// Only the case of this name (for profiling one case), e.g. libcurl-small-concurrent: a
    /// repository, raw libcurl or pipeline case; the decode cases run unless left out of --cases.
    var only: String?
    var transferFile = ""
    var workFolder = NSTemporaryDirectory()

    init(_ arguments: [String]) throws {
        var iterator = arguments.dropFirst().makeIterator()
        let known = cases
        /// The flag's value: present, and not another flag.
        func value(of flag: String) throws -> String {
            guard let value = iterator.next(), !value.hasPrefix("--") else { throw UsageError(description: "\(flag) needs a value") }
            return value
        }
        /// The flag's value as a whole number above zero (a share of the requests per worker).
        func count(of flag: String) throws -> Int {
            let text = try value(of: flag)
            guard let number = Int(text), number > 0 else {
                throw UsageError(description: "\(flag) must be a whole number above zero, not \(text)")
            }
            return number
        }
        while let argument = iterator.next() {
            switch argument {
            case "--base-url": baseURL = try value(of: argument)
            case "--requests": requests = try count(of: argument)
            case "--memory-requests": memoryRequests = try count(of: argument)
            case "--json": json = true
            case "--cases":
                cases = Set(try value(of: argument).split(separator: ",").map(String.init))
                let unknown = cases.subtracting(known)
                guard unknown.isEmpty else {
                    throw UsageError(description: "unknown cases \(unknown.sorted()); known: \(known.sorted().joined(separator: ","))")
                }
            case "--transfer-file": transferFile = try value(of: argument)
            case "--work-folder": workFolder = try value(of: argument)
            case "--only": only = try value(of: argument)
            case "--cache-entries": cacheEntries = try count(of: argument)
            default: throw UsageError(description: "unknown argument \(argument)")
            }
        }
        guard URL(string: baseURL)?.port != nil else { throw UsageError(description: "--base-url http://127.0.0.1:PORT is required") }
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
}

func makeRepository(baseURL: String, transport: any Transport, usesFoundationJSONDecoder: Bool = false) throws -> BooksRepository {
    guard let url = URL(string: baseURL), let host = url.host else { throw UsageError(description: "bad base URL") }
    var configuration = try NetworkingConfiguration(useSecureConnection: false, domainURL: host, port: url.port, timeout: 30)
    configuration.usesFoundationJSONDecoder = usesFoundationJSONDecoder
    return BooksRepository(configuration: configuration, transport: transport)
}

/// The cases for one transport: small and large, sequential and 8 in flight.
func repositoryCases(_ label: String, transport: any Transport, options: Options) async throws -> [BenchmarkResult] {
    let repository = try makeRepository(baseURL: options.baseURL, transport: transport)
    // Warm up: connections, lazy initialisation, allocator, the transport's latency estimate.
    for _ in 0..<2_000 { _ = await repository.book() }
    var results: [BenchmarkResult] = []
    for (size, concurrency) in [("small", 1), ("small", 8), ("large", 1), ("large", 8)] {
        let requests = size == "large" ? max(options.requests / 4, 8) : options.requests
        let name = "\(label)-\(size)-\(concurrency == 1 ? "sequential" : "concurrent")"
        if let only = options.only, only != name { continue }
        let result = await measure(name, requests: requests, concurrency: concurrency) {
            switch size {
            case "small": return (try? await repository.book().get()) != nil
            default: return ((try? await repository.books().get())?.count ?? 0) > 0
            }
        }
        if let result { results.append(result) }
    }
    return results
}

func report(
    _ results: [BenchmarkResult], memory: BenchmarkResult?, decode: [DecodeCases.Result], pipeline: PipelineCases.Result?,
    json: Bool
) {
    func rate(_ name: String) -> Double? { results.first { $0.name == name }?.requestsPerSecond }
    func ratio(_ first: String, _ second: String) -> Double? {
        guard let a = rate(first), let b = rate(second), b > 0 else { return nil }
        return (a / b * 100).rounded() / 100
    }
    /// How many times faster the second decoder is than the first (time ÷ time).
    func speedup(_ slow: String, _ fast: String) -> Double? {
        guard let a = decode.first(where: { $0.name == slow })?.microseconds,
            let b = decode.first(where: { $0.name == fast })?.microseconds, b > 0
        else { return nil }
        return (a / b * 100).rounded() / 100
    }
    let ratios: [(String, Double?)] = [
        ("libcurl_vs_urlsession_small_sequential", ratio("libcurl-small-sequential", "urlsession-small-sequential")),
        ("libcurl_vs_urlsession_small_concurrent", ratio("libcurl-small-concurrent", "urlsession-small-concurrent")),
        ("libcurl_vs_urlsession_large_sequential", ratio("libcurl-large-sequential", "urlsession-large-sequential")),
        ("libcurl_vs_urlsession_large_concurrent", ratio("libcurl-large-concurrent", "urlsession-large-concurrent")),
        ("libcurl_vs_raw_small_sequential", ratio("libcurl-small-sequential", "raw-libcurl-small-sequential")),
        ("libcurl_vs_raw_small_concurrent", ratio("libcurl-small-concurrent", "raw-libcurl-small-concurrent")),
        ("libcurl_executor_vs_raw_small_sequential", ratio("libcurl-executor-small-sequential", "raw-libcurl-small-sequential")),
        ("libcurl_executor_vs_raw_small_concurrent", ratio("libcurl-executor-small-concurrent", "raw-libcurl-small-concurrent")),
        ("libcurl_spinning_vs_not_small_sequential", ratio("libcurl-small-sequential", "libcurl-nospin-small-sequential")),
        ("urlsession_vs_raw_urlsession_small_sequential", ratio("urlsession-small-sequential", "raw-urlsession-small-sequential")),
        ("urlsession_vs_raw_urlsession_small_concurrent", ratio("urlsession-small-concurrent", "raw-urlsession-small-concurrent")),
        ("libcurl_vs_asynchttpclient_small_sequential", ratio("libcurl-small-sequential", "asynchttpclient-small-sequential")),
        ("libcurl_vs_asynchttpclient_small_concurrent", ratio("libcurl-small-concurrent", "asynchttpclient-small-concurrent")),
        ("libcurl_vs_asynchttpclient_large_sequential", ratio("libcurl-large-sequential", "asynchttpclient-large-sequential")),
        ("libcurl_vs_asynchttpclient_large_concurrent", ratio("libcurl-large-concurrent", "asynchttpclient-large-concurrent")),
        ("typed_get_vs_foundation_decoded_large_sequential", ratio("libcurl-large-sequential", "libcurl-foundation-large-sequential")),
        ("fastjson_vs_jsondecoder_large", speedup("decode-jsondecoder-large", "decode-fastjson-large")),
        ("fastjson_vs_jsondecoder_small", speedup("decode-jsondecoder-small", "decode-fastjson-small")),
    ]
    let growth = memory.map { $0.rssEndKB - $0.rssStartKB }
    if json {
        for result in results + (memory.map { [$0] } ?? []) { print(result.json) }
        for result in decode { print(result.json) }
        if let pipeline { print(pipeline.json) }
        var fields = ratios.compactMap { name, value in value.map { "\"\(name)\":\($0)" } }
        if let memory, let growth {
            fields.append("\"memory_requests\":\(memory.requests)")
            fields.append("\"memory_growth_kb\":\(growth)")
            fields.append("\"memory_peak_kb\":\(memory.rssPeakKB)")
        }
        print("{" + fields.joined(separator: ",") + "}")
        return
    }
    func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
    func lpad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
    print(
        pad("case", 38) + lpad("requests", 9) + lpad("in flight", 10) + lpad("seconds", 9) + lpad("req/s", 10)
            + lpad("CPU ms/1000", 13) + lpad("RSS start", 11) + lpad("RSS end", 10))
    for result in results + (memory.map { [$0] } ?? []) {
        print(
            pad(result.name, 38) + lpad("\(result.requests)", 9) + lpad("\(result.concurrency)", 10)
                + lpad(String(format: "%.2f", result.seconds), 9) + lpad(String(format: "%.0f", result.requestsPerSecond), 10)
                + lpad(String(format: "%.0f", result.cpuMillisecondsPerThousand), 13) + lpad("\(result.rssStartKB) kB", 11)
                + lpad("\(result.rssEndKB) kB", 10))
    }
    for result in decode {
        print(
            pad(result.name, 38) + lpad("\(result.rounds)", 9)
                + lpad("decoding alone: " + String(format: "%.1f µs", result.microseconds), 35))
    }
    if let pipeline {
        print(
            pad(PipelineCases.Result.name, 38) + lpad("\(pipeline.calls)", 9)
                + lpad("CPU per call, no wire: " + String(format: "%.1f µs", pipeline.cpuMicroseconds), 35))
    }
    print("")
    for (name, value) in ratios { print(pad(name, 52) + (value.map { String(format: "%.2f×", $0) } ?? "n/a")) }
    if let memory, let growth {
        print(pad("memory growth over \(memory.requests) requests", 48) + "\(growth) kB (peak RSS \(memory.rssPeakKB) kB)")
    }
}

func run() async throws {
    let options = try Options(CommandLine.arguments)
    var results: [BenchmarkResult] = []
    var memory: BenchmarkResult?
    // First, while no other client's threads linger: the library alone, 5 × --requests calls
    // (100,000 by default), enough CPU time for getrusage to resolve a few microseconds per call.
    var pipeline: PipelineCases.Result?
    if options.cases.contains("pipeline"), options.only.map({ $0 == PipelineCases.Result.name }) ?? true {
        pipeline = await PipelineCases.run(baseURL: options.baseURL, calls: min(options.requests, Int.max / 5) * 5)
    }
    #if os(Linux)
        if options.cases.contains("libcurl") {
            results += try await repositoryCases("libcurl", transport: LibcurlTransport(), options: options)
        }
        if options.cases.contains("libcurl"), options.only?.hasPrefix("libcurl-executor-") ?? true {
            // The callers' tasks on the transport's loop thread (LibcurlTransport.taskExecutor).
            let transport = LibcurlTransport()
            let repository = try makeRepository(baseURL: options.baseURL, transport: transport)
            for _ in 0..<2_000 { _ = await repository.book() }
            for concurrency in [1, 8] {
                let name = "libcurl-executor-small-\(concurrency == 1 ? "sequential" : "concurrent")"
                if let only = options.only, only != name { continue }
                let result = await measure(
                    name, requests: options.requests, concurrency: concurrency, executor: transport.taskExecutor
                ) {
                    (try? await repository.book().get()) != nil
                }
                if let result { results.append(result) }
            }
        }
        if options.cases.contains("libcurl"), options.only == nil {
            // What the loop thread's spinning buys, and costs in CPU: the same case without it.
            let repository = try makeRepository(baseURL: options.baseURL, transport: LibcurlTransport(spinsWhenSequential: false))
            for _ in 0..<2_000 { _ = await repository.book() }
            let result = await measure("libcurl-nospin-small-sequential", requests: options.requests, concurrency: 1) {
                (try? await repository.book().get()) != nil
            }
            if let result { results.append(result) }
        }
        if options.cases.contains("libcurl"), options.only == nil {
            // The same typed GET of the array, decoded by Foundation's JSONDecoder instead of ours.
            let repository = try makeRepository(baseURL: options.baseURL, transport: LibcurlTransport(), usesFoundationJSONDecoder: true)
            for _ in 0..<500 { _ = await repository.books() }
            let result = await measure("libcurl-foundation-large-sequential", requests: max(options.requests / 4, 8), concurrency: 1) {
                ((try? await repository.books().get())?.count ?? 0) > 0
            }
            if let result { results.append(result) }
        }
        // Before URLSession runs; the peak is set back first, so that it is this case's.
        if options.cases.contains("memory"), options.only.map({ $0 == "libcurl-memory-small-sequential" }) ?? true {
            let repository = try makeRepository(baseURL: options.baseURL, transport: LibcurlTransport())
            for _ in 0..<2_000 { _ = await repository.book() }
            if !ResidentMemory.resetPeak() {
                FileHandle.standardError.write(Data("the peak RSS could not be reset: it is the whole process's\n".utf8))
            }
            memory = await measure("libcurl-memory-small-sequential", requests: options.memoryRequests, concurrency: 1) {
                (try? await repository.book().get()) != nil
            }
        }
    #endif
    if options.cases.contains("urlsession") {
        results += try await repositoryCases("urlsession", transport: URLSessionTransport(), options: options)
    }
    if options.cases.contains("raw"), options.only == nil, let url = URL(string: options.baseURL + "/book.json") {
        results += await RawURLSession.cases(url: url, requests: options.requests)
    }
    #if os(Linux)
        if options.cases.contains("raw") {
            let url = options.baseURL + "/book.json"
            _ = RawLibcurl.sequential(url: url, requests: 500)
            for concurrency in [1, 8] {
                let name = "raw-libcurl-small-\(concurrency == 1 ? "sequential" : "concurrent")"
                if let only = options.only, only != name { continue }
                let result = measureSynchronously(name, requests: options.requests, concurrency: concurrency) {
                    concurrency == 1
                        ? RawLibcurl.sequential(url: url, requests: options.requests)
                        : RawLibcurl.concurrent(url: url, requests: options.requests, concurrency: concurrency)
                }
                if let result { results.append(result) }
            }
        }
    #endif
    if options.cases.contains("asynchttpclient"), options.only.map({ $0.hasPrefix("asynchttpclient-") }) ?? true {
        results += try await AsyncHTTPClientCases.cases(baseURL: options.baseURL, requests: options.requests)
    }
    let decode = options.cases.contains("decode") ? await DecodeCases.run(baseURL: options.baseURL) : []
    // A name no case has (a typo) measured nothing: said, not passed over.
    if let only = options.only, !results.contains(where: { $0.name == only }), memory?.name != only,
        pipeline == nil || only != PipelineCases.Result.name
    {
        failedCases.withLock { $0.append("--only \(only): no case of this name ran") }
    }
    if !results.isEmpty || memory != nil || !decode.isEmpty || pipeline != nil {
        report(results, memory: memory, decode: decode, pipeline: pipeline, json: options.json)
    }
    if options.cases.contains("cache"), options.only == nil {
        let outcome = try await CacheBenchmarks.run(
            baseURL: options.baseURL, workFolder: URL(fileURLWithPath: options.workFolder, isDirectory: true),
            requests: options.requests, entries: options.cacheEntries)
        CacheBenchmarks.report(outcome, json: options.json)
    }
    if options.cases.contains("transfers"), options.only == nil, !options.transferFile.isEmpty {
        let transfers = try await TransferBenchmarks.run(
            baseURL: options.baseURL, file: URL(fileURLWithPath: options.transferFile),
            workFolder: URL(fileURLWithPath: options.workFolder, isDirectory: true))
        TransferBenchmarks.report(transfers, json: options.json)
    }
}

/// The program's work, run from a synchronous `main` (valgrind cannot run an async `main`).
func main() async -> Int32 {
    var status: Int32 = 0
    do {
        try await run()
    } catch let error as UsageError {
        FileHandle.standardError.write(Data("NetworkingBenchmarks: \(error)\n".utf8))
        return 2
    } catch {
        // A case that could not run (a cache fill, a transfer): the run stops there.
        FileHandle.standardError.write(Data("NetworkingBenchmarks: \(error)\n".utf8))
        status = 3
    }
    let failed = failedCases.withLock { $0 }
    if !failed.isEmpty {
        FileHandle.standardError.write(Data("NetworkingBenchmarks: failed cases: \(failed.joined(separator: ", "))\n".utf8))
        status = 3
    }
    return status
}

/// The exit status, set once by the task below before it signals.
nonisolated(unsafe) var status: Int32 = 0
let finished = DispatchSemaphore(value: 0)
Task.detached {
    status = await main()
    finished.signal()
}
finished.wait()
exit(status)

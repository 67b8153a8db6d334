import AsyncHTTPClient
import Foundation

/// AsyncHTTPClient 1.37.0 side by side: GETs of the same files decoded into the same models with
/// `JSONDecoder`, as its users write them (the shared event loop group, the default connection pool
/// of 8 connections per host).
enum AsyncHTTPClientCases {
    static func cases(baseURL: String, requests: Int) async throws -> [BenchmarkResult] {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let decoder = JSONDecoder()
        @Sendable func get(_ path: String) async -> Data? {
            let request = HTTPClientRequest(url: baseURL + "/" + path)
            guard let response = try? await client.execute(request, timeout: .seconds(30)), response.status == .ok,
                let body = try? await response.body.collect(upTo: 1 << 20)
            else { return nil }
            return Data(body.readableBytesView)
        }
        for _ in 0..<2_000 { _ = await get("book.json") }
        var results: [BenchmarkResult] = []
        for (size, concurrency) in [("small", 1), ("small", 8), ("large", 1), ("large", 8)] {
            let count = size == "large" ? max(requests / 4, 8) : requests
            let name = "asynchttpclient-\(size)-\(concurrency == 1 ? "sequential" : "concurrent")"
            let result = await measure(name, requests: count, concurrency: concurrency) {
                switch size {
                case "small":
                    guard let body = await get("book.json") else { return false }
                    return (try? decoder.decode(Book.self, from: body)) != nil
                default:
                    guard let body = await get("books.json") else { return false }
                    return ((try? decoder.decode([Book].self, from: body))?.count ?? 0) > 0
                }
            }
            if let result { results.append(result) }
        }
        try await client.shutdown()
        return results
    }
}

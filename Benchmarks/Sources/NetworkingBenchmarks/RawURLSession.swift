import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// URLSession driven directly, with no framework and no decoding: what `URLSessionTransport`'s
/// own overhead is measured against.
enum RawURLSession {
    /// The small object, `requests` times, `concurrency` at a time; `nil` when any request failed.
    static func cases(url: URL, requests: Int) async -> [BenchmarkResult] {
        // Set up as URLSessionTransport's session is, so that only the transport's own work differs.
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 16
        let session = URLSession(configuration: configuration)
        for _ in 0..<500 { _ = try? await session.data(from: url) }
        var results: [BenchmarkResult] = []
        for concurrency in [1, 8] {
            let name = "raw-urlsession-small-\(concurrency == 1 ? "sequential" : "concurrent")"
            let result = await measure(name, requests: requests, concurrency: concurrency) {
                guard let (_, response) = try? await session.data(from: url) else { return false }
                return (response as? HTTPURLResponse)?.statusCode == 200
            }
            if let result { results.append(result) }
        }
        return results
    }
}

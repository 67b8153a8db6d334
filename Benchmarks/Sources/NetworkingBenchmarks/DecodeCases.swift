import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Decoding alone, no network: the library's `FastJSONDecoder` against Foundation's `JSONDecoder`
/// on the same bytes (the files nginx serves), in microseconds per document.
enum DecodeCases {
    /// One decoder on one document.
    struct Result: Sendable {
        let name: String
        let rounds: Int
        let microseconds: Double

        var json: String {
            #"{"case":"\#(name)","rounds":\#(rounds),"microseconds":\#((microseconds * 100).rounded() / 100)}"#
        }
    }

    static func run(baseURL: String) async -> [Result] {
        guard let small = await body(baseURL + "/book.json"), let large = await body(baseURL + "/books.json") else {
            FileHandle.standardError.write(Data("decode cases: could not fetch the documents\n".utf8))
            failedCases.withLock { $0.append("decode") }
            return []
        }
        let foundation = JSONDecoder()
        let fast = FastJSONDecoder(foundation)
        var results: [Result] = []
        // Alternating, best of five, so that both decoders see the same state of the machine.
        var best: [String: Double] = [:]
        for _ in 0..<5 {
            let cases: [(String, Int, () -> Bool)] = [
                ("decode-jsondecoder-large", 300, { (try? foundation.decode([Book].self, from: large))?.count == 100 }),
                ("decode-fastjson-large", 300, { (try? fast.decode([Book].self, from: large))?.count == 100 }),
                ("decode-jsondecoder-small", 5_000, { (try? foundation.decode(Book.self, from: small)) != nil }),
                ("decode-fastjson-small", 5_000, { (try? fast.decode(Book.self, from: small)) != nil }),
            ]
            for (name, rounds, decode) in cases {
                let clock = ContinuousClock()
                let began = clock.now
                for _ in 0..<rounds where !decode() {
                    FileHandle.standardError.write(Data("\(name): decoding failed\n".utf8))
                    return []
                }
                let elapsed = (clock.now - began).components
                let microseconds = (Double(elapsed.seconds) * 1e6 + Double(elapsed.attoseconds) / 1e12) / Double(rounds)
                best[name] = min(best[name] ?? .infinity, microseconds)
            }
        }
        for name in ["decode-jsondecoder-large", "decode-fastjson-large", "decode-jsondecoder-small", "decode-fastjson-small"] {
            if let microseconds = best[name] {
                results.append(Result(name: name, rounds: name.hasSuffix("large") ? 300 : 5_000, microseconds: microseconds))
            }
        }
        return results
    }

    /// The body of a GET over `URLSessionTransport`, whatever its status (the files are nginx's
    /// own); also used by the pipeline case.
    static func body(_ address: String) async -> Data? {
        guard let url = URL(string: address) else { return nil }
        return try? await URLSessionTransport().send(TransportRequest(method: .get, url: url)).body
    }
}

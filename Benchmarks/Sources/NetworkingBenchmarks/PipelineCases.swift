import Foundation
import Networking

/// The library's own work per typed call, without a wire: a transport that answers at once with
/// the 148-byte book and nginx's headers, so that request building, the interceptor chain, the
/// status check and decoding are all that is measured. Set beside a case on the wire, it tells
/// the library's share of a request from the transport's.
enum PipelineCases {
    /// The CPU time (user + system, the whole process) per call over one pass of `calls` calls.
    struct Result: Sendable {
        static let name = "pipeline-small-canned"
        let calls: Int
        let cpuMicroseconds: Double

        var json: String {
            #"{"case":"\#(Self.name)","calls":\#(calls),"cpu_microseconds_per_call":\#((cpuMicroseconds * 100).rounded() / 100)}"#
        }
    }

    /// Answers every request with the same response, without I/O. Not `StubTransport` (from
    /// `NetworkingTestSupport`): it records every request and matches routes, which would add its
    /// own cost to what is measured.
    struct CannedTransport: Transport {
        let body: Data

        func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
            TransportResponse(statusCode: 200, headers: Self.headers, body: body, url: request.url)
        }

        /// The headers nginx sends with a static JSON file.
        static let headers: HTTPHeaders = [
            "Server": "nginx/1.22.1", "Date": "Tue, 24 Nov 2026 10:00:00 GMT", "Content-Type": "application/json",
            "Content-Length": "148", "Last-Modified": "Tue, 24 Nov 2026 09:00:00 GMT", "Connection": "keep-alive",
            "ETag": "\"6743a0c0-94\"", "Accept-Ranges": "bytes",
        ]
    }

    /// Measures `calls` typed calls of the small case after 2,000 to warm up; `nil`, reported,
    /// when the book cannot be fetched or a call fails.
    static func run(baseURL: String, calls: Int) async -> Result? {
        guard let body = await DecodeCases.body(baseURL + "/book.json") else {
            FileHandle.standardError.write(Data("pipeline case: could not fetch the book\n".utf8))
            failedCases.withLock { $0.append(Result.name) }
            return nil
        }
        guard let repository = try? makeRepository(baseURL: baseURL, transport: CannedTransport(body: body)) else {
            FileHandle.standardError.write(Data("pipeline case: could not make the repository\n".utf8))
            failedCases.withLock { $0.append(Result.name) }
            return nil
        }
        for _ in 0..<2_000 { _ = await repository.book() }
        let calls = max(1, calls)
        let cpu = CPUTime.current()
        for _ in 0..<calls where (try? await repository.book().get()) == nil {
            FileHandle.standardError.write(Data("pipeline case: a call failed\n".utf8))
            failedCases.withLock { $0.append(Result.name) }
            return nil
        }
        return Result(calls: calls, cpuMicroseconds: (CPUTime.current() - cpu) / Double(calls) * 1e6)
    }
}

import Foundation
import Testing

@testable import Networking

/// What a download's sink asks for when the retry step sends its call again: the rest of what it
/// wrote, or everything when its file was emptied.
@Suite("File download sink between attempts")
struct FileDownloadSinkTests {
    let url = URL(string: "http://example.com/files/a.bin")!

    /// Runs `body` with a sink resuming a 5-byte partial file kept with `"v1"` (in a fresh folder),
    /// and the request that asked for the rest.
    private func withResumingSink(_ body: (FileDownloadSink, TransportRequest) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let partial = folder.appendingPathComponent(".a.bin.download")
        try Data("hello".utf8).write(to: partial)
        let sink = FileDownloadSink(
            partialURL: partial, resumptionURL: folder.appendingPathComponent(".a.bin.download.json"), requestURL: url,
            start: .resume(from: 5, validator: "\"v1\"", total: 10), prefixHasher: SHA256(), progress: nil)
        try body(sink, TransportRequest(method: .get, url: url, headers: ["Range": "bytes=5-", "If-Range": "\"v1\""]))
    }

    @Test("After a 200 that emptied the file and brought no byte, the next attempt asks for the whole file, never the old range")
    func emptiedFileStartsOver() throws {
        try withResumingSink { sink, request in
            // A 200 (a cache that ignores Range), cut before its first byte
            let began = sink.begin(ResponseHead(statusCode: 200, headers: ["ETag": "W/\"weak\""]), canPause: true, resume: {})
            #expect(began)
            let next = sink.retrying(request)
            #expect(next.headers["Range"] == nil && next.headers["If-Range"] == nil)
            #expect(sink.start == .fresh)
            // A 206 from where the old partial file ended no longer fits the emptied one
            guard case .restart = DownloadStateMachine.decide(status: 206, headers: ["Content-Range": "bytes 5-9/10"], start: sink.start)
            else {
                Issue.record("a 206 after the file was emptied must start over, not append after zeros")
                return
            }
        }
    }

    @Test("After bytes came with a strong validator, the next attempt asks for the rest; after an error status, for the same")
    func resumesWhatItWrote() throws {
        try withResumingSink { sink, request in
            let began = sink.begin(
                ResponseHead(statusCode: 206, headers: ["Content-Range": "bytes 5-9/10", "ETag": "\"v1\""]), canPause: true, resume: {})
            #expect(began)
            guard case .accepted = Data("wo".utf8).withUnsafeBytes({ sink.receive($0) }) else {
                Issue.record("the sink should take the bytes")
                return
            }
            let next = sink.retrying(request)
            #expect(next.headers["Range"] == "bytes=7-" && next.headers["If-Range"] == "\"v1\"")
            #expect(sink.head == nil && sink.decision == nil)
            // A 503 then leaves the file alone: the attempt after it asks for the same rest
            let tookError = sink.begin(ResponseHead(statusCode: 503), canPause: true, resume: {})
            #expect(!tookError)
            #expect(sink.retrying(next).headers["Range"] == "bytes=7-")
        }
    }
}

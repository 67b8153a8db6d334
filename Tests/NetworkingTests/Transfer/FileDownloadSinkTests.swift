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
    private func withResumingSink(
        requestURL: URL? = nil, maximumSize: Int64? = nil, _ body: (FileDownloadSink, TransportRequest) throws -> Void
    ) throws {
        let url = requestURL ?? url
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let partial = folder.appendingPathComponent(".a.bin.download")
        try Data("hello".utf8).write(to: partial)
        let sink = FileDownloadSink(
            partialURL: partial, resumptionURL: folder.appendingPathComponent(".a.bin.download.json"), requestURL: url,
            start: .resume(from: 5, validator: "\"v1\"", total: 10), prefixHasher: SHA256(), progress: nil,
            maximumSize: maximumSize)
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

    @Test("A 206 without an ETag keeps the entity tag sent, over its own Last-Modified; the record names the URL by its digest")
    func keepsTheSentEntityTag() throws {
        let signed = URL(string: "http://example.com/files/a.bin?X-Signature=s3cr3t")!
        try withResumingSink(requestURL: signed) { sink, request in
            let head = ResponseHead(
                statusCode: 206,
                headers: [
                    "Content-Range": "bytes 5-9/10", "Last-Modified": "Mon, 02 Jan 2006 15:04:05 GMT",
                    "Date": "Tue, 03 Jan 2006 15:04:05 GMT",
                ])
            let began = sink.begin(head, canPause: true, resume: {})
            #expect(began)
            _ = Data("wo".utf8).withUnsafeBytes { sink.receive($0) }
            #expect(sink.retrying(request).headers["If-Range"] == "\"v1\"")
            // The record kept beside the file holds no signature, and still resumes this URL
            let data = try Data(contentsOf: try #require(sink.resumptionURL))
            #expect(!String(decoding: data, as: UTF8.self).contains("s3cr3t"))
            let record = try JSONDecoder().decode(DownloadStateMachine.Resumption.self, from: data)
            #expect(record.validator == "\"v1\"")
            #expect(
                DownloadStateMachine.start(partialSize: 7, resumption: record, url: signed)
                    == .resume(from: 7, validator: "\"v1\"", total: 10))
            #expect(DownloadStateMachine.start(partialSize: 7, resumption: record, url: url) == .fresh)
        }
    }

    @Test("An attempt that failed before its head does not report the failure of the attempt before it")
    func retryingForgetsTheFailure() throws {
        try withResumingSink(maximumSize: 3) { sink, request in
            let head = ResponseHead(statusCode: 206, headers: ["Content-Range": "bytes 5-9/10", "ETag": "\"v1\""])
            let began = sink.begin(head, canPause: true, resume: {})
            #expect(began)
            #expect(sink.failure != nil)
            _ = sink.retrying(request)
            #expect(sink.failure == nil && sink.serverFault == nil)
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

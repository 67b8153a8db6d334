import Foundation
import Testing

@testable import Networking

/// The download decisions without I/O: when to resume, what to send, what each answer means.
@Suite("Download state machine")
struct DownloadStateMachineTests {
    typealias Machine = DownloadStateMachine
    let url = URL(string: "http://example.com/files/a.bin")!
    let resume = DownloadStateMachine.Start.resume(from: 1000, validator: "\"v1\"")

    @Test("A partial file is resumed only when kept for this URL, with a validator, and not longer than the file")
    func start() {
        let record = Machine.Resumption(url: url.absoluteString, validator: "\"v1\"", total: 5000)
        #expect(Machine.start(partialSize: 1000, resumption: record, url: url) == resume)
        #expect(Machine.start(partialSize: nil, resumption: record, url: url) == .fresh)
        #expect(Machine.start(partialSize: 0, resumption: record, url: url) == .fresh)
        #expect(Machine.start(partialSize: 1000, resumption: nil, url: url) == .fresh)
        let other = URL(string: "http://example.com/files/a.bin?version=2")!
        #expect(Machine.start(partialSize: 1000, resumption: record, url: other) == .fresh)
        let noValidator = Machine.Resumption(url: url.absoluteString, validator: "", total: 5000)
        #expect(Machine.start(partialSize: 1000, resumption: noValidator, url: url) == .fresh)
        #expect(Machine.start(partialSize: 6000, resumption: record, url: url) == .fresh)
    }

    @Test("Resuming sends Range from the partial file's end and If-Range with the validator; a fresh start sends neither")
    func headers() {
        let headers = Machine.headers(for: resume)
        #expect(headers["Range"] == "bytes=1000-")
        #expect(headers["If-Range"] == "\"v1\"")
        #expect(Machine.headers(for: .fresh).isEmpty)
    }

    @Test("206 at the partial file's end appends; anywhere else, or unreadable, starts over")
    func partialContent() {
        #expect(
            Machine.decide(status: 206, headers: ["Content-Range": "bytes 1000-4999/5000"], start: resume)
                == .append(at: 1000, total: 5000))
        #expect(
            Machine.decide(status: 206, headers: ["Content-Range": "bytes 1000-4999/*"], start: resume)
                == .append(at: 1000, total: nil))
        guard case .restart = Machine.decide(status: 206, headers: ["Content-Range": "bytes 0-4999/5000"], start: resume) else {
            Issue.record("a 206 at the wrong offset must start over")
            return
        }
        guard case .restart = Machine.decide(status: 206, headers: [:], start: resume) else {
            Issue.record("a 206 without Content-Range must start over")
            return
        }
        guard case .restart = Machine.decide(status: 206, headers: ["Content-Range": "bytes 9-2/5000"], start: resume) else {
            Issue.record("a 206 with a backwards range must start over")
            return
        }
        #expect(Machine.decide(status: 206, headers: ["Content-Range": "bytes 0-99/100"], start: .fresh) == .writeFromStart(total: 100))
    }

    @Test("200 while resuming (range ignored, or If-Range found the file changed) writes from the start")
    func fullAnswer() {
        #expect(Machine.decide(status: 200, headers: ["Content-Length": "5000"], start: resume) == .writeFromStart(total: 5000))
        #expect(Machine.decide(status: 200, headers: [:], start: .fresh) == .writeFromStart(total: nil))
    }

    @Test("416 naming the partial file's size means complete; another 416 starts over; errors are not downloads")
    func unsatisfiable() {
        let complete = Machine.Start.resume(from: 5000, validator: "\"v1\"")
        #expect(Machine.decide(status: 416, headers: ["Content-Range": "bytes */5000"], start: complete) == .alreadyComplete(total: 5000))
        guard case .restart = Machine.decide(status: 416, headers: ["Content-Range": "bytes */9000"], start: complete) else {
            Issue.record("a 416 for another size must start over")
            return
        }
        #expect(Machine.decide(status: 416, headers: [:], start: .fresh) == .notADownload)
        #expect(Machine.decide(status: 404, headers: [:], start: resume) == .notADownload)
        #expect(Machine.decide(status: 500, headers: [:], start: .fresh) == .notADownload)
    }

    @Test("The validator kept is a strong ETag, else Last-Modified; weak ETags cannot serve If-Range")
    func validator() {
        #expect(Machine.validator(in: ["ETag": "\"abc\"", "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"]) == "\"abc\"")
        #expect(
            Machine.validator(in: ["ETag": "W/\"abc\"", "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"])
                == "Mon, 01 Jan 2024 00:00:00 GMT")
        #expect(Machine.validator(in: ["ETag": "W/\"abc\""]) == nil)
        #expect(Machine.validator(in: [:]) == nil)
    }

    @Test("Content-Range values are read strictly")
    func contentRange() {
        #expect(Machine.contentRange("bytes 0-9/10").map { [$0.first, $0.last, $0.total ?? -1] } == [0, 9, 10])
        #expect(Machine.contentRange("bytes 0-9/*")?.total == nil)
        for bad in ["", "bytes", "bytes 0-9", "bytes a-9/10", "bytes 0-9/x", "items 0-9/10", "bytes 9-0/10", "bytes -9/10"] {
            #expect(Machine.contentRange(bad) == nil, "\(bad)")
        }
        #expect(Machine.unsatisfiedTotal("bytes */77") == 77)
        #expect(Machine.unsatisfiedTotal("bytes 0-1/77") == nil)
        #expect(Machine.unsatisfiedTotal("bytes */x") == nil)
    }
}

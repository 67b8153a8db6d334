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
    func start() throws {
        let record = Machine.Resumption(url: url.absoluteString, validator: "\"v1\"", total: 5000)
        #expect(Machine.start(partialSize: 1000, resumption: record, url: url) == .resume(from: 1000, validator: "\"v1\"", total: 5000))
        #expect(Machine.start(partialSize: nil, resumption: record, url: url) == .fresh)
        #expect(Machine.start(partialSize: 0, resumption: record, url: url) == .fresh)
        #expect(Machine.start(partialSize: 1000, resumption: nil, url: url) == .fresh)
        let other = URL(string: "http://example.com/files/a.bin?version=2")!
        #expect(Machine.start(partialSize: 1000, resumption: record, url: other) == .fresh)
        // A record written before URLs were kept by their digest still resumes
        let older = try JSONDecoder().decode(
            Machine.Resumption.self,
            from: JSONSerialization.data(withJSONObject: ["url": url.absoluteString, "validator": "\"v1\"", "total": 5000]))
        #expect(Machine.start(partialSize: 1000, resumption: older, url: url) == .resume(from: 1000, validator: "\"v1\"", total: 5000))
        let noValidator = Machine.Resumption(url: url.absoluteString, validator: "", total: 5000)
        #expect(Machine.start(partialSize: 1000, resumption: noValidator, url: url) == .fresh)
        // A validator no transport would send (a record written by hand) starts over, never fails for good.
        let unsendable = Machine.Resumption(url: url.absoluteString, validator: "\"v1\"\r", total: 5000)
        #expect(Machine.start(partialSize: 1000, resumption: unsendable, url: url) == .fresh)
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
                == .append(at: 1000, total: 5000), "an unknown total: the file ends with the range")
        #expect(
            Machine.decide(status: 206, headers: ["Content-Range": "bytes 1000-9223372036854775807/*"], start: resume)
                == .append(at: 1000, total: nil), "a range to Int64.max has no end to expect")
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
        #expect(
            Machine.decide(status: 206, headers: ["Content-Range": "bytes 1000-1999/5000"], start: resume)
                == .appendPart(at: 1000, end: 2000, total: 5000), "a capped range: append it, then ask for the rest")
        let recorded = Machine.Start.resume(from: 1000, validator: "\"v1\"", total: 5000)
        #expect(
            Machine.decide(status: 206, headers: ["Content-Range": "bytes 1000-1999/*"], start: recorded)
                == .appendPart(at: 1000, end: 2000, total: 5000), "no total said: still a part of the size recorded")
        #expect(
            Machine.decide(status: 206, headers: ["Content-Range": "bytes 1000-4999/*"], start: recorded) == .append(at: 1000, total: 5000))
        guard case .restart = Machine.decide(status: 206, headers: ["Content-Range": "bytes 1000-5999/*"], start: recorded) else {
            Issue.record("bytes past the recorded end must start over")
            return
        }
        guard case .restart = Machine.decide(status: 206, headers: ["Content-Range": "bytes 1000-1999/6000"], start: recorded) else {
            Issue.record("a part of a file whose size changed must start over")
            return
        }
        #expect(Machine.decide(status: 206, headers: ["Content-Range": "bytes 0-99/100"], start: .fresh) == .writeFromStart(total: 100))
    }

    @Test(
        "A part written whole is followed by a request for the rest with the same validator; a part cut short, or without a validator, is not"
    )
    func continuation() {
        let part = Machine.Decision.appendPart(at: 1000, end: 2000, total: 5000)
        #expect(
            Machine.continuation(after: part, written: 2000, validator: "\"v1\"") == .resume(from: 2000, validator: "\"v1\"", total: 5000))
        #expect(Machine.headers(for: .resume(from: 2000, validator: "\"v1\"", total: 5000))["Range"] == "bytes=2000-")
        #expect(Machine.continuation(after: part, written: 1999, validator: "\"v1\"") == nil)
        #expect(Machine.continuation(after: part, written: 2000, validator: nil) == nil)
        #expect(Machine.continuation(after: .append(at: 1000, total: 5000), written: 5000, validator: "\"v1\"") == nil)
        #expect(Machine.continuation(after: nil, written: 0, validator: "\"v1\"") == nil)
    }

    @Test("200 while resuming (range ignored, or If-Range found the file changed) writes from the start")
    func fullAnswer() {
        #expect(Machine.decide(status: 200, headers: ["Content-Length": "5000"], start: resume) == .writeFromStart(total: 5000))
        #expect(Machine.decide(status: 200, headers: [:], start: .fresh) == .writeFromStart(total: nil))
        // Sizes are digits only: a signed or empty one says nothing.
        for length in ["-1", "+5000", "", "5e3"] {
            #expect(Machine.decide(status: 200, headers: ["Content-Length": length], start: .fresh) == .writeFromStart(total: nil))
        }
        #expect(Machine.unsatisfiedTotal("bytes */+5000") == nil && Machine.unsatisfiedTotal("bytes */5000") == 5000)
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

    @Test("A resume whose answer gives another total than the one recorded starts over, 206 or 416 alike")
    func recordedTotal() {
        let recorded = Machine.Start.resume(from: 1000, validator: "\"v1\"", total: 2000)
        // A server that ignores If-Range, and a file that shrank to 1,500 bytes since
        guard case .restart = Machine.decide(status: 206, headers: ["Content-Range": "bytes 1000-1499/1500"], start: recorded) else {
            Issue.record("a 206 of a file of another size must start over")
            return
        }
        #expect(
            Machine.decide(status: 206, headers: ["Content-Range": "bytes 1000-1999/2000"], start: recorded)
                == .append(at: 1000, total: 2000))
        // The file is now exactly as long as the partial one: not the same file, not complete
        guard case .restart = Machine.decide(status: 416, headers: ["Content-Range": "bytes */1000"], start: recorded) else {
            Issue.record("a 416 naming another total than the recorded one must start over")
            return
        }
        let whole = Machine.Start.resume(from: 2000, validator: "\"v1\"", total: 2000)
        #expect(Machine.decide(status: 416, headers: ["Content-Range": "bytes */2000"], start: whole) == .alreadyComplete(total: 2000))
        guard case .restart = Machine.decide(status: 416, headers: ["Content-Range": "bytes */2000", "ETag": "\"v2\""], start: whole) else {
            Issue.record("a 416 of another version must start over")
            return
        }
    }

    @Test(
        "202, 204 and 205 are not the file, fresh or resuming: the kept bytes and the destination stay",
        arguments: [202, 204, 205])
    func acceptedAndNoContent(status: Int) {
        #expect(Machine.decide(status: status, headers: [:], start: .fresh) == .notADownload)
        #expect(Machine.decide(status: status, headers: [:], start: resume) == .notADownload)
    }

    @Test("The validator kept is a strong ETag, else a strong Last-Modified (60 s before Date); never a date beside a weak ETag")
    func validator() {
        let modified = "Mon, 01 Jan 2024 00:00:00 GMT"
        let later = "Mon, 01 Jan 2024 00:01:00 GMT"
        #expect(Machine.validator(in: ["ETag": "\"abc\"", "Last-Modified": modified]) == "\"abc\"")
        #expect(Machine.validator(in: ["ETag": "W/\"abc\"", "Last-Modified": modified, "Date": later]) == nil)
        #expect(Machine.validator(in: ["ETag": "W/\"abc\""]) == nil)
        #expect(Machine.validator(in: ["Last-Modified": modified, "Date": later]) == modified)
        #expect(
            Machine.validator(in: ["Last-Modified": modified, "Date": "Mon, 01 Jan 2024 00:00:59 GMT"]) == nil,
            "weak: changed within the minute")
        #expect(Machine.validator(in: ["Last-Modified": modified]) == nil, "no Date to prove it strong")
        #expect(Machine.validator(in: ["Last-Modified": "yesterday", "Date": later]) == nil)
        #expect(Machine.validator(in: ["ETag": "\"abc\"", "Content-Encoding": "gzip"]) == nil, "ranges would count encoded bytes")
        #expect(Machine.validator(in: [:]) == nil)
        #expect(Machine.validator(in: ["ETag": "\"abc\u{0}\""]) == nil, "a NUL could never be sent back")
    }

    @Test("A 206 whose validator differs from the one sent starts over; one without a validator, or the same, appends")
    func partialContentValidator() {
        let range = "bytes 1000-4999/5000"
        #expect(
            Machine.decide(status: 206, headers: ["Content-Range": range, "ETag": "\"v1\""], start: resume)
                == .append(at: 1000, total: 5000))
        guard case .restart = Machine.decide(status: 206, headers: ["Content-Range": range, "ETag": "\"v2\""], start: resume) else {
            Issue.record("a 206 of another version (If-Range ignored) must start over")
            return
        }
        let byDate = Machine.Start.resume(from: 1000, validator: "Mon, 01 Jan 2024 00:00:00 GMT")
        #expect(
            Machine.decide(status: 206, headers: ["Content-Range": range, "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"], start: byDate)
                == .append(at: 1000, total: 5000))
        guard
            case .restart = Machine.decide(
                status: 206, headers: ["Content-Range": range, "Last-Modified": "Tue, 02 Jan 2024 00:00:00 GMT"], start: byDate)
        else {
            Issue.record("a 206 modified since the partial file was written must start over")
            return
        }
    }

    @Test("A body ends where its head says: a 206's range (not the file's total), a Content-Length; nowhere when compressed")
    func bodyEnd() {
        #expect(Machine.bodyEnd(status: 206, headers: ["Content-Range": "bytes 0-99/1000"], announced: 1000) == 100)
        #expect(Machine.bodyEnd(status: 206, headers: ["Content-Range": "bytes 400-999/*"], announced: nil) == 1000)
        #expect(Machine.bodyEnd(status: 200, headers: ["Content-Length": "500"], announced: 500) == 500)
        #expect(Machine.bodyEnd(status: 200, headers: [:], announced: nil) == nil)
        // Written decoded: a compressed 206 from the start is longer than its range, and may be.
        #expect(
            Machine.bodyEnd(status: 206, headers: ["Content-Range": "bytes 0-99/1000", "Content-Encoding": "gzip"], announced: nil) == nil)
        #expect(
            Machine.bodyEnd(status: 206, headers: ["Content-Range": "bytes 0-\(Int64.max - 1)/\(Int64.max)"], announced: nil) == Int64.max)
    }

    @Test("A compressed answer has no known total, and is never appended to a partial file")
    func encodedAnswer() {
        #expect(
            Machine.decide(status: 200, headers: ["Content-Length": "500", "Content-Encoding": "gzip"], start: .fresh)
                == .writeFromStart(total: nil))
        #expect(
            Machine.decide(status: 200, headers: ["Content-Length": "500", "Content-Encoding": "identity"], start: .fresh)
                == .writeFromStart(total: 500))
        guard
            case .restart = Machine.decide(
                status: 206, headers: ["Content-Range": "bytes 1000-4999/5000", "Content-Encoding": "gzip"], start: resume)
        else {
            Issue.record("a compressed 206 must start over")
            return
        }
    }

    @Test("A download with no destination stays in the temporary folder, whatever the URL's last segment decodes to")
    func temporaryDestination() throws {
        let folder = FileManager.default.temporaryDirectory.standardizedFileURL.path
        for text in [
            "http://h/a/..%2F..%2Fx%2Fy.sh", "http://h/a/%2E%2E", "http://h/.hidden", "http://h/", "http://h/a%00b.txt",
            "http://h/report.csv",
        ] {
            let destination = AbstractRepository.temporaryDestination(for: try #require(URL(string: text)))
            #expect(destination.deletingLastPathComponent().standardizedFileURL.path == folder, "\(text)")
            #expect(!destination.lastPathComponent.hasPrefix("."), "\(text)")
            #expect(!destination.lastPathComponent.contains("\0"), "\(text)")
        }
        #expect(AbstractRepository.temporaryDestination(for: try #require(URL(string: "http://h/r/report.csv"))).pathExtension == "csv")
    }

    @Test("Content-Range values are read strictly")
    func contentRange() {
        #expect(Machine.contentRange("bytes 0-9/10").map { [$0.first, $0.last, $0.total ?? -1] } == [0, 9, 10])
        #expect(Machine.contentRange("bytes 0-9/*")?.total == nil)
        for bad in [
            "", "bytes", "bytes 0-9", "bytes a-9/10", "bytes 0-9/x", "items 0-9/10", "bytes 9-0/10", "bytes -9/10",
            "bytes 100-199/150", "bytes 0-9/-1", "bytes 0-9/9", "bytes +0-9/10", "bytes 0-+9/10", "bytes 0-9/+10",
        ] {
            #expect(Machine.contentRange(bad) == nil, "\(bad)")
        }
        #expect(Machine.unsatisfiedTotal("bytes */77") == 77)
        #expect(Machine.unsatisfiedTotal("bytes 0-1/77") == nil)
        #expect(Machine.unsatisfiedTotal("bytes */x") == nil)
    }
}

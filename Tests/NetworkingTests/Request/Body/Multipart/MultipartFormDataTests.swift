import Foundation
import Testing

@testable import Networking

@Suite("Multipart form data")
struct MultipartFormDataTests {
    @Test("A small form is encoded byte for byte as RFC 7578 and RFC 2046 say")
    func golden() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let notes = try directory.file("notes.txt", contents: Data("hi\n".utf8))
        var form = try MultipartFormData(boundary: "XyZ")
        form.append("Ada", name: "first")
        form.append(Data("{}".utf8), name: "meta", fileName: "meta.json", contentType: "application/json")
        form.append(Data([0, 1, 2]), name: "blob")
        try form.append(fileAt: notes, name: "attachment")
        form.append("", name: "empty")

        let expected = """
            --XyZ\r
            Content-Disposition: form-data; name="first"\r
            \r
            Ada\r
            --XyZ\r
            Content-Disposition: form-data; name="meta"; filename="meta.json"\r
            Content-Type: application/json\r
            \r
            {}\r
            --XyZ\r
            Content-Disposition: form-data; name="blob"\r
            Content-Type: application/octet-stream\r
            \r
            \u{0}\u{1}\u{2}\r
            --XyZ\r
            Content-Disposition: form-data; name="attachment"; filename="notes.txt"\r
            Content-Type: text/plain\r
            \r
            hi
            \r
            --XyZ\r
            Content-Disposition: form-data; name="empty"\r
            \r
            \r
            --XyZ--\r

            """
        let body = try form.encodedData(maximumSize: 10_000)
        #expect(String(decoding: body, as: UTF8.self) == expected)
        #expect(form.contentLength == Int64(body.count))
        #expect(form.contentType == "multipart/form-data; boundary=XyZ")
        #expect(form.boundary == "XyZ")
    }

    @Test("An empty form is just the close delimiter")
    func emptyForm() throws {
        let form = try MultipartFormData(boundary: "b")
        #expect(try form.encodedData(maximumSize: 100) == Data("--b--\r\n".utf8))
        #expect(form.contentLength == 7)
        #expect(form.segments() == [.data(Data("--b--\r\n".utf8))])
    }

    @Test("Quotes, CR and LF in names and file names become %22, %0D and %0A (WHATWG)")
    func escaping() throws {
        var form = try MultipartFormData(boundary: "b")
        form.append("v", name: "a\"b\r\nc\rd\ne%22")
        form.append(Data("x".utf8), name: "f", fileName: "evil\"; name=\"other\r\nX-Injected: 1.txt")
        let text = String(decoding: try form.encodedData(maximumSize: 10_000), as: UTF8.self)
        #expect(text.contains("name=\"a%22b%0D%0Ac%0Dd%0Ae%22\"\r\n"))
        #expect(text.contains("filename=\"evil%22; name=%22other%0D%0AX-Injected: 1.txt\"\r\n"))
        #expect(!text.contains("\r\nX-Injected"))
    }

    @Test("Non-ASCII names and file names are sent as raw UTF-8 inside the quotes")
    func nonASCII() throws {
        var form = try MultipartFormData(boundary: "b")
        form.append(Data("x".utf8), name: "pièce", fileName: "résumé 📄.pdf")
        let body = [UInt8](try form.encodedData(maximumSize: 10_000))
        let expected: [UInt8] =
            Array("name=\"pi".utf8) + [0xC3, 0xA8] + Array("ce\"; filename=\"r".utf8) + [0xC3, 0xA9]
            + Array("sum".utf8) + [0xC3, 0xA9, 0x20, 0xF0, 0x9F, 0x93, 0x84] + Array(".pdf\"".utf8)
        #expect(MultipartParser.firstIndex(of: expected, in: body, from: 0) != nil)
        #expect(!String(decoding: body, as: UTF8.self).contains("filename*"))
    }

    @Test("Control characters cannot add header lines through a content type")
    func contentTypeInjection() throws {
        var form = try MultipartFormData(boundary: "b")
        form.append(Data("x".utf8), name: "f", contentType: "text/plain\r\nX-Injected: 1")
        let text = String(decoding: try form.encodedData(maximumSize: 10_000), as: UTF8.self)
        #expect(text.contains("Content-Type: text/plainX-Injected: 1\r\n"))
    }

    @Test(
        "Valid boundaries are accepted",
        arguments: [
            "a", String(repeating: "z", count: 70), "with space inside", "'()+_,-./:=?", "0123456789",
        ])
    func validBoundary(boundary: String) throws {
        #expect(try MultipartFormData(boundary: boundary).boundary == boundary)
    }

    @Test(
        "Invalid boundaries are refused with a reason",
        arguments: [
            "", String(repeating: "z", count: 71), "ends with space ", "semi;colon", "quote\"", "é", "tab\there", "line\r\nbreak",
        ])
    func invalidBoundary(boundary: String) {
        #expect {
            try MultipartFormData(boundary: boundary)
        } throws: { error in
            guard case .invalidBoundary(let rejected, let reason)? = error as? MultipartError else { return false }
            return rejected == boundary && !reason.isEmpty
        }
    }

    @Test("The boundary is quoted in Content-Type when it holds MIME special characters")
    func boundaryQuoting() throws {
        #expect(try MultipartFormData(boundary: "a:b").contentType == "multipart/form-data; boundary=\"a:b\"")
        #expect(try MultipartFormData(boundary: "a b").contentType == "multipart/form-data; boundary=\"a b\"")
        #expect(try MultipartFormData(boundary: "a'b+c_d-e.f").contentType == "multipart/form-data; boundary=a'b+c_d-e.f")
    }

    @Test("Default boundaries are random: Networking- and 32 letters or digits")
    func defaultBoundary() {
        let boundaries = (0..<50).map { _ in MultipartFormData().boundary }
        #expect(Set(boundaries).count == boundaries.count)
        for boundary in boundaries {
            #expect(boundary.hasPrefix("Networking-"))
            #expect(boundary.utf8.count == 43)
            #expect(boundary.dropFirst(11).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
            #expect(MultipartFormData.boundaryProblem(boundary) == nil)
        }
    }

    @Test("A random boundary found in memory content is replaced; a fixed one is kept")
    func boundaryCollision() throws {
        var form = MultipartFormData()
        let first = form.boundary
        form.append("before \(first) after", name: "text")
        form.append(Data("--\(first)--".utf8), name: "data")
        #expect(form.boundary != first)
        #expect(form.boundary.utf8.count == first.utf8.count)
        let body = try form.encodedData(maximumSize: 10_000)
        #expect(form.contentLength == Int64(body.count))
        let parts = try #require(MultipartParser.parse([UInt8](body), boundary: form.boundary))
        #expect(parts.map(\.content) == [Array("before \(first) after".utf8), Array("--\(first)--".utf8)])

        var fixed = try MultipartFormData(boundary: "fixed")
        fixed.append("contains fixed", name: "text")
        #expect(fixed.boundary == "fixed")
    }

    @Test("Segments keep files as ranges, share memory content and add up to the content length")
    func segments() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let photo = try directory.file("photo.PNG", contents: Data(repeating: 7, count: 1000))
        var form = try MultipartFormData(boundary: "b")
        form.append("v", name: "text")
        try form.append(fileAt: photo, name: "photo")
        let large = Data(repeating: 1, count: 5000)
        form.append(large, name: "large")
        let segments = form.segments()
        #expect(segments.count == 7)
        #expect(segments[3] == .file(photo, offset: 0, length: 1000, isWhole: true))
        #expect(segments[5] == .data(large))
        #expect(segments.reduce(Int64(0)) { $0 + $1.length } == form.contentLength)
        let body = try form.encodedData(maximumSize: 100_000)
        let parts = try #require(MultipartParser.parse([UInt8](body), boundary: "b"))
        #expect(
            parts[1]
                == MultipartParser.Part(
                    name: "photo", fileName: "photo.PNG", contentType: "image/png", content: [UInt8](repeating: 7, count: 1000)))
    }

    @Test("File names default to the URL's last component; types follow the file name, then the URL")
    func fileNamesAndTypes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let upload = try directory.file("upload.tmp", contents: Data("x".utf8))
        let report = try directory.file("report.pdf", contents: Data("x".utf8))
        var form = try MultipartFormData(boundary: "b")
        try form.append(fileAt: upload, name: "a", fileName: "song.MP3")
        try form.append(fileAt: report, name: "b", fileName: "report")
        try form.append(fileAt: upload, name: "c")
        try form.append(fileAt: upload, name: "d", fileName: "x.png", contentType: "image/gif")
        let parts = try #require(MultipartParser.parse([UInt8](try form.encodedData(maximumSize: 10_000)), boundary: "b"))
        #expect(parts.map(\.fileName) == ["song.MP3", "report", "upload.tmp", "x.png"])
        #expect(parts.map(\.contentType) == ["audio/mpeg", "application/pdf", "application/octet-stream", "image/gif"])
    }

    @Test("Files that cannot be measured are refused when appended")
    func fileErrors() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var form = MultipartFormData()
        let missing = directory.url.appendingPathComponent("missing.bin")
        #expect(throws: MultipartError.fileNotFound(missing)) { try form.append(fileAt: missing, name: "f") }
        #expect(throws: MultipartError.notARegularFile(directory.url)) { try form.append(fileAt: directory.url, name: "f") }
        let remote = try #require(URL(string: "https://example.com/a.png"))
        #expect(throws: MultipartError.notAFileURL(remote)) { try form.append(fileAt: remote, name: "f") }
        let presigned = try #require(URL(string: "https://bucket.test/a.png?X-Amz-Signature=s-1&X-Amz-Security-Token=t-1"))
        #expect(!"\(MultipartError.notAFileURL(presigned))".contains("s-1"))
        #expect(!"\(MultipartError.notAFileURL(presigned))".contains("t-1"))
        if geteuid() != 0 {
            let secret = try directory.file("secret", contents: Data("x".utf8))
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: secret.path)
            #expect(throws: MultipartError.self) { try form.append(fileAt: secret, name: "f") }
        }
        #expect(form.segments().count == 1)
    }

    @Test("Symbolic links are followed; FIFOs are refused without blocking")
    func specialFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let target = try directory.file("target.txt", contents: Data("linked".utf8))
        let link = directory.url.appendingPathComponent("link.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        var form = try MultipartFormData(boundary: "b")
        try form.append(fileAt: link, name: "f")
        let parts = MultipartParser.parse([UInt8](try form.encodedData(maximumSize: 1000)), boundary: "b")
        #expect(parts?.first?.content == Array("linked".utf8))
        #expect(parts?.first?.fileName == "link.txt")

        let fifo = directory.url.appendingPathComponent("fifo")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        #expect(throws: MultipartError.notARegularFile(fifo)) { try form.append(fileAt: fifo, name: "p") }
    }

    @Test(
        "Path extensions of file names",
        arguments: [
            ("a.png", "png"), ("archive.tar.gz", "gz"), (".profile", ""), ("noextension", ""), ("dir.d/file", ""),
            ("trailing.", ""), ("ünï.JPG", "JPG"),
        ])
    func pathExtension(fileName: String, ext: String) {
        #expect(MultipartFormData.pathExtension(of: fileName) == ext)
    }

    @Test("encodedData refuses a file whose size changed since it was appended")
    func changedFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.file("data.bin", contents: Data(repeating: 1, count: 10))
        var form = MultipartFormData()
        try form.append(fileAt: file, name: "f")
        try Data(repeating: 1, count: 12).write(to: file)
        #expect(throws: MultipartError.fileChanged(file, expectedSize: 10, actualSize: 12)) {
            try form.encodedData(maximumSize: 10_000)
        }
        try Data(repeating: 1, count: 5).write(to: file)
        #expect(throws: MultipartError.fileChanged(file, expectedSize: 10, actualSize: 5)) {
            try form.encodedData(maximumSize: 10_000)
        }
        try FileManager.default.removeItem(at: file)
        #expect(throws: MultipartError.fileNotFound(file)) { try form.encodedData(maximumSize: 10_000) }
        try Data(repeating: 2, count: 10).write(to: file)
        #expect(try form.encodedData(maximumSize: 10_000).count == Int(form.contentLength))
    }

    @Test("encodedData refuses bodies above the maximum size before reading")
    func maximumSize() throws {
        var form = try MultipartFormData(boundary: "b")
        form.append(Data(repeating: 0, count: 100), name: "f")
        let length = form.contentLength
        #expect(try form.encodedData(maximumSize: Int(length)).count == Int(length))
        #expect(throws: MultipartError.bodyTooLarge(size: length, limit: length - 1)) {
            try form.encodedData(maximumSize: Int(length) - 1)
        }
    }

    @Test("Random forms: the length is exact and the parts parse back", arguments: 0..<8)
    func randomForms(seed: UInt64) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var generator = SeededGenerator(seed: seed)
        for formIndex in 0..<25 {
            let random = try RandomForm(generator: &generator, directory: directory, tag: "\(seed)-\(formIndex)")
            let body = try random.form.encodedData(maximumSize: 1 << 24)
            #expect(random.form.contentLength == Int64(body.count))
            #expect(random.form.segments().reduce(Int64(0)) { $0 + $1.length } == Int64(body.count))
            let parsed = MultipartParser.parse([UInt8](body), boundary: random.form.boundary)
            #expect(parsed == random.expectedParts, "seed \(seed), form \(formIndex)")
        }
    }
}

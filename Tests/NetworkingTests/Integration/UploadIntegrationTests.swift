import Foundation
import Testing

@testable import Networking

/// Uploads against the test API's `/uploads/raw` and `/uploads/multipart`, which hash what they
/// receive and check `Content-MD5` / `Content-Digest`, and httpbin's `/post` (werkzeug's parser).
@Suite("Uploads end to end")
struct UploadIntegrationTests {
    struct RawReceipt: Decodable, Sendable {
        let size: Int
        let sha256: String
        let md5Base64: String
        let contentType: String?
        let contentLength: Int?
        let transferEncoding: String?
        let contentEncoding: String?
        let inflatedSize: Int?
        let inflatedSha256: String?
        let json: JSONValue?
        let contentMd5Checked: Bool
        let contentDigestChecked: Bool
    }

    struct MultipartReceipt: Decodable, Sendable {
        struct File: Decodable, Sendable {
            let name: String
            let filename: String
            let contentType: String
            let size: Int
            let sha256: String
        }

        let contentType: String
        let fields: [String: [String]]
        let files: [File]
    }

    /// A file of `size` deterministic bytes in a fresh folder, and its hex SHA-256.
    static func file(size: Int, name: String = "upload.bin") async throws -> (URL, String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("uploads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var bytes = [UInt8](repeating: 0, count: size)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 8) }
        let url = folder.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return (url, await hex(bytes))
    }

    /// The hex SHA-256 of `bytes`, computed on a thread of its own (seconds of work in a debug build).
    static func hex(_ bytes: some Sequence<UInt8>) async -> String {
        let array = Array(bytes)
        return await onPlainThread { SHA256.hex(SHA256.hash(array)) }
    }

    static func repository(_ transport: TransportUnderTest) throws -> TestAPI.Repository {
        try TestAPI.anonymous(transport: transport.shared)
    }

    @Test(
        "A file is streamed with Content-Length, Content-MD5 (base64) and Content-Digest the server verifies",
        arguments: TransportUnderTest.all)
    func rawFile(transport: TransportUnderTest) async throws {
        let (file, sha256) = try await Self.file(size: 512 * 1024 + 17, name: "photo.jpg")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let receipt: RawReceipt = try await Self.repository(transport).performRequest(
            Endpoint.upload(.put, "uploads/raw", body: .file(file)).withContentDigests([.md5, .sha256]).withoutSession()
        ).get()
        #expect(receipt.size == 512 * 1024 + 17)
        #expect(receipt.sha256 == sha256)
        #expect(receipt.contentLength == receipt.size)
        #expect(receipt.contentType == "image/jpeg")
        // Both digests came (and matched: the server refuses a wrong one with 400).
        #expect(receipt.contentMd5Checked && receipt.contentDigestChecked)
    }

    @Test(
        "A file reached through a symbolic link is sent whole; an offset past its end, or a URL that is no file, sends nothing",
        arguments: TransportUnderTest.all)
    func symbolicLinkAndBadRanges(transport: TransportUnderTest) async throws {
        let (file, sha256) = try await Self.file(size: 300_001, name: "target.bin")
        let folder = file.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let link = folder.appendingPathComponent("link.bin")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        let repository = try Self.repository(transport)
        let receipt: RawReceipt = try await repository.performRequest(
            Endpoint.upload(.put, "uploads/raw", body: .file(link)).withoutSession()
        ).get()
        #expect(receipt.size == 300_001)
        #expect(receipt.sha256 == sha256)
        let tail: RawReceipt = try await repository.performRequest(
            Endpoint.upload(.put, "uploads/raw", body: .file(link, offset: 300_000)).withoutSession()
        ).get()
        #expect(tail.size == 1)

        for body in [RequestBody.file(link, offset: 300_002), .file(folder), .file(try #require(URL(string: "https://example.com/a.bin")))]
        {
            let result = await repository.performRequest(Endpoint<RawReceipt>.upload(.put, "uploads/raw", body: body).withoutSession())
            guard case .invalidRequest(let reason, _)? = result.failure else {
                Issue.record("expected invalidRequest for \(body), got \(result)")
                continue
            }
            #expect(reason.contains("the body file"), "\(reason)")
        }
    }

    @Test(
        "A file compressed with gzip as it is sent arrives chunked and inflates to the file; digests cover the compressed bytes",
        arguments: TransportUnderTest.all)
    func gzipFile(transport: TransportUnderTest) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gzip-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("log.txt")
        let text = Data((0..<40_000).map { "line \($0 % 300) of a log that compresses well\n" }.joined().utf8)
        try text.write(to: file)
        let receipt: RawReceipt = try await Self.repository(transport).performRequest(
            Endpoint.upload(.post, "uploads/raw", body: .file(file)).gzipped().withContentDigests([.md5, .sha256]).withoutSession()
        ).get()
        #expect(receipt.contentEncoding == "gzip")
        #expect(receipt.inflatedSize == text.count)
        #expect(await Self.hex(text) == receipt.inflatedSha256)
        #expect(receipt.size < text.count / 5)
        #expect(receipt.contentMd5Checked && receipt.contentDigestChecked)
    }

    @Test(
        "A body the caller gzipped keeps Content-Encoding: gzip when staged for its digests; the server inflates it and checks them",
        arguments: TransportUnderTest.all)
    func callerGzippedBodyWithDigests(transport: TransportUnderTest) async throws {
        // Given: bytes compressed by the body itself, not by the endpoint's .gzipped()
        let text = Data((0..<20_000).map { "entry \($0 % 200) of a report\n" }.joined().utf8)
        let repository = try Self.repository(transport)
        let cases: [ContentDigests] = [[.md5], [.md5, .sha256]]
        for digests in cases {
            // When
            let receipt: RawReceipt = try await repository.performRequest(
                Endpoint.upload(.post, "uploads/raw", body: RequestBody.data(text).gzipped()).withContentDigests(digests).withoutSession()
            ).get()
            // Then: the server was told gzip and inflated the body back to the text
            #expect(receipt.contentEncoding == "gzip")
            #expect(receipt.inflatedSize == text.count)
            #expect(await Self.hex(text) == receipt.inflatedSha256)
            #expect(receipt.size < text.count / 5)
            // And: the digests came, covering the compressed bytes (the server refuses a wrong one with 400)
            #expect(receipt.contentMd5Checked)
            #expect(receipt.contentDigestChecked == digests.contains(.sha256))
        }
    }

    @Test("A range of a file, bytes in memory and a stream of unknown length (chunked) arrive intact", arguments: TransportUnderTest.all)
    func rangesAndStreams(transport: TransportUnderTest) async throws {
        let (file, _) = try await Self.file(size: 100_000)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let repository = try Self.repository(transport)
        let whole = try Data(contentsOf: file)
        let range: RawReceipt = try await repository.performRequest(
            Endpoint.upload(.post, "uploads/raw", body: .file(file, offset: 1000, length: 5000)).withoutSession()
        ).get()
        #expect(range.size == 5000)
        #expect(await Self.hex(whole[1000..<6000]) == range.sha256)
        // A range past the file's end is refused before anything is sent, saying so.
        let past: Result<RawReceipt, RepositoryError> = await repository.performRequest(
            Endpoint.upload(.post, "uploads/raw", body: .file(file, offset: 99_000, length: 5000)).withoutSession())
        guard case .invalidRequest(let reason, _)? = past.failure else {
            Issue.record("expected .invalidRequest, got \(past)")
            return
        }
        #expect(reason.contains("holds 100000 bytes, fewer than the 5000 from offset 99000"), "\(reason)")
        let chunks = AsyncStream<Data> { continuation in
            for index in 0..<40 { continuation.yield(whole[(index * 2500)..<((index + 1) * 2500)]) }
            continuation.finish()
        }
        let streamed: RawReceipt = try await repository.performRequest(
            Endpoint.upload(.post, "uploads/raw", body: .stream(chunks)).withContentDigests([.sha256]).withoutSession()
        ).get()
        #expect(streamed.size == 100_000)
        #expect(await Self.hex(whole) == streamed.sha256)
        #expect(streamed.contentDigestChecked)
        // A stream whose length is known goes with Content-Length instead.
        let known = AsyncStream<Data> { continuation in
            for index in 0..<40 { continuation.yield(whole[(index * 2500)..<((index + 1) * 2500)]) }
            continuation.finish()
        }
        let counted: RawReceipt = try await repository.performRequest(
            Endpoint.upload(.post, "uploads/raw", body: .stream(known, length: 100_000)).withoutSession()
        ).get()
        #expect(counted.size == 100_000 && counted.contentLength == 100_000 && counted.transferEncoding == nil)
        #expect(await Self.hex(whole) == counted.sha256)
    }

    @Test(
        "A sized stream that goes on past its length fails, also when the extra bytes come after the announced ones went out; one that ends short fails too",
        arguments: TransportUnderTest.all)
    func sizedStreamOverrun(transport: TransportUnderTest) async throws {
        let repository = try Self.repository(transport)
        func upload(_ pieces: [Int]) async -> Result<RawReceipt, RepositoryError> {
            let chunks = AsyncStream<Data> { continuation in
                Task {
                    for size in pieces {
                        continuation.yield(Data(repeating: 0x61, count: size))
                        try? await Task.sleep(for: .milliseconds(100))
                    }
                    continuation.finish()
                }
            }
            return await repository.performRequest(
                Endpoint.upload(.post, "uploads/raw", body: .stream(chunks, length: 100)).withoutSession())
        }
        for pieces in [[100, 50], [60, 40, 1]] {
            // The extra bytes come 0.1 s after the last announced one, which waits 1 s for them: a
            // machine that stalls the producer longer (the whole suite's start) gets more tries.
            var failure: RepositoryError?
            for _ in 0..<5 where failure == nil { failure = await upload(pieces).failure }
            guard case .invalidRequest(let reason, _)? = failure else {
                Issue.record("\(pieces): expected invalidRequest")
                continue
            }
            #expect(reason.contains("more than the 100 bytes it announced"), "\(pieces): \(reason)")
        }
        guard case .invalidRequest(let reason, _)? = await upload([60, 30]).failure else {
            Issue.record("expected invalidRequest for a short stream")
            return
        }
        #expect(reason.contains("produced 90 bytes, not the 100"), "\(reason)")
        #expect(try await upload([60, 40]).get().size == 100)
        // A sequence that stays open after its length (finished only after the call) is whole
        // once its last byte has waited a second for more
        let (open, producer) = AsyncStream.makeStream(of: Data.self)
        producer.yield(Data(repeating: 0x62, count: 100))
        let receipt = try await repository.performRequest(
            Endpoint<RawReceipt>.upload(.post, "uploads/raw", body: .stream(open, length: 100)).withoutSession()
        ).get()
        producer.finish()
        #expect(receipt.size == 100)
    }

    @Test(
        "A streamed body answered 307 or 308 is not sent again (it was read once): the redirect is the answer, with its Location",
        arguments: TransportUnderTest.all, [307, 308])
    func streamedBodyRedirected(transport: TransportUnderTest, status: Int) async throws {
        let repository = try Self.repository(transport)
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("part one, ".utf8))
            continuation.yield(Data("part two".utf8))
            continuation.finish()
        }
        let result: Result<RawReceipt, RepositoryError> = await repository.performRequest(
            Endpoint.upload(.post, "redirect/\(status)", body: .stream(chunks), query: ["to": "/api/v1/uploads/raw"])
                .withoutSession())
        let error = try #require(result.failure)
        #expect(error.statusCode == status, "\(error)")
        #expect(error.context?.response?.headers["Location"] == "/api/v1/uploads/raw")
    }

    @Test("A stream of one-byte chunks is sent in full writes, not a chunk at a time", arguments: TransportUnderTest.all)
    func tinyChunks(transport: TransportUnderTest) async throws {
        // Given: a megabyte produced a byte at a time, all of it ready before the upload starts
        let repository = try Self.repository(transport)
        let bytes = (0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let chunks = AsyncStream<Data>(bufferingPolicy: .unbounded) { continuation in
            for byte in bytes { continuation.yield(Data([byte])) }
            continuation.finish()
        }
        // When: it is uploaded (before, each chunk was one read of the body, and the taken chunk
        // was removed from the front of the buffer, moving all the others: 40 s for half this,
        // so minutes for this; now a few seconds, longer only on a busy machine)
        var endpoint = Endpoint<RawReceipt>.upload(.post, "uploads/raw", body: .stream(chunks, length: Int64(bytes.count)))
            .withoutSession()
        endpoint.timeout = 60
        let receipt = try await repository.performRequest(endpoint).get()
        // Then: every byte arrived, in order
        #expect(receipt.size == bytes.count)
        #expect(await Self.hex(bytes) == receipt.sha256)
    }

    @Test("A gzip-compressed JSON body is inflated by the server; digests cover the compressed bytes", arguments: TransportUnderTest.all)
    func gzipBody(transport: TransportUnderTest) async throws {
        let repository = try Self.repository(transport)
        let words = (0..<5000).map { "word\($0 % 50)" }
        let receipt: RawReceipt = try await repository.performRequest(
            Endpoint<RawReceipt>.post("uploads/raw", parameters: ["words": words]).gzipped().withContentDigests([.md5, .sha256])
                .withoutSession()
        ).get()
        #expect(receipt.contentEncoding == "gzip")
        #expect(receipt.json?["words"] == .array(words.map { .string($0) }))
        #expect(try #require(receipt.inflatedSize) > receipt.size * 5)
    }

    @Test(
        "A multipart form streams fields, an in-memory file and a file from disk, with non-ASCII and quoted names",
        arguments: TransportUnderTest.all)
    func multipart(transport: TransportUnderTest) async throws {
        let (file, sha256) = try await Self.file(size: 384 * 1024, name: "report.pdf")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        var form = MultipartFormData()
        form.append("Dune", name: "title")
        form.append(Data("hello".utf8), name: "note", fileName: "Grüße \"2026\".txt", contentType: "text/plain")
        try form.append(fileAt: file, name: "document")
        let receipt: MultipartReceipt = try await Self.repository(transport).performRequest(
            Endpoint.upload(.post, "uploads/multipart", form: form, parameters: ["year": 1965, "tags": ["a", "b"]]).withoutSession()
        ).get()
        #expect(receipt.fields["title"] == ["Dune"])
        #expect(receipt.fields["year"] == ["1965"])
        #expect(receipt.fields["tags"] == ["a", "b"])
        #expect(receipt.files.map(\.name) == ["note", "document"])
        #expect(receipt.files.first?.filename == "Grüße \"2026\".txt")
        #expect(receipt.files.last?.filename == "report.pdf")
        #expect(receipt.files.last?.contentType == "application/pdf")
        #expect(receipt.files.last?.sha256 == sha256)
        #expect(receipt.contentType.hasPrefix("multipart/form-data; boundary="))
    }

    @Test("httpbin's werkzeug parses the same form")
    func httpbinMultipart() async throws {
        let servers = try TestServers.require()
        var form = MultipartFormData()
        form.append("value", name: "field")
        form.append(Data("content".utf8), name: "upload", fileName: "a.txt", contentType: "text/plain")
        let echo: JSONValue = try await TestAPI.anonymous(servers.httpbinURL).performRequest(
            Endpoint.upload(.post, "post", form: form).withoutSession()
        ).get()
        #expect(echo["form"]?["field"] == "value")
        #expect(echo["files"]?["upload"] == "content")
        // As a body, and as a body kept (an offline queue's) and read back: it still says it is
        // a form, with its boundary.
        let kept = try JSONDecoder().decode(RequestBody.self, from: JSONEncoder().encode(RequestBody.multipart(form)))
        for body in [RequestBody.multipart(form), kept] {
            let echo: JSONValue = try await TestAPI.anonymous(servers.httpbinURL).performRequest(
                Endpoint.upload(.post, "post", body: body).withoutSession()
            ).get()
            #expect(echo["form"]?["field"] == "value")
            #expect(echo["files"]?["upload"] == "content")
        }
    }

    @Test("Routes with multipart and raw serializations and the gzip key upload through the same paths")
    func routes() async throws {
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.apiURL)
        configuration.routes = try RouteTable(
            json: Data(
                #"""
                {
                  "form": { "method": "POST", "path": "uploads/multipart", "serialization": "multipart", "requiresSession": false },
                  "raw": { "method": "PUT", "path": "uploads/raw", "serialization": "raw", "contentType": "text/csv", "requiresSession": false },
                  "packed": { "method": "POST", "path": "uploads/raw", "gzip": true, "requiresSession": false }
                }
                """#.utf8))
        let repository = TestAPI.Repository(configuration: configuration)
        let form: MultipartReceipt = try await repository.performRequest(.route("form", parameters: ["title": "Dune"])).get()
        #expect(form.fields["title"] == ["Dune"])
        let raw: RawReceipt = try await repository.performRequest(
            Endpoint.route("raw").uploading(.data(Data("a,b\n1,2\n".utf8)))
        ).get()
        #expect(raw.size == 8)
        #expect(raw.contentType == "text/csv")
        let packed: RawReceipt = try await repository.performRequest(.route("packed", parameters: ["a": 1])).get()
        #expect(packed.contentEncoding == "gzip")
        #expect(packed.json == ["a": 1])
        let missing = await repository.performRequest(Endpoint<RawReceipt>.route("raw"))
        #expect(missing.failure?.description.contains("sends a raw body") == true)
    }
}

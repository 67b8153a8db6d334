import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

/// Digests of bodies the caller compressed (`RequestBody.data(d).gzipped()`): staged for hashing,
/// such a body becomes a plain file of gzip bytes, and the request must still say
/// `Content-Encoding: gzip`, or the server stores the compressed bytes as the content.
/// What the test API receives is checked in `UploadIntegrationTests`.
@Suite("BodyDigester")
struct BodyDigesterTests {
    /// Text that compresses well, as reports do.
    private static let text = Data(String(repeating: "a line of a report that compresses well\n", count: 500).utf8)

    private static func request(body: RequestBody) throws -> TransportRequest {
        var request = TransportRequest(method: .post, url: try #require(URL(string: "http://api.test/api/v1/reports")))
        request.body = body
        return request
    }

    @Test("A body gzipped by the caller is built with Content-Encoding: gzip")
    func builtHeader() throws {
        // Given
        let builder = RequestBuilder(configuration: try makeConfiguration())
        // When
        let request = try builder.build(Endpoint<Void>.upload(.post, "reports", body: RequestBody.data(Self.text).gzipped()))
        let own = try builder.build(
            Endpoint<Void>.upload(.post, "reports", body: RequestBody.data(Self.text).gzipped(), headers: ["Content-Encoding": "x-gzip"]))
        let plain = try builder.build(Endpoint<Void>.upload(.post, "reports", body: .data(Self.text)))
        // Then: the header is set, a caller's own is kept, and a plain body gets none
        #expect(request.headers["Content-Encoding"] == "gzip")
        #expect(request.body?.isGzipped == true)
        #expect(own.headers.values(for: "Content-Encoding") == ["x-gzip"])
        #expect(plain.headers["Content-Encoding"] == nil)
    }

    @Test("Staging a gzipped body for its digests keeps Content-Encoding: gzip, even on a request built by hand")
    func stagedHeader() async throws {
        // Given: a request whose only sign of gzip is its body
        let request = try Self.request(body: RequestBody.data(Self.text).gzipped())
        // When
        let (prepared, staged) = try await BodyDigester.prepare(request, digests: [.md5, .sha256])
        defer { if let staged { try? FileManager.default.removeItem(at: staged) } }
        // Then: the body is now a plain file of gzip bytes, and the header says so
        let file = try #require(staged)
        let sent = try Data(contentsOf: file)
        #expect(prepared.body?.isGzipped == false)
        #expect(prepared.headers["Content-Encoding"] == "gzip")
        #expect(sent.starts(with: [0x1F, 0x8B]))
        #expect(try GzipDecompressor.decompress(sent, maximumOutputSize: Self.text.count) == Self.text)
        #expect(prepared.headers["Content-MD5"] == DigestHeaders.contentMD5(MD5.hash(sent)))
    }

    @Test("A plain body is hashed in place and gets no Content-Encoding")
    func plainBody() async throws {
        // Given
        let request = try Self.request(body: .data(Self.text))
        // When
        let (prepared, staged) = try await BodyDigester.prepare(request, digests: [.md5])
        // Then
        #expect(staged == nil)
        #expect(prepared.body == request.body)
        #expect(prepared.headers["Content-Encoding"] == nil)
        #expect(prepared.headers["Content-MD5"] == DigestHeaders.contentMD5(MD5.hash(Self.text)))
    }

    @Test("Sent through a repository with digests, a body the caller gzipped carries Content-Encoding: gzip")
    func sentThroughRepository() async throws {
        // Given: a transport that keeps the bytes it is handed (the staged file is removed after the call)
        let received = Recorder<Data>()
        let transport = StubTransport(routes: [
            StubTransport.Route(.post, "reports") { request throws(TransportError) in
                if let file = request.body?.wholeFile, let bytes = try? Data(contentsOf: file) { received.record(bytes) }
                return TransportResponse(statusCode: 204, headers: [:], body: Data(), url: request.url)
            }
        ])
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        // When
        try await repository.performRequest(
            Endpoint<Void>.upload(.post, "reports", body: RequestBody.data(Self.text).gzipped()).withContentDigests([.md5])
        ).get()
        // Then: the request sent says gzip, and its bytes are the gzip stream the digest covers
        let sent = try #require(transport.requests.first)
        let bytes = try #require(received.all.first)
        #expect(sent.headers["Content-Encoding"] == "gzip")
        #expect(try GzipDecompressor.decompress(bytes, maximumOutputSize: Self.text.count) == Self.text)
        #expect(sent.headers["Content-MD5"] == DigestHeaders.contentMD5(MD5.hash(bytes)))
    }

    @Test("Hashing a body for a cancelled call stops and fails as cancelled before it was sent, for hashed and staged bodies alike")
    func cancelled() async throws {
        // Given: a call cancelled before its digests are computed
        let plain = try Self.request(body: .data(Self.text))
        let gzipped = try Self.request(body: RequestBody.data(Self.text).gzipped())
        for request in [plain, gzipped] {
            let task = Task { () async throws -> URL? in
                withUnsafeCurrentTask { $0?.cancel() }
                return try await BodyDigester.prepare(request, digests: [.md5, .sha256]).staged
            }
            // When
            let result = await task.result
            // Then: no digests
            guard case .failure(let error) = result, case .cancelled(let context) = error as? RepositoryError else {
                Issue.record("expected a cancellation, got \(result)")
                continue
            }
            #expect(context?.attempts == 0)
        }
    }

    @Test("A stream that stalls while it is staged for its digests fails with a timeout at the request's timeout")
    func stalledStream() async throws {
        // Given: a stream that gives one chunk, then nothing, and a 0.3 s timeout
        let (chunks, continuation) = AsyncStream<Data>.makeStream()
        continuation.yield(Data("first".utf8))
        var request = try Self.request(body: .stream(chunks))
        request.timeout = 0.3
        // When
        let preparing = Task { () async -> RepositoryError? in
            do throws(RepositoryError) {
                _ = try await BodyDigester.prepare(request, digests: [.sha256])
                return nil
            } catch {
                return error
            }
        }
        // Then: within a bound, so that a wait for good fails the test rather than hang the run
        let error = await preparing.value(within: .seconds(30))
        guard case .timeout? = error ?? nil else {
            Issue.record("expected a timeout, got \(String(describing: error))")
            preparing.cancel()
            return
        }
        continuation.finish()
    }

    @Test("A file sent to its end is sent to where it ended when hashed: a file that grows meanwhile goes as its digests say")
    func growingFileIsPinned() async throws {
        // Given: a log file sent whole, with its digest
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("growing-\(UUID().uuidString).log")
        try Self.text.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let request = try Self.request(body: .file(file))
        let (prepared, staged) = try await BodyDigester.prepare(request, digests: [.sha256])
        #expect(staged == nil)
        // When it grows before the request goes out
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("one more line\n".utf8))
        try handle.close()
        // Then: the body sent holds the bytes hashed, no more
        #expect(prepared.body?.length == Int64(Self.text.count))
        var sha = SHA256()
        sha.update(buffer: Self.text.withUnsafeBytes { $0 })
        #expect(prepared.headers["Content-Digest"] == DigestHeaders.contentDigestSHA256(sha.finalize()))
    }
}

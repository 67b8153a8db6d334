import Foundation
import NetworkingTestSupport
import Synchronization
import Testing

@testable import Networking

/// Ends Ann's session and starts Bob's before the second request of a call is signed: here, the
/// second exchange of a download that starts over.
private final class SwitchOnSecondSend: Interceptor {
    let session: SessionManager<User>
    let sends = Atomic<Int>(0)

    init(session: SessionManager<User>) { self.session = session }

    var position: InterceptorPosition { .beforeSigning }

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        if sends.add(1, ordering: .relaxed).newValue == 2 {
            try? session.logout()
            try? session.login(user: bob, token: "bob-token")
        }
        return try await next(request)
    }
}

@Suite("A download that starts over keeps to its session", .timeLimit(.minutes(1)))
struct DownloadRestartSessionTests {
    /// Ann's session, a kept partial file of 4 bytes, and a server that answers its range with
    /// the wrong bytes (a restart), then with the whole file.
    private func annResuming(switching: Bool) throws -> (TestRepository, StubTransport, URL, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("restart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appendingPathComponent("file.bin")
        let files = DownloadFiles(destination: destination)
        try Data("0123".utf8).write(to: files.partial)
        let record = DownloadStateMachine.Resumption(url: "http://api.test/api/v1/file.bin", validator: "\"v1\"", total: 10)
        try JSONEncoder().encode(record).write(to: files.resumptionRecord)
        let answered = Atomic<Int>(0)
        let transport = StubTransport(routes: [
            .init(.get, "file.bin") { request throws(TransportError) in
                let body = Data("0123456789".utf8)
                if answered.add(1, ordering: .relaxed).newValue == 1 {
                    return TransportResponse(
                        statusCode: 206, headers: ["Content-Range": "bytes 0-9/10", "ETag": "\"v1\""], body: body, url: request.url)
                }
                return TransportResponse(statusCode: 200, headers: ["ETag": "\"v2\""], body: body, url: request.url)
            }
        ])
        let session = SessionManager<User>()
        try session.login(user: ann, token: "ann-token")
        let repository = TestRepository(
            configuration: try makeConfiguration(), sessionManager: session, transport: transport,
            interceptors: switching ? [SwitchOnSecondSend(session: session)] : [])
        return (repository, transport, folder, destination)
    }

    @Test("The second exchange after Bob replaced Ann is not sent with Bob's token")
    func restartAcrossSessions() async throws {
        // Given: a download whose first answer makes it start over, and a switch to Bob before the second request
        let (repository, transport, folder, destination) = try annResuming(switching: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // When: it starts over
        let result = await repository.performRequest(Endpoint<DownloadedFile>.get("file.bin").downloading(to: destination, resumable: true))
        // Then: only Ann's request went out, and the call failed as unauthenticated
        guard case .unauthenticatedSession? = result.failure else {
            Issue.record("expected unauthenticatedSession, got \(result)")
            return
        }
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer ann-token"])
    }

    @Test("Without a switch, both exchanges are Ann's and the file is whole")
    func restartInSameSession() async throws {
        let (repository, transport, folder, destination) = try annResuming(switching: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("file.bin").downloading(to: destination, resumable: true)
        ).get()
        #expect(file.size == 10 && file.resumedFrom == 0)
        #expect(try Data(contentsOf: destination) == Data("0123456789".utf8))
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer ann-token", "Bearer ann-token"])
        #expect(transport.requests.first?.headers["Range"] == "bytes=4-")
    }
}

@Suite("A download starts over only with a request that may be sent again")
struct DownloadStartOverTests {
    @Test(
        "A POST export answered 206 without a Content-Range fails with that answer, sent once; a POST the endpoint's policy sends again starts over"
    )
    func writeIsNotSentTwice() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let answered = Atomic<Int>(0)
        let transport = StubTransport(routes: [
            .init(.post, "exports") { request throws(TransportError) in
                // The first two sends (one of each call) are answered 206 without a range
                if answered.add(1, ordering: .relaxed).newValue < 3 {
                    return TransportResponse(statusCode: 206, body: Data("0123".utf8), url: request.url)
                }
                return TransportResponse(statusCode: 200, body: Data("0123456789".utf8), url: request.url)
            }
        ])
        let repository = TestRepository(configuration: try makeConfiguration(), transport: transport)
        let destination = folder.url.appendingPathComponent("export.csv")
        let export = Endpoint<DownloadedFile>.post("exports", parameters: ["format": "csv"]).downloading(to: destination)
        let result = await repository.performRequest(export)
        guard case .invalidResponse(let reason, let context)? = result.failure else {
            Issue.record("expected invalidResponse, got \(result)")
            return
        }
        #expect(reason.contains("cannot start over") && reason.contains("POST"))
        #expect(context.statusCode == 206)
        #expect(transport.requests.count == 1)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        // With POST among the endpoint's retryable methods, it starts over and completes
        let file = try await repository.performRequest(export.retrying(RetryPolicy(retryableMethods: [.get, .post]))).get()
        #expect(file.size == 10 && transport.requests.count == 3)
    }
}

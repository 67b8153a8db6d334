import Foundation
import NetworkingTestSupport
import Synchronization
import Testing

@testable import Networking

/// Downloads to files against nginx (real Range, If-Range and ETag handling of static files), the
/// test API's `/files` (cuts, ignored ranges, changing versions) and httpbin's `/range` and `/drip`.
@Suite("Downloads end to end")
struct DownloadIntegrationTests {
    struct Digest: Decodable, Sendable { let sha256: String }

    /// A fresh folder for one test's files.
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("downloads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func contents(of folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    /// On a thread of its own: hashing 10 MB in a debug build takes a second or more, which on
    /// one of the cooperative pool's two threads would hold back every other test's tasks.
    static func sha256(of file: URL) async throws -> String {
        try await onPlainThread {
            Result { SHA256.hash(Array(try Data(contentsOf: file))).map { String(format: "%02x", $0) }.joined() }
        }.get()
    }

    static func nginxSHA256(_ name: String) async throws -> String {
        let servers = try TestServers.require()
        let text = try await TestAPI.anonymous(servers.nginxURL).performRawRequest(.get("sha256.txt")).get().text
        let line = try #require(text.split(separator: "\n").first { $0.hasSuffix(name) })
        return String(line.split(separator: " ").first ?? "")
    }

    @Test("A file from nginx is streamed to its destination, checked, and nothing else is left", arguments: TransportUnderTest.all)
    func nginxFile(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL, transport: transport.shared)
        let destination = folder.appendingPathComponent("10m.bin")
        let progress = ProgressLog()
        let file = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("10m.bin").downloading(to: destination).reportingProgress { progress.record($0) }
        ).get()
        #expect(file.url == destination && file.size == 10 * 1024 * 1024 && file.resumedFrom == 0 && file.sha256 == nil)
        #expect(try Data(contentsOf: destination) == (try await repository.performRawRequest(.get("10m.bin")).get().body))
        #expect(Self.contents(of: folder) == ["10m.bin"])
        let last = try #require(progress.last)
        #expect(last.bytesReceived == Int64(10 * 1024 * 1024))
        #expect(last.totalBytesToReceive == Int64(10 * 1024 * 1024))
        let checked = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("1m.bin").downloading(
                to: folder.appendingPathComponent("1m.bin"), expectedSHA256: try await Self.nginxSHA256("1m.bin"))
        ).get()
        #expect(checked.sha256 == (try await Self.nginxSHA256("1m.bin")))
    }

    @Test(
        "A body cut midway keeps a resumable partial file; the next download asks for the rest with If-Range",
        arguments: TransportUnderTest.all)
    func resumeAfterCut(transport: TransportUnderTest) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(transport: transport.shared)
        let destination = folder.appendingPathComponent("big.bin")
        let key = UUID().uuidString
        let digest: Digest = try await repository.performRequest(.get("files/big/sha256", parameters: ["size": 1_200_000])).get()
        let path = "files/big"
        let first = await repository.performRequest(
            Endpoint<DownloadedFile>.get(path, parameters: ["size": 1_200_000, "cut_once": key, "cut_after": 400_000])
                .downloading(to: destination, resumable: true))
        guard case .noNetworkConnection(.connectionLost, _)? = first.failure else {
            Issue.record("expected a lost connection, got \(first)")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(Self.contents(of: folder) == [".big.bin.download", ".big.bin.download.json"])
        // An attempt that fails before any answer (cancelled at once, as when the app quits
        // offline) leaves the kept partial file for the next one.
        let cancelled = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await repository.performRequest(
                Endpoint<DownloadedFile>.get(path, parameters: ["size": 1_200_000, "cut_once": key, "cut_after": 400_000])
                    .downloading(to: destination, resumable: true))
        }.value
        guard case .cancelled? = cancelled.failure else {
            Issue.record("expected .cancelled, got \(cancelled)")
            return
        }
        #expect(Self.contents(of: folder) == [".big.bin.download", ".big.bin.download.json"])
        let second = try await repository.performRequest(
            Endpoint<DownloadedFile>.get(path, parameters: ["size": 1_200_000, "cut_once": key, "cut_after": 400_000])
                .downloading(to: destination, resumable: true, expectedSHA256: digest.sha256)
        ).get()
        #expect(second.statusCode == 206)
        #expect(second.resumedFrom >= 400_000)
        #expect(second.size == 1_200_000)
        #expect(try await Self.sha256(of: destination) == digest.sha256)
        #expect(Self.contents(of: folder) == ["big.bin"])
    }

    @Test(
        "A 206 longer than its Content-Range is refused at its first byte past the range: .invalidResponse with the 206, the range kept, and the next call finishes",
        arguments: TransportUnderTest.all)
    func overlongPart(transport: TransportUnderTest) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(transport: transport.shared)
        let destination = folder.appendingPathComponent("big.bin")
        let parameters: Parameters = ["size": 1_200_000, "cut_once": UUID().uuidString, "cut_after": 400_000, "overlong": 5000]
        let digest: Digest = try await repository.performRequest(.get("files/big/sha256", parameters: ["size": 1_200_000])).get()
        // Given: a partial file of 400,000 bytes
        let first = await repository.performRequest(
            Endpoint<DownloadedFile>.get("files/big", parameters: parameters).downloading(to: destination, resumable: true))
        guard case .noNetworkConnection? = first.failure else {
            Issue.record("expected a lost connection, got \(first)")
            return
        }
        // When: the rest comes as a 206 with 5,000 bytes more than its Content-Range names
        let second = await repository.performRequest(
            Endpoint<DownloadedFile>.get("files/big", parameters: parameters).downloading(to: destination, resumable: true))
        // Then: before, the file grew past its end and the call failed "incomplete: 1205000 of
        // 1200000 bytes", its kept bytes dropped at the next call
        guard case .invalidResponse(let reason, let context)? = second.failure else {
            Issue.record("expected invalidResponse, got \(second)")
            return
        }
        #expect(reason.contains("more than the 800000 bytes its head announced"), "\(reason)")
        #expect(context.statusCode == 206)
        #expect(context.response?.headers["Content-Range"] == "bytes 400000-1199999/1200000")
        let files = DownloadFiles(destination: destination)
        #expect(files.partialSize == 1_200_000)
        #expect(FileManager.default.fileExists(atPath: files.resumptionRecord.path))
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        // And: the next call finds the range whole (416) and checks it
        let third = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("files/big", parameters: parameters)
                .downloading(to: destination, resumable: true, expectedSHA256: digest.sha256)
        ).get()
        #expect(third.statusCode == 416 && third.size == 1_200_000)
    }

    @Test("A destination that is not a file URL, or is a folder, is refused before anything is sent")
    func unusableDestination() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL)
        let web = try #require(URL(string: "https://example.com/x.bin"))
        let outcomes = [
            await repository.performRequest(Endpoint<DownloadedFile>.get("1m.bin").downloading(to: web)).failure,
            await repository.performRequest(Endpoint<DownloadedFile>.get("1m.bin").downloading(to: folder)).failure,
            await repository.performRequest(
                Endpoint<DownloadedFile>.get("1m.bin").downloading(to: folder.appendingPathComponent("new/", isDirectory: true))
            ).failure,
        ]
        let reasons = outcomes.map { error -> String in
            guard case .invalidRequest(let reason, _)? = error else { return "not invalidRequest: \(String(describing: error))" }
            return reason
        }
        #expect(reasons[0] == "the destination must be a file URL (URL(fileURLWithPath:)), not a https URL", "\(reasons[0])")
        #expect(reasons[1] == "the destination \(folder.path) is a folder: name the file to write", "\(reasons[1])")
        #expect(reasons[2].hasSuffix("is a folder: name the file to write"), "\(reasons[2])")
        // Nothing was written next to them (no lock file, no partial file).
        #expect(Self.contents(of: folder).isEmpty)
    }

    @Test("A compressed answer is downloaded as the transport decodes it, whatever its Content-Length", arguments: TransportUnderTest.all)
    func compressedAnswer(transport: TransportUnderTest) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(transport: transport.shared)
        let destination = folder.appendingPathComponent("payload.json")
        // The test API compresses this answer whatever the request accepts.
        let file = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("gzip").withoutSession().downloading(to: destination, resumable: true)
        ).get()
        let contents = try Data(contentsOf: destination)
        #expect(file.size == Int64(contents.count))
        #expect(try JSONSerialization.jsonObject(with: contents) is [String: Any])
        #expect(Self.contents(of: folder) == ["payload.json"])
    }

    @Test(
        "When the file changed (If-Range no longer matches) or the server ignores the range (200), the download starts over cleanly",
        arguments: ["changed", "ignore_range"])
    func restartWhenRangeIgnoredOrChanged(afterCut: String) async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = try TestServers.configuration(servers.apiURL)
        let sent = SentHeaders()
        configuration.interceptors = [sent]
        let repository = TestAPI.Repository(configuration: configuration)
        let destination = folder.appendingPathComponent("changing.bin")
        // The same URL both times: the first answer is cut at 200,000 bytes, later ones are
        // version 2 of the file (`changed`) or ignore Range (`ignore_range`).
        let parameters: Parameters = ["size": 500_000, "cut_once": UUID().uuidString, "cut_after": 200_000, "after_cut": afterCut]
        let first = await repository.performRequest(
            Endpoint<DownloadedFile>.get("files/changing", parameters: parameters).downloading(to: destination, resumable: true))
        guard case .noNetworkConnection(.connectionLost, _)? = first.failure else {
            Issue.record("expected a lost connection, got \(first)")
            return
        }
        #expect(Self.contents(of: folder) == [".changing.bin.download", ".changing.bin.download.json"])
        let version = afterCut == "changed" ? 2 : 1
        let digest: Digest = try await repository.performRequest(
            .get("files/changing/sha256", parameters: ["size": 500_000, "version": version])
        ).get()
        let restarted = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("files/changing", parameters: parameters)
                .downloading(to: destination, resumable: true, expectedSHA256: digest.sha256)
        ).get()
        // The second call asked for the rest, conditionally, and got the whole file instead.
        let asked = try #require(sent.last)
        #expect(asked["Range"]?.hasPrefix("bytes=200000-") == true)
        #expect(asked["If-Range"] != nil)
        #expect(restarted.statusCode == 200 && restarted.resumedFrom == 0 && restarted.size == 500_000)
        #expect(try await Self.sha256(of: destination) == digest.sha256)
        #expect(Self.contents(of: folder) == ["changing.bin"])
    }

    @Test("A body cut midway without resumable leaves nothing behind", arguments: TransportUnderTest.all)
    func cutWithoutResume(transport: TransportUnderTest) async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(transport: transport.shared)
        let cut = await repository.performRequest(
            Endpoint<DownloadedFile>.get("files/cut", parameters: ["size": 300_000, "cut_after": 100_000])
                .downloading(to: folder.appendingPathComponent("cut.bin")))
        guard case .noNetworkConnection(.connectionLost, _)? = cut.failure else {
            Issue.record("expected a lost connection, got \(cut)")
            return
        }
        #expect(Self.contents(of: folder).isEmpty)
    }

    @Test(
        "A download with no time limit from a server gone silent mid-body fails with a timeout after the idle timeout, leaving nothing",
        arguments: TransportUnderTest.all)
    func silentServer(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = try TestServers.configuration(servers.faultURL)
        configuration.idleTimeout = 1
        let start = ContinuousClock.now
        let result = await TestAPI.Repository(configuration: configuration, transport: transport.shared).performRequest(
            Endpoint<DownloadedFile>(.get, "stall", timeout: .infinity).withoutSession()
                .downloading(to: folder.appendingPathComponent("stall.bin")))
        guard case .timeout? = result.failure else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        #expect(ContinuousClock.now - start < .seconds(30))
        #expect(Self.contents(of: folder).isEmpty)
    }

    /// nginx's 1m.bin, its first `count` bytes kept beside `destination` with nginx's ETag and
    /// total, as an earlier resumable download would have left them.
    static func keepNginxPartial(_ count: Int, for destination: URL) async throws -> Data {
        let servers = try TestServers.require()
        let whole = try await TestAPI.anonymous(servers.nginxURL).performRawRequest(.get("1m.bin")).get()
        let files = DownloadFiles(destination: destination)
        try whole.body.prefix(count).write(to: files.partial)
        let record = DownloadStateMachine.Resumption(
            url: servers.nginxURL + "/1m.bin", validator: try #require(whole.headers["ETag"]), total: 1_048_576)
        try JSONEncoder().encode(record).write(to: files.resumptionRecord)
        return whole.body
    }

    @Test("nginx resumes from a kept partial file: Range and If-Range with its ETag give 206")
    func nginxResume() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL)
        let destination = folder.appendingPathComponent("1m.bin")
        let whole = try await Self.keepNginxPartial(300_000, for: destination)
        let resumed = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("1m.bin").downloading(
                to: destination, resumable: true, expectedSHA256: try await Self.nginxSHA256("1m.bin"))
        ).get()
        #expect(resumed.statusCode == 206 && resumed.resumedFrom == 300_000 && resumed.size == 1_048_576)
        #expect(try Data(contentsOf: destination) == whole)
    }

    @Test(
        "The configuration's default Range and Accept-Encoding never replace a download's own, nor go with a fresh one: nginx answers the rest"
    )
    func defaultHeadersKeepTheDownloadsOwn() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = try TestServers.configuration(servers.nginxURL)
        configuration.defaultHeaders = ["Range": "bytes=0-9", "Accept-Encoding": "gzip", "X-App": "1"]
        let repository = TestAPI.Repository(configuration: configuration)
        let destination = folder.appendingPathComponent("1m.bin")
        let whole = try await Self.keepNginxPartial(300_000, for: destination)
        let resumed = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("1m.bin").downloading(to: destination, resumable: true)
        ).get()
        #expect(resumed.statusCode == 206 && resumed.resumedFrom == 300_000 && resumed.size == 1_048_576)
        #expect(try Data(contentsOf: destination) == whole)
        let fresh = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("1m.bin").downloading(to: folder.appendingPathComponent("fresh.bin"))
        ).get()
        #expect(fresh.statusCode == 200 && fresh.size == 1_048_576)
    }

    @Test("A partial or lock file that is a symbolic link (planted in a shared folder) is refused, and what it points to is left alone")
    func linksAreNotFollowed() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL)
        let destination = folder.appendingPathComponent("1m.bin")
        let files = DownloadFiles(destination: destination)
        func expectRefused(_ planted: URL) async {
            let result = await repository.performRequest(
                Endpoint<DownloadedFile>.get("1m.bin").downloading(to: destination, resumable: true))
            guard case .downloadFailed(.fileSystem, let context)? = result.failure else {
                Issue.record("expected a file-system failure for a link at \(planted.lastPathComponent), got \(result)")
                return
            }
            #expect(context.attempts == 0, "refused before anything was sent")
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
        // A kept partial file that links elsewhere: resuming would append to the other file.
        let victim = folder.appendingPathComponent("victim.txt")
        let secret = Data(repeating: UInt8(ascii: "s"), count: 300_000)
        try secret.write(to: victim)
        _ = try await Self.keepNginxPartial(300_000, for: destination)
        try FileManager.default.removeItem(at: files.partial)
        try FileManager.default.createSymbolicLink(at: files.partial, withDestinationURL: victim)
        await expectRefused(files.partial)
        #expect(try Data(contentsOf: victim) == secret, "the partial file's link was written through")
        // A hard link does the same without being a link: a file with another name is refused too.
        try FileManager.default.removeItem(at: files.partial)
        try FileManager.default.linkItem(at: victim, to: files.partial)
        await expectRefused(files.partial)
        #expect(try Data(contentsOf: victim) == secret, "the partial file's hard link was written through")
        // A lock file that links to a path that does not exist: opening it would create that file.
        try? FileManager.default.removeItem(at: files.partial)
        let target = folder.appendingPathComponent("created-through-link")
        try FileManager.default.createSymbolicLink(at: files.lockFile, withDestinationURL: target)
        await expectRefused(files.lockFile)
        #expect(!FileManager.default.fileExists(atPath: target.path), "the lock file's link was followed")
    }

    @Test("A FIFO planted at the partial file (through a link) or at its record fails the download at once: nothing waits on it")
    func plantedFIFOsDoNotBlock() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL)
        let destination = folder.appendingPathComponent("1m.bin")
        let files = DownloadFiles(destination: destination)
        let fifo = folder.appendingPathComponent("fifo")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        let checksum = try await Self.nginxSHA256("1m.bin")
        func download() async -> Result<DownloadedFile, RepositoryError>? {
            await Task {
                await repository.performRequest(
                    Endpoint<DownloadedFile>.get("1m.bin").downloading(to: destination, resumable: true, expectedSHA256: checksum))
            }.value(within: .seconds(60))
        }
        // The kept bytes are hashed before the request goes: through a link to a FIFO, that read
        // would wait for a writer forever.
        _ = try await Self.keepNginxPartial(300_000, for: destination)
        try FileManager.default.removeItem(at: files.partial)
        try FileManager.default.createSymbolicLink(at: files.partial, withDestinationURL: fifo)
        let throughLink = await download()
        guard case .downloadFailed(.fileSystem(let reason), _)?? = throughLink.map(\.failure) else {
            Issue.record("expected a prompt file-system failure, got \(String(describing: throughLink))")
            return
        }
        #expect(reason.contains(files.partial.path))
        // A FIFO where the resumption record goes: the record is not read, and the file downloads whole.
        try FileManager.default.removeItem(at: files.partial)
        try FileManager.default.removeItem(at: files.resumptionRecord)
        try #require(mkfifo(files.resumptionRecord.path, 0o600) == 0)
        let file = try #require(await download()).get()
        #expect(file.size == 1_048_576 && file.resumedFrom == 0)
    }

    @Test(
        "A downloaded file gets the permissions a new file in its folder gets, or those of the file it replaces; one to the temporary folder stays private"
    )
    func permissions() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL)
        func permissions(_ file: URL) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int)
        }
        // What any tool's new file gets here: 0666 less the umask.
        let probe = folder.appendingPathComponent("probe")
        let made = open(probe.path, O_WRONLY | O_CREAT | O_EXCL, 0o666)
        try #require(made >= 0)
        close(made)
        let usual = try permissions(probe)
        let destination = folder.appendingPathComponent("small.json")
        _ = try await repository.performRequest(Endpoint<DownloadedFile>.get("small.json").downloading(to: destination)).get()
        #expect(try permissions(destination) == usual)
        #expect(Self.contents(of: folder) == ["probe", "small.json"])
        // A file replaced keeps its own.
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: destination.path)
        _ = try await repository.performRequest(Endpoint<DownloadedFile>.get("small.json").downloading(to: destination)).get()
        #expect(try permissions(destination) == 0o640)
        let temporary = try await repository.performRequest(Endpoint<DownloadedFile>.get("small.json").downloading()).get()
        defer { try? FileManager.default.removeItem(at: temporary.url) }
        #expect(try permissions(temporary.url) == 0o600)
    }

    @Test(
        "A 206 that stops short of the file's end (a server capping its ranges) is appended, and the rest asked for, part by part, with the same If-Range"
    )
    func aShortRangeAsksForTheRest() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = try TestServers.configuration(servers.apiURL)
        let sent = SentHeaders()
        configuration.interceptors = [sent]
        let repository = TestAPI.Repository(configuration: configuration)
        let destination = folder.appendingPathComponent("capped.bin")
        let digest: Digest = try await repository.performRequest(
            .get("files/capped/sha256", parameters: ["size": 300_000, "version": 1])
        ).get()
        // A first call is cut at 100,000 bytes and keeps them; the server caps each range at 70,000 bytes.
        let parameters: Parameters = ["size": 300_000, "cut_once": UUID().uuidString, "cut_after": 100_000, "range_limit": 70_000]
        let endpoint = Endpoint<DownloadedFile>.get("files/capped", parameters: parameters)
            .downloading(to: destination, resumable: true, expectedSHA256: digest.sha256)
        let cut = await repository.performRequest(endpoint)
        #expect(cut.failure != nil)
        #expect(DownloadFiles(destination: destination).partialSize == 100_000)
        let file = try await repository.performRequest(endpoint).get()
        #expect(file.statusCode == 206 && file.resumedFrom == 100_000 && file.size == 300_000)
        #expect(try await Self.sha256(of: destination) == digest.sha256)
        let ranges = sent.all.dropFirst(2).map { $0["Range"] }
        #expect(ranges == ["bytes=100000-", "bytes=170000-", "bytes=240000-"])
        #expect(Set(sent.all.dropFirst(2).map { $0["If-Range"] }).count == 1)
        #expect(Self.contents(of: folder) == ["capped.bin"])
    }

    @Test(
        "A server capping its ranges at a few bytes gets a bounded number of requests: the call fails incomplete and keeps what came; the next goes on"
    )
    func tinyPartsAreBounded() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = TestAPI.Repository(configuration: try TestServers.configuration(servers.apiURL))
        let destination = folder.appendingPathComponent("crawl.bin")
        let parameters: Parameters = ["size": 300_000, "cut_once": UUID().uuidString, "cut_after": 100_000, "range_limit": 1000]
        let endpoint = Endpoint<DownloadedFile>.get("files/crawl", parameters: parameters)
            .downloading(to: destination, resumable: true)
        #expect(await repository.performRequest(endpoint).failure != nil)
        // 64 small parts a call.
        for kept in [164_000, 228_000] {
            let crawl = await repository.performRequest(endpoint)
            guard case .failure(.downloadFailed(.incomplete(let received, let expected), _)) = crawl else {
                Issue.record("expected an incomplete download, got \(crawl)")
                return
            }
            #expect(received == Int64(kept) && expected == 300_000)
            #expect(DownloadFiles(destination: destination).partialSize == Int64(kept))
        }
    }

    @Test("With retries on, a resumable download cut midway asks for the rest within the same call, not for the whole file again")
    func retryResumesWithinTheCall() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = TestClock(start: Date())
        var configuration = try TestServers.configuration(servers.apiURL)
        configuration.retryPolicy = .default
        configuration.clock = clock.networkingClock
        let sent = SentHeaders()
        configuration.interceptors = [sent]
        let repository = TestAPI.Repository(configuration: configuration)
        let destination = folder.appendingPathComponent("retried.bin")
        let digest: Digest = try await repository.performRequest(
            .get("files/retried/sha256", parameters: ["size": 500_000, "version": 1])
        ).get()
        // The first answer is cut at 200,000 bytes; the retry policy sends the call again.
        let parameters: Parameters = ["size": 500_000, "cut_once": UUID().uuidString, "cut_after": 200_000]
        let file = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("files/retried", parameters: parameters)
                .downloading(to: destination, resumable: true, expectedSHA256: digest.sha256)
        ).get()
        #expect(clock.sleeps.count == 1)
        #expect(sent.last?["Range"] == "bytes=200000-")
        #expect(sent.last?["If-Range"] != nil)
        #expect(file.statusCode == 206 && file.resumedFrom == 200_000 && file.size == 500_000)
        #expect(try await Self.sha256(of: destination) == digest.sha256)
        #expect(Self.contents(of: folder) == ["retried.bin"])
    }

    @Test("nginx answers 416 for a kept partial file that is whole: it is moved into place, checked, and progress says it is whole")
    func nginxAlreadyComplete() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL)
        let destination = folder.appendingPathComponent("1m.bin")
        _ = try await Self.keepNginxPartial(1_048_576, for: destination)
        let progress = ProgressLog()
        let file = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("1m.bin")
                .downloading(to: destination, resumable: true, expectedSHA256: try await Self.nginxSHA256("1m.bin"))
                .reportingProgress { progress.record($0) }
        ).get()
        #expect(file.statusCode == 416 && file.resumedFrom == 1_048_576 && file.size == 1_048_576)
        #expect(progress.last == TransferProgress(bytesReceived: 1_048_576, totalBytesToReceive: 1_048_576))
        #expect(Self.contents(of: folder) == ["1m.bin"])
    }

    @Test("A resumable download that is whole and checked but cannot be moved into place keeps its bytes for the next call")
    func failedMoveKeepsTheDownload() async throws {
        // Given: a folder put where the destination should be once the download has started (one
        // there before is refused before anything is sent); rename cannot replace it
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL)
        let destination = folder.appendingPathComponent("1m.bin")
        let endpoint = Endpoint<DownloadedFile>.get("1m.bin")
            .downloading(to: destination, resumable: true, expectedSHA256: try await Self.nginxSHA256("1m.bin"))
        var blocking = endpoint
        blocking.progress = { _ in
            try? FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
            try? Data("in the way".utf8).write(to: destination.appendingPathComponent("note.txt"))
        }
        // When: the whole file is downloaded and checked, and the move fails
        let failed = await repository.performRequest(blocking)
        guard case .downloadFailed(.fileSystem, _)? = failed.failure else {
            Issue.record("expected a file-system failure, got \(failed)")
            return
        }
        // Then: once the way is clear, the next call finds the whole file kept and asks for nothing
        // again (nginx's 416); before, the checked megabyte was deleted and downloaded again (200)
        try FileManager.default.removeItem(at: destination)
        let file = try await repository.performRequest(endpoint).get()
        #expect(file.statusCode == 416 && file.resumedFrom == 1_048_576 && file.size == 1_048_576)
        #expect(try await Self.sha256(of: destination) == (try await Self.nginxSHA256("1m.bin")))
    }

    @Test("A download an interceptor answers itself (a mock) writes that answer's body to the file")
    func interceptorAnswersDownload() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = TestAPI.Repository(
            configuration: try TestServers.configuration(servers.apiURL), interceptors: [AnswersItself(body: Data("abc".utf8))])
        let destination = folder.appendingPathComponent("mocked.txt")
        let file = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("never-sent").withoutSession().downloading(to: destination)
        ).get()
        #expect(file.size == 3)
        #expect(try Data(contentsOf: destination) == Data("abc".utf8))
    }

    @Test(
        "A 202 (not ready yet), a 204 or a 205 is not the file: the download fails and leaves what was there; a Range of the caller's is refused unsent"
    )
    func acceptedIsNotTheFile() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.httpbinURL)
        let accepted = await repository.performRequest(
            Endpoint<DownloadedFile>.get("status/202").downloading(to: folder.appendingPathComponent("export.csv")))
        guard case .invalidResponse(let reason, let context)? = accepted.failure else {
            Issue.record("expected invalidResponse, got \(accepted)")
            return
        }
        #expect(reason.contains("202") && context.statusCode == 202)
        #expect(Self.contents(of: folder).isEmpty)
        // No content is not an empty file: the one already at the destination stays.
        let report = folder.appendingPathComponent("report.csv")
        for status in [204, 205] {
            try Data("kept".utf8).write(to: report)
            let empty = await repository.performRequest(Endpoint<DownloadedFile>.get("status/\(status)").downloading(to: report))
            guard case .invalidResponse(_, let context)? = empty.failure else {
                Issue.record("expected invalidResponse for \(status), got \(empty)")
                return
            }
            #expect(context.statusCode == status)
            #expect(try Data(contentsOf: report) == Data("kept".utf8))
            #expect(Self.contents(of: folder) == ["report.csv"])
        }
        try FileManager.default.removeItem(at: report)
        let ranged = await repository.performRequest(
            Endpoint<DownloadedFile>.get("range/100", headers: ["Range": "bytes=0-9"]).downloading(to: folder.appendingPathComponent("r")))
        guard case .invalidRequest? = ranged.failure else {
            Issue.record("expected invalidRequest, got \(ranged)")
            return
        }
        #expect(Self.contents(of: folder).isEmpty)
    }

    @Test("Names near the 255 bytes a file name may have download: hidden files and temporary names are shortened")
    func longNames() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent(String(repeating: "é", count: 124) + ".json")
        let file = try await TestAPI.anonymous(servers.nginxURL).performRequest(
            Endpoint<DownloadedFile>.get("small.json").downloading(to: destination, resumable: true)
        ).get()
        #expect(file.url == destination && file.size > 0)
        #expect(Self.contents(of: folder) == [destination.lastPathComponent])
        let temporary = try await TestAPI.anonymous(servers.httpbinURL).performRequest(
            Endpoint<DownloadedFile>.get("anything/" + String(repeating: "é", count: 124) + ".json")
        ).get()
        defer { try? FileManager.default.removeItem(at: temporary.url) }
        #expect(temporary.url.lastPathComponent.utf8.count <= 255 && temporary.url.pathExtension == "json")
        let other = DownloadFiles(destination: folder.appendingPathComponent(String(repeating: "é", count: 124) + ".jsox"))
        #expect(DownloadFiles(destination: destination).partial != other.partial)
    }

    @Test(
        "maximumSize: a larger announced size fails before a byte is written, an unannounced or compressed body when it goes past; at the limit it downloads",
        arguments: TransportUnderTest.all)
    func maximumSize(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func tooLarge(_ result: Result<DownloadedFile, RepositoryError>) -> (limit: Int64, announced: Int64?)? {
            guard case .downloadFailed(.tooLarge(let limit, let announced), _)? = result.failure else { return nil }
            return (limit, announced)
        }
        let nginx = try TestAPI.anonymous(servers.nginxURL, transport: transport.shared)
        let destination = folder.appendingPathComponent("1m.bin")
        let progress = ProgressLog()
        let announced = await nginx.performRequest(
            Endpoint<DownloadedFile>.get("1m.bin").downloading(to: destination, maximumSize: 1_048_575)
                .reportingProgress { progress.record($0) })
        #expect(tooLarge(announced)?.limit == 1_048_575 && tooLarge(announced)?.announced == 1_048_576, "\(announced)")
        #expect(progress.last == nil)
        #expect(Self.contents(of: folder).isEmpty)
        let atLimit = try await nginx.performRequest(
            Endpoint<DownloadedFile>.get("1m.bin").downloading(to: destination, maximumSize: 1_048_576)
        ).get()
        #expect(atLimit.size == 1_048_576)
        // No Content-Length (chunked): the bytes past the limit fail it, none of them written.
        let streamed = try await TestAPI.anonymous(servers.httpbinURL, transport: transport.shared).performRequest(
            Endpoint<DownloadedFile>.get("stream-bytes/200000", parameters: ["chunk_size": 10_000])
                .downloading(to: folder.appendingPathComponent("stream.bin"), maximumSize: 50_000))
        #expect(tooLarge(streamed)?.limit == 50_000 && tooLarge(streamed)?.announced == nil, "\(streamed)")
        // A compressed body counts decoded: the test API's /gzip is ~2.6 KB of JSON.
        let compressed = try await TestAPI.anonymous(transport: transport.shared).performRequest(
            Endpoint<DownloadedFile>.get("gzip").withoutSession()
                .downloading(to: folder.appendingPathComponent("payload.json"), maximumSize: 1_000))
        #expect(tooLarge(compressed)?.limit == 1_000, "\(compressed)")
        #expect(Self.contents(of: folder) == ["1m.bin"])
    }

    @Test("A resumable download over maximumSize leaves its kept partial file as it was, for a call with a larger limit")
    func maximumSizeKeepsPartial() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL)
        let destination = folder.appendingPathComponent("1m.bin")
        let whole = try await Self.keepNginxPartial(300_000, for: destination)
        let refused = await repository.performRequest(
            Endpoint<DownloadedFile>.get("1m.bin").downloading(to: destination, resumable: true, maximumSize: 500_000))
        guard case .downloadFailed(.tooLarge(500_000, 1_048_576), _)? = refused.failure else {
            Issue.record("expected tooLarge, got \(refused)")
            return
        }
        #expect(try Data(contentsOf: DownloadFiles(destination: destination).partial) == whole.prefix(300_000))
        let resumed = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("1m.bin").downloading(to: destination, resumable: true, maximumSize: 2_000_000)
        ).get()
        #expect(resumed.resumedFrom == 300_000 && resumed.size == 1_048_576)
        #expect(try Data(contentsOf: destination) == whole)
        // A kept partial file that is whole already (nginx's 416) is held to the limit too.
        let other = folder.appendingPathComponent("whole.bin")
        _ = try await Self.keepNginxPartial(1_048_576, for: other)
        let complete = await repository.performRequest(
            Endpoint<DownloadedFile>.get("1m.bin").downloading(to: other, resumable: true, maximumSize: 500_000))
        guard case .downloadFailed(.tooLarge(500_000, 1_048_576), let context)? = complete.failure else {
            Issue.record("expected tooLarge, got \(complete)")
            return
        }
        #expect(context.statusCode == 416)
        #expect(!FileManager.default.fileExists(atPath: other.path))
        #expect(try Data(contentsOf: DownloadFiles(destination: other).partial).count == 1_048_576)
    }

    @Test("A checksum mismatch fails and removes everything; a 404 writes nothing")
    func checksumAndErrors() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL)
        let destination = folder.appendingPathComponent("small.json")
        let wrong = await repository.performRequest(
            Endpoint<DownloadedFile>.get("small.json").downloading(to: destination, expectedSHA256: String(repeating: "0", count: 64)))
        guard case .downloadFailed(.checksumMismatch, _)? = wrong.failure else {
            Issue.record("expected a checksum mismatch, got \(wrong)")
            return
        }
        let missing = await repository.performRequest(Endpoint<DownloadedFile>.get("missing.bin").downloading(to: destination))
        #expect(missing.failure?.statusCode == 404)
        #expect(Self.contents(of: folder).isEmpty)
    }

    @Test("An expected SHA-256 in upper case, or with spaces, set through the property, matches; one that is not hex sends nothing")
    func checksumSpelling() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL)
        let digest = try await Self.nginxSHA256("small.json")
        var endpoint = Endpoint<DownloadedFile>.get("small.json").downloading(to: folder.appendingPathComponent("small.json"))
        endpoint.downloadOptions?.expectedSHA256 = " \(digest.uppercased())\n"
        #expect(try await repository.performRequest(endpoint).get().sha256 == digest)
        endpoint.downloadOptions?.expectedSHA256 = "sha256:" + digest
        guard case .invalidRequest(let reason, _)? = await repository.performRequest(endpoint).failure else {
            Issue.record("expected invalidRequest")
            return
        }
        #expect(reason.contains("64 hexadecimal digits"))
    }

    @Test("Cancelling a download leaves no file behind, or a resumable partial file when asked", arguments: [false, true])
    func cancellation(resumable: Bool) async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A byte every 0.1 s for a minute, and time for all of it: the cancel below lands long
        // before the end even on a busy run, whose start can hold every task up for half a minute.
        let repository = try TestAPI.anonymous(servers.httpbinURL, timeout: 120)
        let destination = folder.appendingPathComponent("drip.bin")
        let started = ProgressLog()
        let call = Task {
            await repository.performRequest(
                Endpoint<DownloadedFile>.get("drip", parameters: ["numbytes": 600, "duration": 60, "delay": 0])
                    .downloading(to: destination, resumable: resumable).reportingProgress { started.record($0) })
        }
        while started.last.map({ $0.bytesReceived < 2 }) ?? true { try await Task.sleep(for: .milliseconds(20)) }
        call.cancel()
        let outcome = await call.value
        guard case .cancelled? = outcome.failure else {
            Issue.record("expected cancelled, got \(outcome)")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(Self.contents(of: folder) == (resumable ? [".drip.bin.download"] : []))
    }

    @Test(
        "Cancelled while it hashes a large kept partial file (to resume with a checksum), a download ends at once and keeps the file",
        .timeLimit(.minutes(1)))
    func cancelledWhileHashingThePartialFile() async throws {
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL)
        let destination = folder.appendingPathComponent("big.bin")
        let files = DownloadFiles(destination: destination)
        // 256 GiB of holes: no disk used, and far more than hashing does in the time allowed.
        #expect(FileManager.default.createFile(atPath: files.partial.path, contents: nil))
        let handle = try FileHandle(forWritingTo: files.partial)
        try handle.truncate(atOffset: 256 << 30)
        try handle.close()
        let record = DownloadStateMachine.Resumption(url: servers.nginxURL + "/big.bin", validator: "\"v1\"", total: nil)
        try JSONEncoder().encode(record).write(to: files.resumptionRecord)
        let call = Task {
            await repository.performRequest(
                Endpoint<DownloadedFile>.get("big.bin").downloading(
                    to: destination, resumable: true, expectedSHA256: String(repeating: "0", count: 64)))
        }
        try await Task.sleep(for: .milliseconds(200))
        let cancelled = ContinuousClock.now
        call.cancel()
        guard case .cancelled(let context?)? = await call.value.failure else {
            Issue.record("expected cancelled with the request")
            return
        }
        // Far less than hashing it all takes; loose, as a busy test run can hold the task up.
        #expect(ContinuousClock.now - cancelled < .seconds(20), "hashing stops between pieces")
        #expect(context.request.url.path == "/big.bin")
        #expect(files.partialSize == 256 << 30)
        #expect(FileManager.default.fileExists(atPath: files.resumptionRecord.path))
    }

    @Test("A second download to a destination one is writing fails at once and sends nothing; once it ends, the next may run")
    func oneDownloadPerDestination() async throws {
        // Given: a download from httpbin's /drip that takes eight seconds (the second one must
        // start while it runs, on a busy test run too)
        let servers = try TestServers.require()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.httpbinURL)
        let destination = folder.appendingPathComponent("drip.bin")
        let drip = Endpoint<DownloadedFile>.get("drip", parameters: ["numbytes": 20, "duration": 8, "delay": 0])
        let started = ProgressLog()
        let first = Task {
            await repository.performRequest(drip.downloading(to: destination, resumable: true).reportingProgress { started.record($0) })
        }
        while started.last.map({ $0.bytesReceived < 1 }) ?? true { try await Task.sleep(for: .milliseconds(20)) }
        // When: a second download to the same destination starts
        let sent = ProgressLog()
        let second = await repository.performRequest(drip.downloading(to: destination).reportingProgress { sent.record($0) })
        // Then: it fails at once, without a byte, and the first one completes untouched
        guard case .downloadFailed(.destinationInUse(let path), _)? = second.failure else {
            Issue.record("expected destinationInUse, got \(second)")
            return
        }
        #expect(path == destination.path)
        #expect(sent.last == nil)
        let file = try await first.value.get()
        #expect(file.size == 20)
        #expect(Self.contents(of: folder) == ["drip.bin"])
        // And the destination is free again
        let again = try await repository.performRequest(Endpoint<DownloadedFile>.get("range/64").downloading(to: destination)).get()
        #expect(again.size == 64)
        #expect(Self.contents(of: folder) == ["drip.bin"])
    }

    @Test("httpbin's /range answers ranges; a download without a destination lands in the temporary folder")
    func httpbinRange() async throws {
        let servers = try TestServers.require()
        let repository = try TestAPI.anonymous(servers.httpbinURL)
        let file = try await repository.performRequest(Endpoint<DownloadedFile>.get("range/2048").downloading()).get()
        defer { try? FileManager.default.removeItem(at: file.url) }
        #expect(file.size == 2048)
        #expect(file.url.deletingLastPathComponent().standardizedFileURL == FileManager.default.temporaryDirectory.standardizedFileURL)
        #expect(file.url.lastPathComponent.hasPrefix("2048."))
    }

    @Test("A saveAsResource route downloads; called as another type it is refused")
    func saveAsResourceRoute() async throws {
        let servers = try TestServers.require()
        var configuration = try TestServers.configuration(servers.nginxURL)
        configuration.routes = try RouteTable([Route(name: "blob", path: "1m.bin", requiresSession: false, saveAsResource: true)])
        let repository = TestAPI.Repository(configuration: configuration)
        let file = try await repository.performRequest(Endpoint<DownloadedFile>.route("blob")).get()
        defer { try? FileManager.default.removeItem(at: file.url) }
        #expect(file.size == 1_048_576)
        let wrong = await repository.performRawRequest(.route("blob"))
        #expect(wrong.failure?.description.contains("saves its answer to a file") == true)
    }
}

/// The header fields of the requests an interceptor saw going out, thread-safe.
final class SentHeaders: Interceptor {
    private let seen = Mutex<[HTTPHeaders]>([])
    var position: InterceptorPosition { .nextToWire }
    var last: HTTPHeaders? { seen.withLock { $0.last } }
    var all: [HTTPHeaders] { seen.withLock { $0 } }
    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        seen.withLock { $0.append(request.headers) }
        return try await next(request)
    }
}

/// Progress values seen so far, thread-safe.
final class ProgressLog: Sendable {
    private let values = Mutex<[TransferProgress]>([])
    func record(_ progress: TransferProgress) { values.withLock { $0.append(progress) } }
    var last: TransferProgress? { values.withLock { $0.last } }
}

@Suite("Streamed response bodies end to end")
struct ResponseChunksIntegrationTests {
    @Test("A body is read chunk by chunk while it arrives, head first", arguments: TransportUnderTest.all)
    func chunks(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        // Time enough for a busy run, whose start can hold every task up for half a minute.
        let repository = try TestAPI.anonymous(servers.nginxURL, transport: transport.shared, timeout: 120)
        let response = try await repository.performRequest(Endpoint<RepositoryResponse<ResponseChunks>>.get("10m.bin")).get()
        #expect(response.statusCode == 200)
        #expect(response.headers["Content-Length"] == "10485760")
        var total = 0
        var count = 0
        for try await chunk in response.value {
            total += chunk.count
            count += 1
            // A slow reader: libcurl pauses rather than buffering the whole body.
            if count % 50 == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(total == 10 * 1024 * 1024)
        #expect(count > 1)
    }

    @Test("httpbin's /drip arrives over time; a 404 fails before any chunk; a cut body throws midway")
    func dripAndFailures() async throws {
        let servers = try TestServers.require()
        let drip = try await TestAPI.anonymous(servers.httpbinURL).performRequest(
            Endpoint<ResponseChunks>.get("drip", parameters: ["numbytes": 5, "duration": 0.5, "delay": 0])
        ).get()
        var bytes = 0
        for try await chunk in drip { bytes += chunk.count }
        #expect(bytes == 5)
        let missing = await (try TestAPI.anonymous(servers.nginxURL)).performRequest(Endpoint<ResponseChunks>.get("missing.bin"))
        #expect(missing.failure?.statusCode == 404)
        let cut = try await TestAPI.anonymous(servers.faultURL).performRequest(Endpoint<ResponseChunks>.get("cut-body").withoutSession())
            .get()
        await expectConnectionLost(reading: cut)
    }

    /// Reads `stream` to its end, which must be a lost connection.
    private func expectConnectionLost(reading stream: ResponseChunks) async {
        do {
            for try await _ in stream {}
            Issue.record("a cut body must throw")
        } catch {
            guard case .noNetworkConnection(.connectionLost, _) = error else {
                Issue.record("expected connectionLost, got \(error)")
                return
            }
        }
    }

    @Test("with retries on, a streamed body cut midway fails with the lost connection at once: no retry once its reader took bytes")
    func cutBodyIsNotRetried() async throws {
        let servers = try TestServers.require()
        let clock = TestClock(start: Date())
        var configuration = try TestServers.configuration(servers.faultURL)
        configuration.retryPolicy = .default
        configuration.clock = clock.networkingClock
        let cut = try await TestAPI.Repository(configuration: configuration).performRequest(
            Endpoint<ResponseChunks>.get("cut-body").withoutSession()
        ).get()
        await expectConnectionLost(reading: cut)
        #expect(clock.sleeps.isEmpty, "the retry step waited \(clock.sleeps) to send the call again")
    }

    @Test(
        "over URLSession (which cannot pause), a reader more than maximumResponseSize (at least 4 MiB) behind ends the stream with responseTooLarge"
    )
    func unreadLimitOverURLSession() async throws {
        let servers = try TestServers.require()
        let limit = 4 * 1024 * 1024
        let stream = try await TestAPI.anonymous(servers.nginxURL, transport: URLSessionTransport(maximumResponseSize: 256 * 1024))
            .performRequest(Endpoint<ResponseChunks>.get("10m.bin").withoutSession()).get()
        // The reader lags: the 10 MiB arrive meanwhile.
        try await Task.sleep(for: .seconds(1))
        var bytes = 0
        do {
            for try await chunk in stream { bytes += chunk.count }
            Issue.record("a reader this far behind must get an error, read \(bytes) bytes")
        } catch {
            guard case .responseTooLarge(limit, _) = error else {
                Issue.record("expected responseTooLarge, got \(error)")
                return
            }
        }
        #expect(bytes <= limit)
    }

    @Test("A transport that wraps a streaming one without saying it streams gets the whole file from nginx, not an emptied one")
    func wrapperThatDoesNotStream() async throws {
        let servers = try TestServers.require()
        let folder = try DownloadIntegrationTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let repository = try TestAPI.anonymous(servers.nginxURL, transport: Forwarding(inner: TransportUnderTest.libcurl.shared))
        let file = try await repository.performRequest(
            Endpoint<DownloadedFile>.get("1m.bin").downloading(
                to: folder.appendingPathComponent("1m.bin"), expectedSHA256: try await DownloadIntegrationTests.nginxSHA256("1m.bin"))
        ).get()
        #expect(file.size == 1024 * 1024)
    }

    @Test("A streaming transport of the app's that cannot pause is held to 100 MiB unread, as URLSession is to its limit")
    func unreadLimitOfAnUnpausableTransport() async throws {
        let streamer = UnpausableStreamer(chunks: 120)
        let repository = TestAPI.Repository(configuration: try NetworkingConfiguration(baseURL: "http://localhost/v1"), transport: streamer)
        let stream = try await repository.performRequest(Endpoint<ResponseChunks>.get("log").withoutSession()).get()
        // The reader lags: everything the transport had arrives first.
        await streamer.finished.wait()
        do {
            var bytes = 0
            for try await chunk in stream { bytes += chunk.count }
            Issue.record("a reader this far behind must get an error, read \(bytes) bytes")
        } catch {
            guard case .responseTooLarge(let limit, _) = error else {
                Issue.record("expected responseTooLarge, got \(error)")
                return
            }
            #expect(limit == 100 * 1024 * 1024)
        }
    }

    @Test("a streamed call an interceptor answers itself (a mock) gives that answer's body to the reader")
    func interceptorAnswersStreamedCall() async throws {
        let servers = try TestServers.require()
        let repository = TestAPI.Repository(
            configuration: try TestServers.configuration(servers.apiURL), interceptors: [AnswersItself(body: Data("abc".utf8))])
        let stream = try await repository.performRequest(Endpoint<ResponseChunks>.get("never-sent").withoutSession()).get()
        var body = Data()
        for try await chunk in stream { body += chunk }
        #expect(body == Data("abc".utf8))
    }

    @Test("Cancelling the reading task cancels the transfer and ends the read with cancelled")
    func readerCancellation() async throws {
        let servers = try TestServers.require()
        let stream = try await TestAPI.anonymous(servers.httpbinURL).performRequest(
            Endpoint<ResponseChunks>.get("drip", parameters: ["numbytes": 100, "duration": 30, "delay": 0]).withoutSession()
        ).get()
        let start = ContinuousClock.now
        let reader = Task { () async -> RepositoryError? in
            do throws(RepositoryError) {
                for try await _ in stream {}
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        reader.cancel()
        guard case .cancelled? = await reader.value else {
            Issue.record("expected cancelled")
            return
        }
        // Not the 30 seconds the server would take to finish.
        #expect(ContinuousClock.now - start < .seconds(20))
    }

    @Test("Dropping the sequence cancels the transfer")
    func dropCancels() async throws {
        let servers = try TestServers.require()
        let activity = NetworkActivity()
        var configuration = try TestServers.configuration(servers.httpbinURL)
        configuration.activity = activity
        let repository = TestAPI.Repository(configuration: configuration)
        var stream: ResponseChunks? = try await repository.performRequest(
            Endpoint<ResponseChunks>.get("drip", parameters: ["numbytes": 100, "duration": 30, "delay": 0]).withoutSession()
        ).get()
        var iterator = stream?.makeAsyncIterator()
        _ = try await iterator?.next()
        #expect(activity.inFlight == 1, "the transfer is still running")
        iterator = nil
        stream = nil
        _ = stream
        for _ in 0..<3000 where activity.inFlight > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(activity.inFlight == 0)
    }
}

/// Answers every call itself with a 200 and `body`, without the transport.
/// Forwards to another transport and leaves `streamsBodies` at its default, as an app's
/// logging wrapper might.
private struct Forwarding: Transport {
    let inner: any Transport

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        try await inner.send(request)
    }
}

/// Streams `chunks` MiB to the request's sink at once, without pausing, before it returns;
/// `finished` opens when it has handed them over or was refused.
private struct UnpausableStreamer: Transport {
    let chunks: Int
    let finished = Gate()
    var streamsBodies: Bool { true }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        guard let sink = request.responseBodySink, sink.begin(ResponseHead(statusCode: 200, url: request.url), canPause: false, resume: {})
        else { return TransportResponse(statusCode: 200, url: request.url) }
        defer { finished.open() }
        let chunk = [UInt8](repeating: 0x61, count: 1024 * 1024)
        for _ in 0..<chunks {
            if let failure = chunk.withUnsafeBytes({ sink.receive($0) }).failureWithoutPause { throw failure }
        }
        return TransportResponse(statusCode: 200, url: request.url)
    }
}

private struct AnswersItself: Interceptor {
    let body: Data

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        TransportResponse(statusCode: 200, body: body, url: request.url)
    }
}

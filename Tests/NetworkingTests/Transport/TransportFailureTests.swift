import Foundation
import Testing

@testable import Networking

/// How every transport fails: timeouts, cancellation, unreachable servers, and servers that
/// misbehave (the fault server). Each failure is a distinct, clear ``TransportError``; none hangs
/// (bounds are generous and only prove that the call returned).
@Suite("Transport failures", .timeLimit(.minutes(2)))
struct TransportFailureTests {
    /// Far beyond the timeouts these tests expect to end a call (a few seconds at most), below the
    /// 60 s ones they expect never to reach: only a hang exceeds it, not a busy machine that held
    /// the tests back for a while (a 16 s stall of the whole process has been seen).
    static let noHang: Duration = .seconds(45)

    @Test(
        "A timeout of any size, even infinite, is a valid request, not a crash",
        arguments: TransportUnderTest.all, [TimeInterval.infinity, 1e300, .greatestFiniteMagnitude])
    func unboundedTimeout(transport: TransportUnderTest, timeout: TimeInterval) async throws {
        let servers = try TestServers.require()
        let result = await Wire.send(try Wire.request(servers.apiURL + "/health", timeout: timeout), over: transport.shared)
        #expect(try result.get().statusCode == 200)
    }

    @Test(
        "A timeout or idle timeout under a second is honoured, not taken as none left (FoundationNetworking counts whole seconds)",
        arguments: TransportUnderTest.all)
    func subSecondTimeouts(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        // The test API answers in a few milliseconds. A timeout taken as none left fails every
        // time; a machine busy enough to miss 0.9 s once (the whole suite starts at the same
        // moment) gets a few more tries.
        func succeeds(_ request: TransportRequest) async -> Bool {
            for _ in 0..<5 where (try? await Wire.send(request, over: transport.shared).get().statusCode) == 200 {
                return true
            }
            return false
        }
        #expect(await succeeds(try Wire.request(servers.apiURL + "/slow?seconds=0.05", timeout: 0.9)))
        var idle = try Wire.request(servers.apiURL + "/slow?seconds=0.05", timeout: 20)
        idle.idleTimeout = 0.9
        #expect(await succeeds(idle))
        // And a sub-second timeout still ends a slow answer
        let start = ContinuousClock.now
        let slow = await Wire.send(try Wire.request(servers.apiURL + "/slow?seconds=6", timeout: 0.5), over: transport.shared)
        #expect(slow.failure == .timedOut)
        #expect(ContinuousClock.now - start < Self.noHang)
    }

    @Test("A timeout at or below zero, -infinity included, has passed: nothing is sent", arguments: TransportUnderTest.all)
    func timeoutAlreadyPassed(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        for timeout in [0, -1, -TimeInterval.infinity] {
            let start = ContinuousClock.now
            let result = await Wire.send(try Wire.request(servers.apiURL + "/slow?seconds=6", timeout: timeout), over: transport.shared)
            #expect(result.failure == .timedOut, "\(timeout)")
            #expect(ContinuousClock.now - start < Self.noHang)
        }
    }

    @Test("A slow response fails with timedOut after the request's timeout", arguments: TransportUnderTest.all)
    func slowResponseTimesOut(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let start = ContinuousClock.now
        let result = await Wire.send(try Wire.request(servers.apiURL + "/slow?seconds=6", timeout: 1), over: transport.shared)
        #expect(result.failure == .timedOut)
        #expect(ContinuousClock.now - start < Self.noHang)
    }

    @Test(
        "A server that never answers, or answers one byte at a time, times out", arguments: TransportUnderTest.all,
        ["/hang", "/slow-headers"])
    func silentServerTimesOut(transport: TransportUnderTest, path: String) async throws {
        let servers = try TestServers.require()
        let start = ContinuousClock.now
        let result = await Wire.send(try Wire.request(servers.faultURL + path, timeout: 1), over: transport.shared)
        #expect(result.failure == .timedOut)
        #expect(ContinuousClock.now - start < Self.noHang)
    }

    @Test(
        "With no time limit, an idle timeout ends an exchange whose server goes silent mid-body or never answers",
        arguments: TransportUnderTest.all, ["/stall", "/hang"])
    func idleTimeout(transport: TransportUnderTest, path: String) async throws {
        let servers = try TestServers.require()
        var request = try Wire.request(servers.faultURL + path, timeout: .infinity)
        request.idleTimeout = 1
        let start = ContinuousClock.now
        let result = await Wire.send(request, over: transport.shared)
        #expect(result.failure == .timedOut)
        #expect(ContinuousClock.now - start < Self.noHang)
    }

    @Test("An idle timeout is no time limit: a body that keeps coming arrives whole", arguments: TransportUnderTest.all)
    func idleTimeoutIsNotATimeLimit(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        // Sixteen bytes over eight seconds, one every half second: more than twice the idle timeout in all.
        var request = try Wire.request(servers.httpbinURL + "/drip?duration=8&numbytes=16&delay=0", timeout: .infinity)
        request.idleTimeout = 3
        let response = try await Wire.response(request, over: transport.shared)
        #expect(response.statusCode == 200)
        #expect(response.body.count == 16)
    }

    @Test("An idle timeout that is not positive is refused before sending", arguments: TransportUnderTest.all, [0, -1, .nan])
    func invalidIdleTimeout(transport: TransportUnderTest, seconds: TimeInterval) async throws {
        var request = try Wire.request("http://127.0.0.1:1/")
        request.idleTimeout = seconds
        guard case .failure(.invalidRequest(let reason)) = await Wire.send(request, over: transport.shared) else {
            Issue.record("expected invalidRequest")
            return
        }
        #expect(reason.contains("idle timeout"))
    }

    @Test("Cancelling the task aborts a transfer in flight", arguments: TransportUnderTest.all)
    func cancellationDuringTransfer(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let request = try Wire.request(servers.faultURL + "/hang", timeout: 60)
        let start = ContinuousClock.now
        let task = Task { await Wire.send(request, over: transport.shared) }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        let result = await task.value
        #expect(result.failure == .cancelled)
        #expect(ContinuousClock.now - start < Self.noHang)
    }

    @Test("A task cancelled before sending fails at once with cancelled", arguments: TransportUnderTest.all)
    func cancellationBeforeSending(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let request = try Wire.request(servers.faultURL + "/hang", timeout: 60)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await Wire.send(request, over: transport.shared)
        }
        #expect(await task.value.failure == .cancelled)
    }

    @Test("Cancellations racing completions always end each call exactly once", arguments: TransportUnderTest.all)
    func cancellationRacingCompletion(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let request = try Wire.request(servers.apiURL + "/health", timeout: 30)
        let results = await withTaskGroup(of: Result<TransportResponse, TransportError>.self) { group in
            for index in 0..<60 {
                let task = Task { await Wire.send(request, over: transport.shared) }
                group.addTask {
                    if index % 3 != 0 { try? await Task.sleep(for: .microseconds(index * 50)) }
                    task.cancel()
                    return await task.value
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 60)
        for result in results {
            switch result {
            case .success(let response): #expect(response.statusCode == 200)
            case .failure(let error): #expect(error == .cancelled)
            }
        }
        // The transport is still healthy.
        #expect(try await Wire.response(request, over: transport.shared).statusCode == 200)
    }

    @Test("A closed port is connectionRefused", arguments: TransportUnderTest.all)
    func connectionRefused(transport: TransportUnderTest) async throws {
        let result = await Wire.send(try Wire.request("http://127.0.0.1:1/", timeout: 10), over: transport.shared)
        #expect(result.failure == .network(.connectionRefused))
    }

    @Test("An unknown host is hostNotFound", arguments: TransportUnderTest.all)
    func unknownHost(transport: TransportUnderTest) async throws {
        let result = await Wire.send(try Wire.request("http://no-such-host.invalid/", timeout: 10), over: transport.shared)
        #expect(result.failure == .network(.hostNotFound))
    }

    @Test(
        "A connection dropped mid-body or closed without a reply is connectionLost",
        arguments: TransportUnderTest.all, ["api:/drop", "fault:/partial", "fault:/close"])
    func droppedConnection(transport: TransportUnderTest, target: String) async throws {
        let servers = try TestServers.require()
        let parts = target.split(separator: ":", maxSplits: 1).map(String.init)
        let base = parts[0] == "api" ? servers.apiURL : servers.faultURL
        let result = await Wire.send(try Wire.request(base + parts[1], timeout: 10), over: transport.shared)
        #expect(result.failure == .network(.connectionLost))
    }

    @Test("An answer that is not HTTP is invalidResponse", arguments: TransportUnderTest.all, ["/garbage", "/bad-status"])
    func garbage(transport: TransportUnderTest, path: String) async throws {
        let servers = try TestServers.require()
        let result = await Wire.send(try Wire.request(servers.faultURL + path, timeout: 10), over: transport.shared)
        guard case .failure(.invalidResponse(let reason)) = result else {
            Issue.record("expected invalidResponse, got \(result)")
            return
        }
        #expect(!reason.isEmpty)
    }

    /// Not run against URLSession on Linux: FoundationNetworking cannot refuse a body by its
    /// Content-Length (it ignores the response disposition), and a body streamed at loopback
    /// speed keeps its process-wide work queue busy for tens of seconds after the cancellation,
    /// stalling every other URLSession call in the process (`dataTask(with:)`, `resume()` and
    /// `cancel()` wait for that queue). Its size limit is covered by the bounded cases below.
    @Test("A 10 GiB body fails with responseTooLarge at the default limit", arguments: TransportUnderTest.withoutFloodStall)
    func hugeBody(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let result = await Wire.send(try Wire.request(servers.faultURL + "/huge", timeout: 60), over: transport.make())
        #expect(result.failure == .responseTooLarge(limit: 100 * 1024 * 1024))
    }

    @Test("maximumResponseSize is enforced with and without Content-Length", arguments: TransportUnderTest.all)
    func responseSizeLimit(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let limited = transport.make(maximumResponseSize: 50_000)
        let atLimit = await Wire.send(try Wire.request(servers.apiURL + "/bytes/50000"), over: limited)
        #expect((try? atLimit.get())?.body.count == 50_000)
        let announced = await Wire.send(try Wire.request(servers.apiURL + "/bytes/50001"), over: limited)
        #expect(announced.failure == .responseTooLarge(limit: 50_000))
        let chunked = await Wire.send(try Wire.request(servers.httpbinURL + "/stream-bytes/200000?chunk_size=4096"), over: limited)
        #expect(chunked.failure == .responseTooLarge(limit: 50_000))
    }
}

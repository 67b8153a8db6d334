#if os(Linux) && canImport(CCurl)
    import Foundation
    import Networking
    import Synchronization
    import Testing

    /// When a call is cancelled after it was started.
    private enum CancelMoment: Sendable, CustomStringConvertible {
        /// Before the task has had a chance to run.
        case immediately
        /// After giving way to other tasks this many times.
        case afterYields(Int)
        /// After sleeping this long.
        case after(Duration)

        /// A moment from every kind, chosen by `index` and a random draw.
        static func pick(_ index: Int) -> CancelMoment {
            switch index % 5 {
            case 0: .immediately
            case 1: .afterYields(1)
            case 2: .afterYields(Int.random(in: 2...20))
            default: .after(.microseconds(Int.random(in: 0...3000)))
            }
        }

        var description: String {
            switch self {
            case .immediately: "immediately"
            case .afterYields(let count): "after \(count) yields"
            case .after(let duration): "after \(duration)"
            }
        }
    }

    /// How long a cancelled call took.
    private struct Timing {
        /// From the start of the call to its end.
        var total: Duration
        /// From the cancellation to the end of the call.
        var afterCancel: Duration
        /// When it was cancelled and when it ended.
        var cancelledAt: ContinuousClock.Instant
        var end: ContinuousClock.Instant
    }

    /// A heartbeat in Swift's cooperative pool (two threads here, shared with the whole test run):
    /// it wakes every 10 ms and keeps each time it woke 200 ms or more late. A call that ended late
    /// while the pool itself was stalled (another test's synchronous work on both threads) measured
    /// the pool, not the transport; ``stalled(from:to:)`` says how much of a span was such a stall,
    /// asked once the heartbeat has stopped (its last wake-up closes the last stall).
    private final class PoolWatch: Sendable {
        private let stalls = Mutex<[Range<ContinuousClock.Instant>]>([])
        private let task = Mutex<Task<Void, Never>?>(nil)

        func start() {
            let beat = Task { [self] in
                while !Task.isCancelled {
                    let asleep = ContinuousClock.now
                    try? await Task.sleep(for: .milliseconds(10))
                    let woke = ContinuousClock.now
                    if woke - asleep >= .milliseconds(200) { self.stalls.withLock { $0.append(asleep..<woke) } }
                }
            }
            task.withLock { $0 = beat }
        }

        /// Stops the heartbeat and waits for its last wake-up.
        func stop() async {
            let beat = task.withLock { $0 }
            beat?.cancel()
            await beat?.value
        }

        /// How much of `start..<end` the pool spent stalled.
        func stalled(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> Duration {
            stalls.withLock { stalls in
                stalls.reduce(Duration.zero) { sum, stall in
                    let from = max(stall.lowerBound, start)
                    let to = min(stall.upperBound, end)
                    return from < to ? sum + (to - from) : sum
                }
            }
        }
    }

    /// Starts `operation` in a task, cancels it at `moment`, and returns its outcome and timing.
    private func cancel<Outcome: Sendable>(
        at moment: CancelMoment, _ operation: @escaping @Sendable () async -> Outcome
    ) async -> (Outcome, Timing) {
        let start = ContinuousClock.now
        let task = Task { await operation() }
        switch moment {
        case .immediately: break
        case .afterYields(let count): for _ in 0..<count { await Task.yield() }
        case .after(let duration): try? await Task.sleep(for: duration)
        }
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let outcome = await task.value
        let end = ContinuousClock.now
        return (outcome, Timing(total: end - start, afterCancel: end - cancelledAt, cancelledAt: cancelledAt, end: end))
    }

    /// Runs `iterations` cancellations spread over `lanes` concurrent lanes; returns a line for
    /// each call whose outcome `accept` refuses, that ended 2 seconds or more after its
    /// cancellation, or that took 10 seconds or more in all (a third of its 30 s timeout). The
    /// wait before cancelling is the test's own (yields on a busy machine can take a while), so
    /// the strict bound applies from the cancellation on, less the time the cooperative pool
    /// itself was stalled then (``PoolWatch``); the 10 s bound excuses nothing.
    private func cancelMany<Outcome: Sendable>(
        iterations: Int, lanes: Int, _ operation: @escaping @Sendable () async -> Outcome,
        accept: @escaping @Sendable (Outcome) -> Bool
    ) async -> [String] {
        await settledPool()
        let watch = PoolWatch()
        watch.start()
        let ended = await withTaskGroup(of: [(index: Int, moment: CancelMoment, outcome: Outcome, timing: Timing)].self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    var ended: [(index: Int, moment: CancelMoment, outcome: Outcome, timing: Timing)] = []
                    for index in stride(from: lane, to: iterations, by: lanes) {
                        let moment = CancelMoment.pick(index)
                        let (outcome, timing) = await cancel(at: moment, operation)
                        ended.append((index, moment, outcome, timing))
                    }
                    return ended
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        await watch.stop()
        var problems: [String] = []
        for (index, moment, outcome, timing) in ended {
            if !accept(outcome) { problems.append("#\(index) cancelled \(moment): \(outcome)") }
            let stalled = watch.stalled(from: timing.cancelledAt, to: timing.end)
            if timing.afterCancel - stalled >= .seconds(2) || timing.total >= .seconds(10) {
                problems.append(
                    "#\(index) cancelled \(moment) ended \(timing.afterCancel) later (the pool stalled \(stalled) of it), \(timing.total) in all"
                )
            }
        }
        return problems
    }

    /// Cancelling libcurl calls at random moments: each ends once, as cancelled, at once.
    @Suite("LibcurlTransport cancelled at random moments", .serialized, .timeLimit(.minutes(1)))
    struct LibcurlCancellationTests {
        @Test("300 calls to a server that never answers, cancelled within 0–3 ms, all end as .cancelled in well under their 30 s timeout")
        func hangingServer() async throws {
            // Given
            let servers = try TestServers.require()
            let transport = LibcurlTransport()
            let request = try Wire.request(servers.faultURL + "/hang", timeout: 30)
            // When
            let problems = await cancelMany(
                iterations: 300, lanes: 4, { await Wire.send(request, over: transport) },
                accept: {
                    $0.failure == .cancelled
                })
            // Then
            #expect(problems.isEmpty, "\(problems.count) calls: \(problems.prefix(10))")
            let health = try Wire.request(servers.apiURL + "/health", timeout: 10)
            #expect(try await Wire.response(health, over: transport).statusCode == 200, "the transport still serves")
        }

        @Test("The same through a repository on the default transport: every call is RepositoryError.cancelled")
        func hangingServerThroughRepository() async throws {
            // Given
            let servers = try TestServers.require()
            let repository = TestAPI.Repository(configuration: try TestServers.configuration(servers.faultURL, timeout: 30))
            #expect(repository.transport is LibcurlTransport)
            // When
            let problems = await cancelMany(
                iterations: 100, lanes: 4, { await repository.performRequest(Endpoint<Void>.get("hang").withoutSession()) },
                accept: { result in
                    guard case .cancelled? = result.failure else { return false }
                    return true
                })
            // Then
            #expect(problems.isEmpty, "\(problems.count) calls: \(problems.prefix(10))")
        }

        @Test("Against a fast endpoint each call either succeeds or is cancelled, never times out")
        func fastEndpoint() async throws {
            // Given
            let servers = try TestServers.require()
            let transport = LibcurlTransport()
            let request = try Wire.request(servers.apiURL + "/health", timeout: 30)
            // When
            let problems = await cancelMany(
                iterations: 60, lanes: 3, { await Wire.send(request, over: transport) },
                accept: { result in
                    switch result {
                    case .success(let response): response.statusCode == 200
                    case .failure(let error): error == .cancelled
                    }
                })
            // Then
            #expect(problems.isEmpty, "\(problems.count) calls: \(problems.prefix(10))")
            #expect(try await Wire.response(request, over: transport).statusCode == 200, "the transport still serves")
        }

        @Test("Against a fast endpoint through a repository: success or .cancelled, never a timeout")
        func fastEndpointThroughRepository() async throws {
            // Given
            let repository = try TestAPI.anonymous(timeout: 30)
            // When
            let problems = await cancelMany(
                iterations: 60, lanes: 3, { await repository.performRequest(Endpoint<Void>.get("health").withoutSession()) },
                accept: { result in
                    switch result {
                    case .success: true
                    case .failure(.cancelled): true
                    case .failure: false
                    }
                })
            // Then
            #expect(problems.isEmpty, "\(problems.count) calls: \(problems.prefix(10))")
        }
    }
#endif

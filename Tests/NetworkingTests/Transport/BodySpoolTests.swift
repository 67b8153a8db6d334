import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

@Suite("Body spool")
struct BodySpoolTests {
    @Test("Cancelling while a stream has nothing to give stops the staging at once")
    func cancelWhileTheStreamWaits() async throws {
        let (chunks, producer) = AsyncStream<Data>.makeStream()
        defer { producer.finish() }
        let staging = Task { () async -> TransportError? in
            do throws(TransportError) {
                let file = try await BodySpool.spool(.stream(chunks))
                try? FileManager.default.removeItem(at: file)
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        staging.cancel()
        #expect(await staging.value(within: .seconds(60)) == .some(.cancelled))
    }

    @Test("A stream that stalls after its first chunk fails with timedOut at the deadline, also over URLSessionTransport")
    func stallTimesOut() async throws {
        let (chunks, producer) = AsyncStream<Data>.makeStream()
        producer.yield(Data("first".utf8))
        defer { producer.finish() }
        let staging = Task { () async -> TransportError? in
            do throws(TransportError) {
                let file = try await BodySpool.spool(.stream(chunks), deadline: .now + .milliseconds(300))
                try? FileManager.default.removeItem(at: file)
                return nil
            } catch {
                return error
            }
        }
        #expect(await staging.value(within: .seconds(60)) == .some(.timedOut))

        #expect(try await Self.sendStalling(timeout: 0.3, idleTimeout: nil) == .some(.timedOut))
    }

    /// A stream of `chunks` five-byte chunks, one every 0.25 s, produced on a thread of its own: a
    /// busy task pool must not make the stream's gaps longer.
    static func trickle(chunks: Int) -> AsyncStream<Data> {
        let (stream, producer) = AsyncStream<Data>.makeStream()
        Thread.detachNewThread {
            for _ in 0..<chunks {
                producer.yield(Data("chunk".utf8))
                Thread.sleep(forTimeInterval: 0.25)
            }
            producer.finish()
        }
        return stream
    }

    /// What URLSessionTransport's send fails with (within 30 s: a loaded machine runs its checks late) for a body stream that stalls
    /// after its first chunk.
    static func sendStalling(timeout: TimeInterval, idleTimeout: TimeInterval?) async throws -> TransportError?? {
        let (stalled, stalledProducer) = AsyncStream<Data>.makeStream()
        stalledProducer.yield(Data("first".utf8))
        defer { stalledProducer.finish() }
        var request = TransportRequest(
            method: .post, url: try #require(URL(string: "http://127.0.0.1:9/upload")), body: .stream(stalled), timeout: timeout)
        request.idleTimeout = idleTimeout
        let sending = Task { () async -> TransportError? in
            do throws(TransportError) {
                _ = try await URLSessionTransport.shared.send(request)
                return nil
            } catch {
                return error
            }
        }
        return await sending.value(within: .seconds(30))
    }

    @Test("With no time limit, a stream that gives nothing for the idle timeout fails with timedOut; one that trickles does not")
    func idleStreamTimesOut() async throws {
        #expect(try await Self.sendStalling(timeout: .infinity, idleTimeout: 0.5) == .some(.timedOut))

        // A chunk every 0.25 s for 6 s, longer than the idle timeout: never idle for 4 s (a wide
        // margin: the stream's pump is a task, which a busy pool may run late).
        let trickle = Self.trickle(chunks: 24)
        let staging = Task { () async throws(TransportError) -> Int in
            let file = try await BodySpool.spool(.stream(trickle), idleTimeout: 4)
            defer { try? FileManager.default.removeItem(at: file) }
            return (try? Data(contentsOf: file).count) ?? -1
        }
        #expect(try await staging.value == 120)
    }

    @Test("A gzipped stream that trickles is not idle: what it gave so far is compressed and staged at each pause")
    func gzippedTrickleIsNotIdle() async throws {
        // A chunk every 0.25 s for 4 s, longer than the idle timeout; zlib alone would hold it all
        // back until the end, and the stream would look silent (it is flushed at most once a second).
        let trickle = Self.trickle(chunks: 16)
        let staging = Task { () async throws(TransportError) -> Data in
            let file = try await BodySpool.spool(RequestBody.stream(trickle).gzipped(), idleTimeout: 3)
            defer { try? FileManager.default.removeItem(at: file) }
            return (try? Data(contentsOf: file)) ?? Data()
        }
        let staged = try await staging.value
        #expect(try GzipDecompressor.decompress(staged, maximumOutputSize: 1024) == Data(String(repeating: "chunk", count: 16).utf8))
    }
}

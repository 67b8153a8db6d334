import Foundation
import Synchronization

/// Writes a request body that a transport cannot stream by itself (URLSession on Linux: forms,
/// parts of files, compressed bodies, streams) to a temporary file, piece by piece, so that it is
/// uploaded from disk rather than memory.
enum BodySpool {
    /// The temporary file holding the body's bytes; the caller removes it.
    ///
    /// - Throws: ``TransportError/invalidRequest(_:)`` when the body cannot be read or written,
    ///   ``TransportError/cancelled`` when the task is cancelled meanwhile,
    ///   ``TransportError/timedOut`` when `deadline` passes first, or a stream gives nothing for
    ///   `idleTimeout` seconds (the request's: with no time limit, the deadline never comes).
    static func spool(
        _ body: RequestBody, deadline: ContinuousClock.Instant? = nil, idleTimeout: TimeInterval? = nil,
        observing observe: (UnsafeRawBufferPointer) -> Void = { _ in }
    ) async throws(TransportError) -> URL {
        let signal = ReadableSignal()
        let reader = try BodyReader(body) { signal.fire() }
        defer { reader.close() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("networking-body-\(UUID().uuidString)")
        // Created private (0600) by the one call that opens it: never readable by others for a
        // moment, as a file created first and restricted after would be.
        let descriptor = POSIX.open(file.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .invalidRequest("the body could not be staged in \(file.path) for upload: \(POSIX.lastError)")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        let idle = idleTimeout.map { Duration.clampedSeconds($0) }
        var lastBytes = ContinuousClock.now
        var closed = false
        do {
            defer { if !closed { try? handle.close() } }
            while true {
                if Task.isCancelled { throw TransportError.cancelled }
                if let deadline, ContinuousClock.now >= deadline { throw TransportError.timedOut }
                switch buffer.withUnsafeMutableBytes({ reader.read(into: $0) }) {
                case .bytes(let count):
                    lastBytes = ContinuousClock.now
                    buffer.withUnsafeBytes { observe(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                    try handle.write(contentsOf: buffer[0..<count])
                case .end:
                    // A write that fails late fails the close: never upload a short file.
                    closed = true
                    try handle.close()
                    return file
                case .wouldBlock:
                    // Judged only when the stream has nothing: a task of ours scheduled late must
                    // not count as the stream's silence.
                    if let idle, ContinuousClock.now >= lastBytes + idle { throw TransportError.timedOut }
                    // A stream with nothing yet: cancelling, the deadline or the idle timeout wakes
                    // the wait, and the loop throws.
                    let wake = [deadline, idle.map { lastBytes + $0 }].compactMap { $0 }.min()
                    let timer = wake.map { DeadlineTimer(after: ContinuousClock.now.duration(to: $0).seconds) { signal.fire() } }
                    await withTaskCancellationHandler {
                        await signal.wait()
                    } onCancel: {
                        signal.fire()
                    }
                    timer?.cancel()
                case .failed(let error):
                    throw error
                }
            }
        } catch {
            try? FileManager.default.removeItem(at: file)
            if let error = error as? TransportError { throw error }
            throw .invalidRequest("the body could not be staged for upload: \(error.localizedDescription.clause)")
        }
    }
}

/// Wakes an asynchronous reader when a stream has bytes again; a fire before the wait is kept.
final class ReadableSignal: Sendable {
    private let state = Mutex<(fired: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func fire() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.fired = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.fired {
                    state.fired = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

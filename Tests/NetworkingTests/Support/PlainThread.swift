import Foundation

/// Runs `body` on a new thread that is not part of Swift concurrency, and returns its result: a
/// blocking wait (a semaphore, a child process, a blocking call) then never holds one of the
/// cooperative pool's few threads, which would delay every other test's timers and tasks.
func onPlainThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}

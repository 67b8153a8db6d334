import Foundation

/// Runs `body` on a new thread that is not part of Swift concurrency, and returns its result: a
/// blocking wait (a semaphore, a child process, a blocking call) then never holds one of the
/// cooperative pool's few threads, which would delay every other test's timers and tasks.
///
/// Long computations (a megabyte through a parser, thousands of cookies) go here too: a test
/// function runs on that pool, and on a 2-core machine two of them computing for seconds stop
/// every other test's awaits for as long, until timeouts meant for a hung server fire.
func onPlainThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}

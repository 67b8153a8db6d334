import Foundation

/// Runs `body` on a new thread that is not part of Swift concurrency, and returns its result: a
/// blocking wait (a semaphore, a child process, a blocking call) then never holds one of the
/// cooperative pool's few threads, which would delay every other test's timers and tasks.
///
/// Long computations (a megabyte through a parser, thousands of cookies) go here too: a test
/// function runs on that pool, and on a 2-core machine two of them computing for seconds stop
/// every other test's awaits for as long, until timeouts meant for a hung server fire.
///
/// With `stackSize`, the thread has that many bytes of stack (a test of deep input then shows
/// that it fits the 512 KiB of a thread of Swift's cooperative pool on Apple platforms).
func onPlainThread<T: Sendable>(stackSize: Int? = nil, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }
}

#if os(Linux) && canImport(CCurl)
    import CCurl
    import Foundation
    import Synchronization

    /// One thread that drives every transfer of a ``LibcurlTransport`` through one libcurl multi
    /// handle: `curl_multi_perform`, then `curl_multi_poll` until a socket, a timer or
    /// `curl_multi_wakeup` needs it.
    ///
    /// Callers never touch libcurl: they put transfers and cancellations in the inbox (a mutex)
    /// and wake the thread only when it sleeps in `curl_multi_poll`. The thread sets up pooled
    /// easy handles (reset with `curl_easy_reset` between transfers, except that a plain GET's
    /// handle keeps the options every plain GET sets alike; downloads take a new one), and
    /// the multi handle's connection cache reuses connections. When the transport is used one
    /// request at a time against a fast peer, the thread spins briefly instead of sleeping
    /// (``LibcurlSpinPolicy``).
    /// The loop is also a `TaskExecutor` (``LibcurlTransport/taskExecutor``): jobs of tasks that
    /// prefer it go through the inbox too and run at the top of each pass, outside the lock.
    /// ``shutdown()`` stops the thread: transfers still running or waiting end with
    /// ``TransportError/cancelled``, and later ones are refused the same way; jobs then run on
    /// Dispatch's global queue.
    ///
    /// Thread-safety (hence `@unchecked Sendable`): the inbox is behind a mutex, `hasWork`,
    /// `connectionsOpened` and the spin policy are atomics; `multi` is used by the loop thread,
    /// except `curl_multi_wakeup` (thread-safe), which is called while holding the inbox lock so
    /// that it never races the cleanup; `active`, `idleHandles` and the two spin backoffs
    /// belong to the loop thread.
    final class LibcurlEventLoop: @unchecked Sendable {
        private struct Inbox {
            var submissions: [LibcurlTransfer] = []
            var cancellations: [LibcurlTransfer] = []
            /// Transfers paused for their body (a stream with no bytes yet, a full sink) that can go on.
            var resumptions: [LibcurlTransfer] = []
            /// Jobs of tasks that prefer this loop as their executor (``LibcurlTransport/taskExecutor``).
            var jobs: [UnownedJob] = []
            var isShutDown = false
            /// The loop is in (or about to enter) `curl_multi_poll` and must be woken.
            var isWaiting = false
        }

        /// The most idle easy handles kept for reuse.
        private static let handlePoolLimit = 64
        /// The most idle connections the multi handle keeps open.
        private static let connectionCacheSize = 64

        /// How many connections the finished transfers opened (the rest reused one); for tests.
        let connectionsOpened = Atomic<Int>(0)
        /// When to wait without sleeping, for the loop thread and for callers.
        let spinPolicy: LibcurlSpinPolicy

        private let inbox = Mutex<Inbox>(Inbox())
        /// Set whenever the inbox gets work, so the loop can spin on it without taking the lock.
        private let hasWork = Atomic<Bool>(false)
        private let multi: UnsafeMutableRawPointer?
        private var active: [ObjectIdentifier: LibcurlTransfer] = [:]
        /// Idle easy handles, and whether each kept a plain GET's setup (see ``LibcurlTransfer/isPlain``).
        private var idleHandles: [(easy: UnsafeMutableRawPointer, plainSetup: Bool)] = []
        /// When the two spins of the loop thread are skipped because they kept running out of time.
        private var spinsForWork = LibcurlSpinPolicy.Backoff()
        private var spinsForAnswers = LibcurlSpinPolicy.Backoff()

        /// Creates the multi handle and starts the loop thread (none when libcurl cannot start;
        /// every transfer then fails with a clear error).
        init(spinning: Bool = true, maximumConnectionsPerHost: Int? = nil) {
            spinPolicy = LibcurlSpinPolicy(enabled: spinning)
            multi = LibcurlGlobal.isInitialized ? curl_multi_init() : nil
            guard let multi else { return }
            _ = networking_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, Self.connectionCacheSize)
            if let maximumConnectionsPerHost {
                _ = networking_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
            }
            _ = networking_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, networking_curl_pipe_multiplex)
            let thread = Thread { [self] in run() }
            thread.name = "Networking.LibcurlEventLoop"
            thread.start()
        }

        /// Tells loops apart in ``isCurrentThread``.
        private static let counter = Atomic<Int>(0)
        private static let threadKey = "Networking.LibcurlEventLoop"
        private let number = LibcurlEventLoop.counter.add(1, ordering: .relaxed).newValue

        /// Whether the caller runs on this loop's thread (a mark the thread sets, which ends with it); for tests.
        var isCurrentThread: Bool { Thread.current.threadDictionary[Self.threadKey] as? Int == number }

        /// Queues a transfer; it fails with ``TransportError/cancelled`` once the loop is shut down.
        func submit(_ transfer: LibcurlTransfer) {
            guard let multi else {
                transfer.complete(
                    .failure(.network(.other("libcurl could not be initialised (curl_global_init or curl_multi_init failed)"))))
                return
            }
            let accepted = inbox.withLock { inbox -> Bool in
                guard !inbox.isShutDown else { return false }
                spinPolicy.submitted()
                inbox.submissions.append(transfer)
                hasWork.store(true, ordering: .releasing)
                Self.wakeIfWaiting(&inbox, multi)
                return true
            }
            if !accepted { transfer.complete(.failure(.cancelled)) }
        }

        /// Asks the loop to abort a transfer; it ends with ``TransportError/cancelled`` unless it
        /// has finished already.
        func cancel(_ transfer: LibcurlTransfer) {
            guard let multi else { return }
            inbox.withLock { inbox in
                guard !inbox.isShutDown else { return }
                inbox.cancellations.append(transfer)
                hasWork.store(true, ordering: .releasing)
                Self.wakeIfWaiting(&inbox, multi)
            }
        }

        /// Asks the loop to unpause a transfer (its body stream has bytes again, or its sink has room).
        func resume(_ transfer: LibcurlTransfer) {
            guard let multi else { return }
            inbox.withLock { inbox in
                guard !inbox.isShutDown else { return }
                inbox.resumptions.append(transfer)
                hasWork.store(true, ordering: .releasing)
                Self.wakeIfWaiting(&inbox, multi)
            }
        }

        /// Stops the loop thread; running and queued transfers end with ``TransportError/cancelled``.
        func shutdown() {
            guard let multi else { return }
            inbox.withLock { inbox in
                guard !inbox.isShutDown else { return }
                inbox.isShutDown = true
                hasWork.store(true, ordering: .releasing)
                Self.wakeIfWaiting(&inbox, multi)
            }
        }

        private static func wakeIfWaiting(_ inbox: inout Inbox, _ multi: UnsafeMutableRawPointer) {
            guard inbox.isWaiting else { return }
            inbox.isWaiting = false
            _ = curl_multi_wakeup(multi)
        }

        // MARK: - Loop thread

        private func run() {
            // Sinks and progress handlers run here: a blocking request from one is refused.
            BlockingGuard.markCurrentThreadAsTransport()
            guard let multi else { return }
            var submissions: [LibcurlTransfer] = []
            var cancellations: [LibcurlTransfer] = []
            var resumptions: [LibcurlTransfer] = []
            var jobs: [UnownedJob] = []
            submissions.reserveCapacity(16)
            cancellations.reserveCapacity(16)
            var running: Int32 = 0
            Thread.current.threadDictionary[Self.threadKey] = number
            while true {
                // Tasks running here first: the transfers they submit start in this pass. (An
                // enqueued job sets `hasWork`, which stays set while jobs are queued.)
                if hasWork.load(ordering: .acquiring) { inbox.withLock { inbox in swap(&inbox.jobs, &jobs) } }
                if !jobs.isEmpty {
                    let executor = asUnownedTaskExecutor()
                    for job in jobs { job.runSynchronously(on: executor) }
                    jobs.removeAll(keepingCapacity: true)
                }
                let isShutDown = inbox.withLock { inbox -> Bool in
                    hasWork.store(!inbox.jobs.isEmpty, ordering: .relaxed)
                    swap(&inbox.submissions, &submissions)
                    swap(&inbox.cancellations, &cancellations)
                    swap(&inbox.resumptions, &resumptions)
                    inbox.isWaiting = false
                    return inbox.isShutDown
                }
                for transfer in submissions { add(transfer, to: multi) }
                submissions.removeAll(keepingCapacity: true)
                for transfer in cancellations { abort(transfer, in: multi, with: .cancelled) }
                cancellations.removeAll(keepingCapacity: true)
                for transfer in resumptions where active[ObjectIdentifier(transfer)] != nil {
                    // Resuming hands libcurl's held bytes to the sink at once; a sink that fails
                    // then (or a resume libcurl refuses) ends the transfer here: libcurl drops the
                    // bytes and, with the body already in, would report a success.
                    if let easy = transfer.easy {
                        let code = curl_easy_pause(easy, networking_curlpause_cont)
                        if code != CURLE_OK { end(transfer, easy: easy, code: code, in: multi) }
                    }
                }
                resumptions.removeAll(keepingCapacity: true)
                if isShutDown { break }

                _ = curl_multi_perform(multi, &running)
                let finished = collectFinished(in: multi)
                // One request at a time (see LibcurlSpinPolicy): a caller that just got its answer
                // often sends the next request within microseconds, and a fast peer answers
                // sooner than a sleeping thread wakes up; wait for both without sleeping.
                // (Work already there is no spin: neither a success nor a miss for the backoff.)
                if finished, active.isEmpty, spinPolicy.isSequential, !hasWork.load(ordering: .acquiring),
                    spinsForWork.allowsSpin()
                {
                    let arrived = spinForWork()
                    spinsForWork.record(succeeded: arrived)
                    if arrived { continue }
                }
                if !finished, active.count == 1, spinPolicy.favoursSpinning, spinsForAnswers.allowsSpin() {
                    let ready = pollBriefly(multi)
                    spinsForAnswers.record(succeeded: ready)
                    if ready { continue }
                }

                let mayWait = inbox.withLock { inbox -> Bool in
                    guard inbox.submissions.isEmpty, inbox.cancellations.isEmpty, inbox.resumptions.isEmpty, inbox.jobs.isEmpty,
                        !inbox.isShutDown
                    else { return false }
                    inbox.isWaiting = true
                    return true
                }
                if mayWait { _ = curl_multi_poll(multi, nil, 0, 1000, nil) }
            }
            tearDown(multi)
        }

        private func add(_ transfer: LibcurlTransfer, to multi: UnsafeMutableRawPointer) {
            // Its cancellation may have been drained before it arrived (found nothing to abort).
            if transfer.isCancelRequested {
                finish(transfer, .failure(.cancelled))
                return
            }
            // A body streamed to a sink asks for a larger read buffer (CURLOPT_BUFFERSIZE), which
            // libcurl refuses on a handle that still holds its buffer from an earlier transfer:
            // it frees it when a transfer ends, but not when that transfer finished on an HTTP/2
            // connection others were still using, and `curl_easy_reset` keeps it. Downloads are
            // few and long, so they take a new handle.
            let idle = transfer.request.responseBodySink == nil ? idleHandles.popLast() : nil
            guard let easy = idle?.easy ?? curl_easy_init() else {
                finish(transfer, .failure(.network(.other("libcurl could not create a transfer (curl_easy_init failed)"))))
                return
            }
            let hadPlainSetup = idle?.plainSetup == true
            let keepsPlainSetup = hadPlainSetup && transfer.isPlain
            if hadPlainSetup, !keepsPlainSetup { curl_easy_reset(easy) }
            if let failure = transfer.configure(easy, keepingPlainSetup: keepsPlainSetup) {
                recycle(easy, of: transfer, finishedCleanly: false)
                finish(transfer, .failure(failure))
                return
            }
            let code = curl_multi_add_handle(multi, easy)
            guard code == CURLM_OK else {
                recycle(easy, of: transfer, finishedCleanly: false)
                finish(transfer, .failure(.network(.other("libcurl could not start the transfer (CURLMcode \(code.rawValue))"))))
                return
            }
            active[ObjectIdentifier(transfer)] = transfer
            // The latency only matters to the spin policy, and only one request at a time: no
            // clock reads otherwise.
            if spinPolicy.isEnabled, active.count == 1 { transfer.startedAt = .now }
        }

        private func abort(_ transfer: LibcurlTransfer, in multi: UnsafeMutableRawPointer, with failure: TransportError) {
            guard active.removeValue(forKey: ObjectIdentifier(transfer)) != nil, let easy = transfer.easy else { return }
            // Removing a running handle closes its connection: the transfer stops on the wire.
            _ = curl_multi_remove_handle(multi, easy)
            recycle(easy, of: transfer, finishedCleanly: false)
            finish(transfer, .failure(failure))
        }

        /// Spins (no system call) until work arrives or ``LibcurlSpinPolicy/spinLimit`` passes; `true` when work arrived.
        private func spinForWork() -> Bool {
            let clock = ContinuousClock()
            let deadline = clock.now + LibcurlSpinPolicy.spinLimit
            repeat {
                if hasWork.load(ordering: .acquiring) { return true }
            } while clock.now < deadline
            return false
        }

        /// Polls the sockets without sleeping until one is ready, work arrives or ``LibcurlSpinPolicy/spinLimit``
        /// passes; `true` unless the time ran out.
        private func pollBriefly(_ multi: UnsafeMutableRawPointer) -> Bool {
            let clock = ContinuousClock()
            let deadline = clock.now + LibcurlSpinPolicy.spinLimit
            repeat {
                var ready: Int32 = 0
                _ = curl_multi_poll(multi, nil, 0, 0, &ready)
                if ready > 0 || hasWork.load(ordering: .acquiring) { return true }
            } while clock.now < deadline
            return false
        }

        /// Completes every finished transfer; `true` when there was one.
        private func collectFinished(in multi: UnsafeMutableRawPointer) -> Bool {
            var finishedAny = false
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                var context: UnsafeMutableRawPointer?
                _ = networking_curl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &context)
                guard let context else {
                    _ = curl_multi_remove_handle(multi, easy)
                    curl_easy_cleanup(easy)
                    continue
                }
                let transfer = Unmanaged<LibcurlTransfer>.fromOpaque(context).takeUnretainedValue()
                end(transfer, easy: easy, code: code, in: multi)
                finishedAny = true
            }
            return finishedAny
        }

        /// Takes a transfer that ended with `code` off the multi handle and hands over its outcome.
        private func end(_ transfer: LibcurlTransfer, easy: UnsafeMutableRawPointer, code: CURLcode, in multi: UnsafeMutableRawPointer) {
            var connects = 0
            if networking_curl_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK, connects > 0 {
                connectionsOpened.add(connects, ordering: .relaxed)
            }
            let result = transfer.result(of: code)
            _ = curl_multi_remove_handle(multi, easy)
            active.removeValue(forKey: ObjectIdentifier(transfer))
            recycle(easy, of: transfer, finishedCleanly: code == CURLE_OK)
            finish(transfer, result)
        }

        /// Hands a transfer's outcome to its caller.
        private func finish(_ transfer: LibcurlTransfer, _ result: Result<LibcurlTransfer.Reply, TransportError>) {
            spinPolicy.finished(after: transfer.startedAt.map { $0.duration(to: .now) })
            transfer.complete(result)
        }

        /// Readies a handle for the next transfer (or frees it when the pool is full): a plain GET
        /// that finished cleanly keeps its setup, anything else is reset with `curl_easy_reset`.
        private func recycle(_ easy: UnsafeMutableRawPointer, of transfer: LibcurlTransfer, finishedCleanly: Bool) {
            let keepsSetup = finishedCleanly && transfer.isPlain
            if keepsSetup {
                // The header list and error buffer, freed with the transfer, are unhooked; the
                // other pointers to it are replaced by the next `configure` before any use.
                _ = networking_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, nil)
                _ = networking_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, nil)
            } else {
                curl_easy_reset(easy)
            }
            transfer.easy = nil
            if let list = transfer.headerList {
                curl_slist_free_all(list)
                transfer.headerList = nil
            }
            if idleHandles.count < Self.handlePoolLimit {
                idleHandles.append((easy, keepsSetup))
            } else {
                curl_easy_cleanup(easy)
            }
        }

        private func tearDown(_ multi: UnsafeMutableRawPointer) {
            for transfer in Array(active.values) { abort(transfer, in: multi, with: .cancelled) }
            for idle in idleHandles { curl_easy_cleanup(idle.easy) }
            idleHandles.removeAll()
            curl_multi_cleanup(multi)
            // Tasks that still prefer this loop go on elsewhere (see `enqueue`).
            var orphans: [UnownedJob] = []
            inbox.withLock { inbox in swap(&inbox.jobs, &orphans) }
            for job in orphans { runElsewhere(job) }
        }
    }

    extension LibcurlEventLoop: TaskExecutor {
        /// Runs the job on the loop thread, between two passes over the sockets; once the loop has
        /// stopped (or never started), on Dispatch's global queue so that no task is ever stranded.
        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let accepted = inbox.withLock { inbox -> Bool in
                guard let multi, !inbox.isShutDown else { return false }
                inbox.jobs.append(job)
                hasWork.store(true, ordering: .releasing)
                Self.wakeIfWaiting(&inbox, multi)
                return true
            }
            if !accepted { runElsewhere(job) }
        }

        private func runElsewhere(_ job: UnownedJob) {
            let executor = asUnownedTaskExecutor()
            DispatchQueue.global().async { job.runSynchronously(on: executor) }
        }
    }
#endif

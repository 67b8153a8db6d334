#if canImport(CCurl)
    import CCurl
    import Foundation
    import Synchronization

    /// One thread that drives every transfer of a ``LibcurlTransport`` through one libcurl multi
    /// handle, with libcurl's socket interface: the thread waits in `epoll_wait` for the sockets
    /// libcurl asks it to watch, and hands each ready one to `curl_multi_socket_action`.
    ///
    /// The socket interface, rather than `curl_multi_perform` and `curl_multi_poll`, because
    /// `curl_multi_perform` visits every transfer each time the thread wakes and, in libcurl 7.x,
    /// polls each one's socket in a system call of its own: with 8 requests in flight that was
    /// three `poll` calls per request. Here only the transfers whose socket is ready, or whose
    /// timer expired (`curl_multi_timeout`), run.
    ///
    /// Callers never touch libcurl: they put transfers and cancellations in the inbox (a mutex)
    /// and wake the thread (an `eventfd` in the same epoll set) only when it sleeps. The thread
    /// sets up pooled easy handles (reset with `curl_easy_reset` between transfers), and the
    /// multi handle's connection cache reuses connections. When the transport is used one
    /// request at a time against a fast peer, the thread spins briefly instead of sleeping
    /// (``LibcurlSpinPolicy``). ``shutdown()`` stops the thread: transfers still running or
    /// waiting end with ``TransportError/cancelled``, and later ones are refused the same way.
    ///
    /// Thread-safety (hence `@unchecked Sendable`): the inbox is behind a mutex, `hasWork`,
    /// `connectionsOpened` and the spin policy are atomics; `multi` and the epoll set are used by
    /// the loop thread (libcurl's socket callback runs there too), except the wake-up `eventfd`,
    /// which callers write while holding the inbox lock so that it never races its closing;
    /// `active`, `idleHandles` and `events` belong to the loop thread.
    final class LibcurlEventLoop: @unchecked Sendable {
        private struct Inbox {
            var submissions: [LibcurlTransfer] = []
            var cancellations: [LibcurlTransfer] = []
            /// Transfers paused for their body (a stream with no bytes yet, a full sink) that can go on.
            var resumptions: [LibcurlTransfer] = []
            var isShutDown = false
            /// The loop is in (or about to enter) `epoll_wait` and must be woken.
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
        /// The epoll set the loop waits on: libcurl's sockets and ``wakeDescriptor``.
        private let epollDescriptor: Int32
        /// An `eventfd` that callers write to wake the loop from `epoll_wait`.
        private let wakeDescriptor: Int32
        /// Where `epoll_wait` reports ready descriptors.
        private let events: UnsafeMutablePointer<epoll_event>
        private static let eventCapacity = 64
        private var active: [ObjectIdentifier: LibcurlTransfer] = [:]
        private var idleHandles: [UnsafeMutableRawPointer] = []

        /// Creates the multi handle and the epoll set and starts the loop thread (none when libcurl
        /// or the system cannot provide them; every transfer then fails with a clear error).
        init(spinning: Bool = true) {
            spinPolicy = LibcurlSpinPolicy(enabled: spinning)
            events = .allocate(capacity: Self.eventCapacity)
            events.initialize(repeating: epoll_event(), count: Self.eventCapacity)
            let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
            let wake = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
            var multi = LibcurlGlobal.isInitialized && epoll >= 0 && wake >= 0 ? curl_multi_init() : nil
            if let handle = multi {
                var event = epoll_event()
                event.events = EPOLLIN.rawValue
                event.data.fd = wake
                if epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &event) != 0 {
                    curl_multi_cleanup(handle)
                    multi = nil
                }
            }
            if multi == nil {
                if epoll >= 0 { close(epoll) }
                if wake >= 0 { close(wake) }
            }
            self.multi = multi
            epollDescriptor = epoll
            wakeDescriptor = wake
            guard let multi else { return }
            _ = networking_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, Self.connectionCacheSize)
            _ = networking_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, networking_curl_pipe_multiplex)
            _ = networking_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, Unmanaged.passUnretained(self).toOpaque())
            _ = networking_curl_multi_setopt_socket_function(multi) { _, socket, what, loop, registered in
                guard let loop else { return -1 }
                Unmanaged<LibcurlEventLoop>.fromOpaque(loop).takeUnretainedValue()
                    .watch(socket, for: what, registered: registered != nil)
                return 0
            }
            let thread = Thread { [self] in run() }
            thread.name = "Networking.LibcurlEventLoop"
            thread.start()
        }

        deinit {
            events.deallocate()
        }

        /// Queues a transfer; it fails with ``TransportError/cancelled`` once the loop is shut down.
        func submit(_ transfer: LibcurlTransfer) {
            guard multi != nil else {
                transfer.complete(
                    .failure(.network(.other("libcurl could not be initialised (curl_global_init, curl_multi_init, epoll_create1 or eventfd failed)"))))
                return
            }
            let accepted = inbox.withLock { inbox -> Bool in
                guard !inbox.isShutDown else { return false }
                spinPolicy.submitted()
                inbox.submissions.append(transfer)
                hasWork.store(true, ordering: .releasing)
                wakeIfWaiting(&inbox)
                return true
            }
            if !accepted { transfer.complete(.failure(.cancelled)) }
        }

        /// Asks the loop to abort a transfer; it ends with ``TransportError/cancelled`` unless it
        /// has finished already.
        func cancel(_ transfer: LibcurlTransfer) {
            guard multi != nil else { return }
            inbox.withLock { inbox in
                guard !inbox.isShutDown else { return }
                inbox.cancellations.append(transfer)
                hasWork.store(true, ordering: .releasing)
                wakeIfWaiting(&inbox)
            }
        }

        /// Asks the loop to unpause a transfer (its body stream has bytes again, or its sink has room).
        func resume(_ transfer: LibcurlTransfer) {
            guard multi != nil else { return }
            inbox.withLock { inbox in
                guard !inbox.isShutDown else { return }
                inbox.resumptions.append(transfer)
                hasWork.store(true, ordering: .releasing)
                wakeIfWaiting(&inbox)
            }
        }

        /// Stops the loop thread; running and queued transfers end with ``TransportError/cancelled``.
        func shutdown() {
            guard multi != nil else { return }
            inbox.withLock { inbox in
                guard !inbox.isShutDown else { return }
                inbox.isShutDown = true
                hasWork.store(true, ordering: .releasing)
                wakeIfWaiting(&inbox)
            }
        }

        private func wakeIfWaiting(_ inbox: inout Inbox) {
            guard inbox.isWaiting else { return }
            inbox.isWaiting = false
            var one: UInt64 = 1
            _ = write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
        }

        // MARK: - Loop thread

        private func run() {
            guard let multi else { return }
            var submissions: [LibcurlTransfer] = []
            var cancellations: [LibcurlTransfer] = []
            var resumptions: [LibcurlTransfer] = []
            submissions.reserveCapacity(16)
            cancellations.reserveCapacity(16)
            while true {
                let isShutDown = inbox.withLock { inbox -> Bool in
                    hasWork.store(false, ordering: .relaxed)
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
                    if let easy = transfer.easy { _ = curl_easy_pause(easy, networking_curlpause_cont) }
                }
                resumptions.removeAll(keepingCapacity: true)
                if isShutDown { break }

                // New transfers, resumed ones and expired timers are due now.
                if Self.timeout(of: multi) == 0 { act(on: networking_curl_socket_timeout, events: 0, in: multi) }
                let finished = collectFinished(in: multi)
                // One request at a time (see LibcurlSpinPolicy): a caller that just got its answer
                // often sends the next request within microseconds, and a fast peer answers
                // sooner than a sleeping thread wakes up; wait for both without sleeping.
                if finished, active.isEmpty, spinPolicy.isSequential, spinForWork() { continue }
                if !finished, active.count == 1, spinPolicy.favoursSpinning, pollBriefly(multi) { continue }

                let mayWait = inbox.withLock { inbox -> Bool in
                    guard inbox.submissions.isEmpty, inbox.cancellations.isEmpty, inbox.resumptions.isEmpty, !inbox.isShutDown
                    else { return false }
                    inbox.isWaiting = true
                    return true
                }
                if mayWait { waitForSockets(timeout: Self.timeout(of: multi), in: multi) }
            }
            tearDown(multi)
        }

        /// How long libcurl's earliest timer has to run, in milliseconds (0: due now), capped at a
        /// second so that the loop never sleeps unboundedly.
        private static func timeout(of multi: UnsafeMutableRawPointer) -> Int32 {
            var milliseconds = -1
            _ = curl_multi_timeout(multi, &milliseconds)
            return milliseconds < 0 ? 1000 : Int32(min(milliseconds, 1000))
        }

        /// Waits up to `timeout` milliseconds for a socket, a timer or a wake-up, and hands every
        /// ready socket to libcurl; `true` when one was ready.
        @discardableResult
        private func waitForSockets(timeout: Int32, in multi: UnsafeMutableRawPointer) -> Bool {
            let count = epoll_wait(epollDescriptor, events, Int32(Self.eventCapacity), timeout)
            guard count > 0 else { return false }
            var socketReady = false
            for index in 0..<Int(count) {
                let event = events[index]
                let descriptor = event.data.fd
                if descriptor == wakeDescriptor {
                    var value: UInt64 = 0
                    _ = read(wakeDescriptor, &value, MemoryLayout<UInt64>.size)
                    continue
                }
                // An error or a hang-up is handed over as readiness: libcurl's read or write then
                // finds out what happened (refused, reset, closed) and reports it precisely.
                let trouble = event.events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
                var mask: Int32 = 0
                if trouble || event.events & EPOLLIN.rawValue != 0 { mask |= Int32(networking_curl_cselect_in) }
                if trouble || event.events & EPOLLOUT.rawValue != 0 { mask |= Int32(networking_curl_cselect_out) }
                act(on: descriptor, events: mask, in: multi)
                socketReady = true
            }
            return socketReady
        }

        /// Lets libcurl run the transfers on a ready socket (or those whose timer expired).
        private func act(on socket: curl_socket_t, events: Int32, in multi: UnsafeMutableRawPointer) {
            var running: Int32 = 0
            _ = curl_multi_socket_action(multi, socket, events, &running)
        }

        /// libcurl's socket callback (loop thread): watch a socket for reading, writing or both,
        /// or forget it.
        private func watch(_ socket: curl_socket_t, for what: Int32, registered: Bool) {
            guard what != networking_curl_poll_remove else {
                _ = epoll_ctl(epollDescriptor, EPOLL_CTL_DEL, socket, nil)
                return
            }
            var event = epoll_event()
            if what & networking_curl_poll_in != 0 { event.events |= EPOLLIN.rawValue }
            if what & networking_curl_poll_out != 0 { event.events |= EPOLLOUT.rawValue }
            event.data.fd = socket
            if registered {
                _ = epoll_ctl(epollDescriptor, EPOLL_CTL_MOD, socket, &event)
            } else {
                if epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, socket, &event) != 0, errno == EEXIST {
                    _ = epoll_ctl(epollDescriptor, EPOLL_CTL_MOD, socket, &event)
                }
                // Any non-nil value: libcurl hands it back, telling the next call the socket is known.
                if let multi { _ = curl_multi_assign(multi, socket, UnsafeMutableRawPointer(bitPattern: 1)) }
            }
        }

        private func add(_ transfer: LibcurlTransfer, to multi: UnsafeMutableRawPointer) {
            // Its cancellation may have been drained before it arrived (found nothing to abort).
            if transfer.isCancelRequested {
                finish(transfer, .failure(.cancelled))
                return
            }
            guard let easy = idleHandles.popLast() ?? curl_easy_init() else {
                finish(transfer, .failure(.network(.other("libcurl could not create a transfer (curl_easy_init failed)"))))
                return
            }
            if let failure = transfer.configure(easy) {
                recycle(easy, of: transfer)
                finish(transfer, .failure(failure))
                return
            }
            let code = curl_multi_add_handle(multi, easy)
            guard code == CURLM_OK else {
                recycle(easy, of: transfer)
                finish(transfer, .failure(.network(.other("libcurl could not start the transfer (CURLMcode \(code.rawValue))"))))
                return
            }
            active[ObjectIdentifier(transfer)] = transfer
            transfer.startedAt = .now
        }

        private func abort(_ transfer: LibcurlTransfer, in multi: UnsafeMutableRawPointer, with failure: TransportError) {
            guard active.removeValue(forKey: ObjectIdentifier(transfer)) != nil, let easy = transfer.easy else { return }
            // Removing a running handle closes its connection: the transfer stops on the wire.
            _ = curl_multi_remove_handle(multi, easy)
            recycle(easy, of: transfer)
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
                if waitForSockets(timeout: 0, in: multi) || hasWork.load(ordering: .acquiring) { return true }
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
                var connects = 0
                if networking_curl_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK, connects > 0 {
                    connectionsOpened.add(connects, ordering: .relaxed)
                }
                let result = transfer.result(of: code)
                _ = curl_multi_remove_handle(multi, easy)
                active.removeValue(forKey: ObjectIdentifier(transfer))
                recycle(easy, of: transfer)
                finish(transfer, result)
                finishedAny = true
            }
            return finishedAny
        }

        /// Hands a transfer's outcome to its caller.
        private func finish(_ transfer: LibcurlTransfer, _ result: Result<LibcurlTransfer.Reply, TransportError>) {
            spinPolicy.finished(after: transfer.startedAt.map { $0.duration(to: .now) })
            transfer.complete(result)
        }

        /// Resets a handle for the next transfer (or frees it when the pool is full).
        private func recycle(_ easy: UnsafeMutableRawPointer, of transfer: LibcurlTransfer) {
            curl_easy_reset(easy)
            transfer.easy = nil
            if let list = transfer.headerList {
                curl_slist_free_all(list)
                transfer.headerList = nil
            }
            if idleHandles.count < Self.handlePoolLimit {
                idleHandles.append(easy)
            } else {
                curl_easy_cleanup(easy)
            }
        }

        private func tearDown(_ multi: UnsafeMutableRawPointer) {
            for transfer in Array(active.values) { abort(transfer, in: multi, with: .cancelled) }
            for easy in idleHandles { curl_easy_cleanup(easy) }
            idleHandles.removeAll()
            curl_multi_cleanup(multi)
            close(epollDescriptor)
            close(wakeDescriptor)
        }
    }
#endif

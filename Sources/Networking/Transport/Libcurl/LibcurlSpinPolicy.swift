#if os(Linux) && canImport(CCurl)
    import Synchronization

    /// When a ``LibcurlTransport``'s loop thread waits without sleeping instead of parking.
    ///
    /// Against a server on the same machine or next to it, a small exchange takes tens of
    /// microseconds — less than it takes the system to wake a sleeping thread. So when the
    /// transport is used one request at a time (``isSequential``) and the last answer came
    /// quickly (``peerIsFast``), two waits of the loop thread become short spins of at most
    /// ``spinLimit``: waiting for the caller's next request, and waiting for the answer. The
    /// calling task never spins (on Swift's cooperative pool, which has one thread per core, or
    /// on the loop thread itself when it prefers ``LibcurlTransport/taskExecutor``). With
    /// several requests in flight, or a slower server, nothing spins: the CPU is better spent
    /// elsewhere, and sleeping costs little against a long wait. A spin that keeps running out
    /// of time is skipped for a while (``Backoff``); after a change of workload it may take up
    /// to 256 chances, or two windows of ``peakWindow`` completions, before spinning resumes.
    ///
    /// Thread-safety: atomics only (`Sendable`); the figures are hints, so relaxed ordering suffices.
    final class LibcurlSpinPolicy: Sendable {
        /// The longest any spin lasts: long enough for a caller that decodes a ~15 KB body
        /// (80 µs with ``FastJSONDecoder``) before it sends the next request.
        static let spinLimit: Duration = .microseconds(250)
        /// Below this latency a peer counts as fast: 1 ms. Measured by the loop, the latency
        /// includes the loop's own wake-up when it slept, so the bar is set above what a sleeping
        /// loop sees on loopback (a few hundred microseconds on a busy virtual machine) — else
        /// sleeping would keep it from ever spinning — and below any peer across a real network.
        static let fastPeerNanoseconds = 1_000_000
        /// How many completions one peak of concurrency covers before it is measured again.
        static let peakWindow = 256

        /// Whether spinning is allowed at all (``LibcurlTransport/spinsWhenSequential``).
        let isEnabled: Bool

        private let inFlight = Atomic<Int>(0)
        /// The most in flight over the last full window.
        private let lastWindowPeak = Atomic<Int>(0)
        /// The most in flight over the window under way.
        private let windowPeak = Atomic<Int>(0)
        private let completions = Atomic<Int>(0)
        private let lastLatencyNanoseconds = Atomic<Int>(Int.max)

        init(enabled: Bool = true) {
            isEnabled = enabled
        }

        /// Transfers submitted and not completed yet.
        var transfersInFlight: Int { inFlight.load(ordering: .relaxed) }

        /// Notes a transfer handed to the loop.
        func submitted() {
            let now = inFlight.add(1, ordering: .relaxed).newValue
            if now > windowPeak.load(ordering: .relaxed) { windowPeak.store(now, ordering: .relaxed) }
        }

        /// Notes a completed transfer and how long it took on the wire, when it got there.
        func finished(after latency: Duration?) {
            inFlight.subtract(1, ordering: .relaxed)
            // The peak of the window that ends here, not the count in flight now: when a batch of
            // requests finishes in one pass, none is in flight for a moment, which says nothing
            // about how many the callers keep going.
            if completions.add(1, ordering: .relaxed).newValue % Self.peakWindow == 0 {
                lastWindowPeak.store(
                    windowPeak.exchange(inFlight.load(ordering: .relaxed), ordering: .relaxed), ordering: .relaxed)
            }
            if let latency {
                let (seconds, attoseconds) = latency.components
                lastLatencyNanoseconds.store(
                    Int(clamping: seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000), ordering: .relaxed)
            }
        }

        /// Whether the transport was used one request at a time lately: over the last full window
        /// and the one under way.
        var isSequential: Bool {
            isEnabled && max(lastWindowPeak.load(ordering: .relaxed), windowPeak.load(ordering: .relaxed)) <= 1
        }

        /// Whether the last transfer was answered within ``fastPeerNanoseconds``.
        var peerIsFast: Bool { lastLatencyNanoseconds.load(ordering: .relaxed) < Self.fastPeerNanoseconds }

        /// Whether the loop should poll for the answer without sleeping.
        var favoursSpinning: Bool { isSequential && peerIsFast }

        /// When a kind of spin keeps running out of time (a caller that decodes a large body
        /// before it sends the next request, an answer that takes longer than ``spinLimit``), it
        /// only burns a core the caller or the server could use: after a miss the loop skips that
        /// spin for the next 1, 2, 4 … 256 chances and sleeps instead; a spin that succeeds
        /// starts over. Used by the loop thread only.
        struct Backoff {
            /// The most chances skipped after consecutive misses.
            static let maximumSkips = 256
            private var skips = 0
            private var skipsLeft = 0

            /// Whether to spin at this chance.
            mutating func allowsSpin() -> Bool {
                guard skipsLeft > 0 else { return true }
                skipsLeft -= 1
                return false
            }

            /// Notes how the spin went.
            mutating func record(succeeded: Bool) {
                skips = succeeded ? 0 : min(max(1, skips * 2), Self.maximumSkips)
                skipsLeft = skips
            }
        }
    }
#endif

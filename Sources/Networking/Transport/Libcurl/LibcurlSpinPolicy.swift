#if canImport(CCurl)
    import Synchronization

    /// When a ``LibcurlTransport``'s loop thread waits without sleeping instead of parking.
    ///
    /// Against a server on the same machine or next to it, a small exchange takes tens of
    /// microseconds — less than it takes the system to wake a sleeping thread. So when the
    /// transport is used one request at a time (``isSequential``) and the last answer came
    /// quickly (``peerIsFast``), two waits of the loop thread become short spins of at most
    /// ``spinLimit``: waiting for the caller's next request, and waiting for the answer. The
    /// calling task never spins (it runs on Swift's cooperative pool, which has one thread per
    /// core). With several requests in flight, or a slower server, nothing spins: the CPU is
    /// better spent elsewhere, and sleeping costs little against a long wait.
    ///
    /// Thread-safety: atomics only (`Sendable`); the figures are hints, so relaxed ordering suffices.
    final class LibcurlSpinPolicy: Sendable {
        /// The longest any spin lasts.
        static let spinLimit: Duration = .microseconds(100)
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
        private let recentPeak = Atomic<Int>(0)
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
            if now > recentPeak.load(ordering: .relaxed) { recentPeak.store(now, ordering: .relaxed) }
        }

        /// Notes a completed transfer and how long it took on the wire, when it got there.
        func finished(after latency: Duration?) {
            let left = inFlight.subtract(1, ordering: .relaxed).newValue
            if completions.add(1, ordering: .relaxed).newValue % Self.peakWindow == 0 {
                recentPeak.store(left + 1, ordering: .relaxed)
            }
            if let latency {
                let (seconds, attoseconds) = latency.components
                lastLatencyNanoseconds.store(
                    Int(clamping: seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000), ordering: .relaxed)
            }
        }

        /// Whether the transport was used one request at a time lately.
        var isSequential: Bool { isEnabled && recentPeak.load(ordering: .relaxed) <= 1 }

        /// Whether the last transfer was answered within ``fastPeerNanoseconds``.
        var peerIsFast: Bool { lastLatencyNanoseconds.load(ordering: .relaxed) < Self.fastPeerNanoseconds }

        /// Whether the loop should poll for the answer without sleeping.
        var favoursSpinning: Bool { isSequential && peerIsFast }
    }
#endif

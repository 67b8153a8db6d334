#if os(Linux) && canImport(CCurl)
    import Testing

    @testable import Networking

    @Suite("libcurl spin policy")
    struct LibcurlSpinPolicyTests {
        @Test("One request at a time against a fast peer favours spinning")
        func sequentialFastPeer() {
            let policy = LibcurlSpinPolicy()
            #expect(!policy.peerIsFast, "nothing measured yet")
            policy.submitted()
            policy.finished(after: .microseconds(80))
            #expect(policy.isSequential)
            #expect(policy.peerIsFast)
            #expect(policy.favoursSpinning)
            #expect(policy.transfersInFlight == 0)
        }

        @Test("A slow peer does not")
        func slowPeer() {
            let policy = LibcurlSpinPolicy()
            policy.submitted()
            policy.finished(after: .milliseconds(20))
            #expect(!policy.peerIsFast)
            #expect(!policy.favoursSpinning)
        }

        @Test("Several in flight stop spinning until a window passes with one at a time")
        func concurrencyWindow() {
            let policy = LibcurlSpinPolicy()
            for _ in 0..<3 { policy.submitted() }
            #expect(!policy.isSequential)
            for _ in 0..<3 { policy.finished(after: .microseconds(50)) }
            #expect(!policy.favoursSpinning, "the peak of 3 still counts")
            for _ in 0..<(2 * LibcurlSpinPolicy.peakWindow) {
                policy.submitted()
                policy.finished(after: .microseconds(50))
            }
            #expect(policy.isSequential)
            #expect(policy.favoursSpinning)
        }

        @Test("A batch that finishes together does not look like one request at a time")
        func batchFinishingTogether() {
            let policy = LibcurlSpinPolicy()
            for _ in 0..<(4 * LibcurlSpinPolicy.peakWindow / 8) {
                for _ in 0..<8 { policy.submitted() }
                for _ in 0..<8 { policy.finished(after: .microseconds(50)) }
                #expect(!policy.isSequential, "8 in flight at every window's end")
            }
        }

        @Test("A spin that keeps running out of time is skipped for 1, 2, 4 … 256 chances; one that succeeds starts over")
        func backoff() {
            var backoff = LibcurlSpinPolicy.Backoff()
            var first = backoff.allowsSpin()
            #expect(first)
            func skippedChances() -> Int {
                var skipped = 0
                while !backoff.allowsSpin() { skipped += 1 }
                return skipped
            }
            var expected = 1
            for _ in 0..<10 {
                backoff.record(succeeded: false)
                let skipped = skippedChances()
                #expect(skipped == expected)
                expected = min(expected * 2, LibcurlSpinPolicy.Backoff.maximumSkips)
            }
            backoff.record(succeeded: true)
            first = backoff.allowsSpin()
            #expect(first, "a success starts over")
            backoff.record(succeeded: false)
            let skipped = skippedChances()
            #expect(skipped == 1)
        }

        @Test("A failed transfer that never reached the wire keeps the last latency")
        func noLatency() {
            let policy = LibcurlSpinPolicy()
            policy.submitted()
            policy.finished(after: .microseconds(10))
            policy.submitted()
            policy.finished(after: nil)
            #expect(policy.peerIsFast)
        }
    }
#endif

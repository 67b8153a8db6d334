import Foundation
import Testing

@testable import NetworkingOffline

@Suite("Offline queue state machine")
struct OfflineQueueStateTests {
    let a = OfflineQueueState.Item(id: UUID(), user: "ann")
    let b = OfflineQueueState.Item(id: UUID(), user: "bob")
    let anyone = OfflineQueueState.Item(id: UUID(), user: nil)

    @Test("Requests wait in order up to the capacity; one more is refused")
    func capacity() {
        var state = OfflineQueueState(capacity: 2)
        let result1 = state.admit(a)
        #expect(result1 == nil)
        let result2 = state.admit(b)
        #expect(result2 == nil)
        let result3 = state.admit(anyone)
        #expect(result3 == .count)
        #expect(state.items == [a, b])
    }

    @Test("Requests wait up to the bytes they may take together; one that would go over is refused, a smaller one fits")
    func maximumBytes() {
        var state = OfflineQueueState(capacity: 10, maximumBytes: 100)
        let big = OfflineQueueState.Item(id: UUID(), user: "ann", bytes: 60)
        let tooBig = OfflineQueueState.Item(id: UUID(), user: "ann", bytes: 50)
        let small = OfflineQueueState.Item(id: UUID(), user: "ann", bytes: 40)
        let huge = OfflineQueueState.Item(id: UUID(), user: "ann", bytes: 101)
        let first = state.admit(big)
        let second = state.admit(tooBig)
        let third = state.admit(small)
        #expect(first == nil && second == .bytes && third == nil)
        #expect(state.items == [big, small])
        // Once one leaves, there is room again; one over the whole limit never fits.
        _ = state.remove(big.id)
        let again = state.admit(tooBig)
        #expect(again == nil)
        _ = state.remove(tooBig.id)
        _ = state.remove(small.id)
        let alone = state.admit(huge)
        #expect(alone == .bytes)
    }

    @Test("Requests restored over the limits all wait; new ones wait for room")
    func restoredOverTheLimits() {
        var state = OfflineQueueState(capacity: 10, maximumBytes: 100)
        let restored = (0..<3).map { _ in OfflineQueueState.Item(id: UUID(), user: "ann", bytes: 80) }
        state.restore(restored)
        #expect(state.items == restored)
        let refused = state.admit(OfflineQueueState.Item(id: UUID(), user: "ann", bytes: 1))
        #expect(refused == .bytes)
    }

    @Test("A flush sends the user's requests and nobody's, in order, one flush at a time")
    func flushForUser() {
        var state = OfflineQueueState(capacity: 10)
        for item in [a, b, anyone] { _ = state.admit(item) }
        #expect(state.hasItems(for: "ann"))
        let sent = state.beginFlush(for: "ann")
        #expect(sent == [a, anyone])
        let result4 = state.beginFlush(for: "ann")
        #expect(result4 == nil, "one flush at a time")
        let result5 = state.record(a.id, .delivered)
        #expect(result5)
        let result6 = state.record(anyone.id, .rejected)
        #expect(result6)
        let result7 = state.endFlush(for: "ann", stopped: false, base: 1, maximum: 60)
        #expect(result7 == nil)
        #expect(state.items == [b], "Bob's request waits for Bob")
        let result8 = state.beginFlush(for: "ann")
        #expect(result8 == nil)
        let result9 = state.beginFlush(for: "bob")
        #expect(result9 == [b])
    }

    @Test("A deferred request stays and stops the flush; retries back off exponentially up to the maximum, then reset")
    func deferredAndBackoff() {
        var state = OfflineQueueState(capacity: 10)
        _ = state.admit(a)
        var delays: [Double?] = []
        for _ in 0..<8 {
            _ = state.beginFlush(for: "ann")
            let result10 = state.record(a.id, .deferred)
            #expect(!result10)
            delays.append(state.endFlush(for: "ann", stopped: true, base: 1, maximum: 30))
        }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30, 30])
        _ = state.beginFlush(for: "ann")
        let result11 = state.record(a.id, .delivered)
        #expect(result11)
        let result12 = state.endFlush(for: "ann", stopped: false, base: 1, maximum: 30)
        #expect(result12 == nil)
        #expect(state.stoppedFlushes == 0)
    }

    @Test("NaN backoff settings mean the defaults (1 and 60 seconds), never a NaN wait")
    func nanBackoff() {
        var state = OfflineQueueState(capacity: 10)
        _ = state.admit(a)
        var delays: [Double?] = []
        for _ in 0..<8 {
            _ = state.beginFlush(for: "ann")
            _ = state.record(a.id, .deferred)
            delays.append(state.endFlush(for: "ann", stopped: true, base: .nan, maximum: .nan))
        }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60])
    }

    @Test("A flush that sent all it had, while more was queued, tries again at once and resets the backoff")
    func completedWithNewItems() {
        var state = OfflineQueueState(capacity: 10)
        _ = state.admit(a)
        _ = state.beginFlush(for: "ann")
        _ = state.record(a.id, .deferred)
        #expect(state.endFlush(for: "ann", stopped: true, base: 1, maximum: 60) == 1)
        _ = state.beginFlush(for: "ann")
        _ = state.record(a.id, .delivered)
        _ = state.admit(anyone)
        #expect(state.endFlush(for: "ann", stopped: false, base: 1, maximum: 60) == 0)
        #expect(state.stoppedFlushes == 0)
    }

    @Test("A retry delay of 0 (or less) still pauses between flushes, and grows")
    func zeroRetryDelay() {
        var state = OfflineQueueState(capacity: 10)
        _ = state.admit(a)
        var delays: [Double?] = []
        for _ in 0..<3 {
            _ = state.beginFlush(for: "ann")
            _ = state.record(a.id, .deferred)
            delays.append(state.endFlush(for: "ann", stopped: true, base: 0, maximum: 60))
        }
        #expect(delays == [0.05, 0.1, 0.2])
        #expect(OfflineQueueState.retryDelay(-5) == 0.05)
    }

    @Test("A longest wait of 0 (or less) still pauses between flushes: no tight loop")
    func zeroMaximumRetryDelay() {
        var state = OfflineQueueState(capacity: 10)
        _ = state.admit(a)
        for maximum in [0, -1, 0.01] {
            _ = state.beginFlush(for: "ann")
            _ = state.record(a.id, .deferred)
            #expect(state.endFlush(for: "ann", stopped: true, base: 1, maximum: maximum) == 0.05)
        }
    }

    @Test("A request being removed stops a flush before it; it leaves once its removal is recorded, else stays where it was")
    func removal() {
        var state = OfflineQueueState(capacity: 10)
        state.restore([a, anyone, b])
        let started = state.beginRemoval(anyone.id)
        let again = state.beginRemoval(anyone.id)
        #expect(started && !again, "already being removed")
        // Only `a` goes: `b` must not overtake a request whose removal may still fail.
        let bobs = state.beginFlush(for: "bob")
        let anns = state.beginFlush(for: "ann")
        #expect(bobs == nil && anns == [a])
        _ = state.record(a.id, .delivered)
        _ = state.endFlush(for: "ann", stopped: false, base: 1, maximum: 1)
        let bobWaited = state.endRemoval(anyone.id, recorded: false)
        #expect(bobWaited, "bob's flush found nothing to send because of it: one is due now")
        #expect(state.items == [anyone, b])
        let restarted = state.beginRemoval(anyone.id)
        #expect(restarted)
        let nobodyWaited = state.endRemoval(anyone.id, recorded: true)
        #expect(!nobodyWaited)
        #expect(state.items == [b])
        _ = state.beginFlush(for: "bob")
        let duringFlush = state.beginRemoval(b.id)
        #expect(!duringFlush, "not while a flush runs")
    }

    @Test("Other users' requests are discarded on demand; restore puts requests back in order")
    func discardAndRestore() {
        var state = OfflineQueueState(capacity: 10)
        state.restore([a, b, anyone])
        let result13 = state.discard(notBelongingTo: "ann")
        #expect(result13 == [b])
        #expect(state.items == [a, anyone])
        let result14 = state.remove(a.id)
        #expect(result14)
        let result15 = state.remove(a.id)
        #expect(!result15)
        #expect(OfflineQueueState(capacity: 0).capacity == 1)
    }

    @Test("Nobody logged in is not another user: discarding then removes nothing")
    func discardWithNobodyLoggedIn() {
        var state = OfflineQueueState(capacity: 10)
        state.restore([a, b, anyone])
        #expect(state.discard(notBelongingTo: nil).isEmpty)
        #expect(state.items == [a, b, anyone])
    }

    @Test("A request not stored yet is not sent, nor is any after it, until it is stored")
    func notStoredYet() {
        var state = OfflineQueueState(capacity: 10)
        let pending = OfflineQueueState.Item(id: UUID(), user: "ann", isStored: false)
        _ = state.admit(a)
        _ = state.admit(pending)
        _ = state.admit(anyone)
        #expect(state.hasItems(for: "ann"), "later requests still wait behind it")
        #expect(state.beginFlush(for: "ann") == [a])
        _ = state.record(a.id, .delivered)
        #expect(state.endFlush(for: "ann", stopped: false, base: 1, maximum: 60) == 0, "what waits was queued meanwhile: at once")
        #expect(state.beginFlush(for: "ann") == nil, "only the request not stored is first in line")
        #expect(state.discard(notBelongingTo: "bob").isEmpty, "nor is it discarded while its record is written")
        state.stored(pending.id)
        #expect(state.beginFlush(for: "ann")?.map(\.id) == [pending.id, anyone.id])
    }
}

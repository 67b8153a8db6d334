import Foundation
import Testing

@testable import Networking

/// The refresh lifecycle as a pure value, driven synchronously.
@Suite("RefreshStateMachine")
struct RefreshStateMachineTests {
    let now = Date(timeIntervalSince1970: 1_000)

    @Test("a fresh credential is used as it is")
    func proceedsWhenValid() {
        var machine = RefreshStateMachine(window: RefreshWindow())
        let decision1 = machine.credentialNeeded(by: 1, isExpired: false, canRefresh: true, now: now)
        #expect(decision1 == .proceed(version: 0))
        #expect(!machine.isRefreshing)
    }

    @Test("a credential known to be expired starts one refresh; later requests wait for it")
    func refreshesBeforeSending() {
        var machine = RefreshStateMachine(window: RefreshWindow())
        let decision2 = machine.credentialNeeded(by: 1, isExpired: true, canRefresh: true, now: now)
        #expect(decision2 == .startRefresh)
        let decision3 = machine.credentialNeeded(by: 2, isExpired: true, canRefresh: true, now: now)
        #expect(decision3 == .wait)
        let decision4 = machine.credentialNeeded(by: 3, isExpired: false, canRefresh: true, now: now)
        #expect(decision4 == .wait)
        let (keep, woken) = machine.refreshSucceeded(machine.refreshID)
        #expect(keep)
        #expect(woken == [1, 2, 3])
        #expect(machine.version == 1)
        let decision5 = machine.credentialNeeded(by: 4, isExpired: false, canRefresh: true, now: now)
        #expect(decision5 == .proceed(version: 1))
    }

    @Test("an expired credential that cannot be refreshed is sent as it is")
    func expiredWithoutRefresh() {
        var machine = RefreshStateMachine(window: RefreshWindow())
        let decision6 = machine.credentialNeeded(by: 1, isExpired: true, canRefresh: false, now: now)
        #expect(decision6 == .proceed(version: 0))
    }

    @Test("fifty 401s for the current credential: exactly one refresh, fifty waiters woken")
    func singleFlight() {
        var machine = RefreshStateMachine(window: RefreshWindow())
        var decisions: [RefreshStateMachine.Decision] = []
        for waiter in 1...50 { decisions.append(machine.rejected(waiter, signedVersion: 0, isExpired: false, canRefresh: true, now: now)) }
        #expect(decisions.filter { $0 == .startRefresh }.count == 1)
        #expect(decisions.filter { $0 == .wait }.count == 49)
        let (_, woken) = machine.refreshSucceeded(machine.refreshID)
        #expect(woken.sorted() == Array(1...50))
        #expect(machine.waiters.isEmpty)
    }

    @Test("a 401 for an older credential is replayed with the current one, without a refresh")
    func staleRejection() {
        var machine = RefreshStateMachine(window: RefreshWindow())
        _ = machine.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        _ = machine.refreshSucceeded(machine.refreshID)
        let decision7 = machine.rejected(2, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        #expect(decision7 == .proceed(version: 1))
        #expect(!machine.isRefreshing)
    }

    @Test("a 401 that cannot be refreshed gives up")
    func giveUp() {
        var machine = RefreshStateMachine(window: RefreshWindow())
        let decision8 = machine.rejected(1, signedVersion: 0, isExpired: false, canRefresh: false, now: now)
        #expect(decision8 == .giveUp)
    }

    @Test("a failed refresh returns every waiter to fail, and the next 401 may refresh again")
    func failure() {
        var machine = RefreshStateMachine(window: RefreshWindow())
        _ = machine.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        _ = machine.rejected(2, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        let decision9 = machine.refreshFailed(machine.refreshID)
        #expect(decision9 == [1, 2])
        #expect(!machine.isRefreshing)
        #expect(machine.version == 0)
        let decision10 = machine.rejected(3, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        #expect(decision10 == .startRefresh)
    }

    @Test("the refresh window stops a refresh loop")
    func window() {
        var machine = RefreshStateMachine(window: RefreshWindow(maximumRefreshes: 2, interval: 30))
        for attempt in 0..<2 {
            let decision11 = machine.rejected(attempt, signedVersion: machine.version, isExpired: false, canRefresh: true, now: now)
            #expect(decision11 == .startRefresh)
            _ = machine.refreshSucceeded(machine.refreshID)
        }
        let decision12 = machine.rejected(
            9, signedVersion: machine.version, isExpired: false, canRefresh: true, now: now.addingTimeInterval(10))
        #expect(decision12 == .excessive)
        // Once the window has passed, refreshing is allowed again.
        let decision13 = machine.rejected(
            10, signedVersion: machine.version, isExpired: false, canRefresh: true, now: now.addingTimeInterval(31))
        #expect(decision13 == .startRefresh)
    }

    @Test("A clock set back by more than the window does not keep its starts: refreshes go on")
    func windowAfterClockSetBack() {
        var machine = RefreshStateMachine(window: RefreshWindow(maximumRefreshes: 2, interval: 30))
        for attempt in 0..<2 {
            #expect(
                machine.rejected(attempt, signedVersion: machine.version, isExpired: false, canRefresh: true, now: now) == .startRefresh)
            _ = machine.refreshSucceeded(machine.refreshID)
        }
        #expect(
            machine.rejected(8, signedVersion: machine.version, isExpired: false, canRefresh: true, now: now.addingTimeInterval(-10))
                == .excessive)
        #expect(
            machine.rejected(9, signedVersion: machine.version, isExpired: false, canRefresh: true, now: now.addingTimeInterval(-3600))
                == .startRefresh)
    }

    @Test("a credential replaced during a refresh abandons it: its waiters go on at once, its result is ignored, it leaves the window")
    func replacedDuringRefresh() {
        var machine = RefreshStateMachine(window: RefreshWindow(maximumRefreshes: 1, interval: 30))
        _ = machine.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        #expect(machine.rejected(2, signedVersion: 0, isExpired: false, canRefresh: true, now: now) == .wait)
        let abandoned = machine.refreshID
        #expect(machine.credentialReplaced() == [1, 2])
        #expect(!machine.isRefreshing)
        #expect(!machine.awaits(abandoned))
        #expect(machine.refreshSucceeded(abandoned) == (false, []))
        #expect(machine.refreshFailed(abandoned).isEmpty)
        #expect(machine.version == 1)
        // The abandoned refresh took no place in the window: the new credential's 401 refreshes.
        #expect(machine.rejected(3, signedVersion: 1, isExpired: false, canRefresh: true, now: now) == .startRefresh)
        // Nothing running: nothing to wake.
        var idle = RefreshStateMachine(window: RefreshWindow())
        #expect(idle.credentialReplaced().isEmpty)
    }

    @Test("a cancelled waiter leaves the queue; the others are still woken")
    func cancellation() {
        var machine = RefreshStateMachine(window: RefreshWindow())
        _ = machine.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        _ = machine.rejected(2, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        let cancelled = machine.cancel(2)
        let cancelledTwice = machine.cancel(2)
        let woken = machine.refreshSucceeded(machine.refreshID).waiters
        #expect(cancelled)
        #expect(!cancelledTwice)
        #expect(woken == [1])
    }

    @Test("a new session abandons the running refresh: its waiters are returned, its outcome ignored, the window emptied")
    func sessionChanged() {
        var machine = RefreshStateMachine(window: RefreshWindow(maximumRefreshes: 1, interval: 30))
        _ = machine.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        _ = machine.rejected(2, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        let abandoned = machine.refreshID
        #expect(machine.sessionChanged() == [1, 2])
        #expect(!machine.isRefreshing)
        #expect(machine.version == 1)
        // The new session may refresh at once: the old refresh left the window with its session
        #expect(machine.rejected(3, signedVersion: 1, isExpired: false, canRefresh: true, now: now) == .startRefresh)
        // The abandoned refresh's outcome changes nothing of the new one
        let late = machine.refreshSucceeded(abandoned)
        #expect(!late.keep)
        #expect(late.waiters.isEmpty)
        #expect(machine.refreshFailed(abandoned).isEmpty)
        #expect(machine.isRefreshing)
        let (keep, woken) = machine.refreshSucceeded(machine.refreshID)
        #expect(keep)
        #expect(woken == [3])
    }

    @Test("refreshes started because the credential is about to expire take no place in the window")
    func proactiveRefreshesAreNoLoop() {
        var machine = RefreshStateMachine(window: RefreshWindow(maximumRefreshes: 2, interval: 30))
        for waiter in 1...10 {
            #expect(machine.credentialNeeded(by: waiter, isExpired: true, canRefresh: true, now: now) == .startRefresh)
            _ = machine.refreshSucceeded(machine.refreshID)
        }
        // A proactive refresh that fails leaves the 401s' starts where they were
        #expect(machine.rejected(11, signedVersion: machine.version, isExpired: false, canRefresh: true, now: now) == .startRefresh)
        _ = machine.refreshSucceeded(machine.refreshID)
        #expect(machine.credentialNeeded(by: 12, isExpired: true, canRefresh: true, now: now) == .startRefresh)
        _ = machine.refreshFailed(machine.refreshID, counts: false)
        #expect(machine.rejected(13, signedVersion: machine.version, isExpired: false, canRefresh: true, now: now) == .startRefresh)
        _ = machine.refreshSucceeded(machine.refreshID)
        #expect(machine.rejected(14, signedVersion: machine.version, isExpired: false, canRefresh: true, now: now) == .excessive)
    }

    @Test("a 401 for an older credential refreshes first when the current one is known to be expired")
    func staleRejectionOfExpiredCredential() {
        var machine = RefreshStateMachine(window: RefreshWindow())
        _ = machine.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        _ = machine.refreshSucceeded(machine.refreshID)
        #expect(machine.rejected(2, signedVersion: 0, isExpired: true, canRefresh: true, now: now) == .startRefresh)
        #expect(machine.rejected(3, signedVersion: 0, isExpired: true, canRefresh: true, now: now) == .wait)
        let (keep, woken) = machine.refreshSucceeded(machine.refreshID)
        #expect(keep)
        #expect(woken == [2, 3])
        // Without a way to refresh, the replay goes with what there is
        #expect(machine.rejected(4, signedVersion: 0, isExpired: true, canRefresh: false, now: now) == .proceed(version: 2))
    }

    @Test("a session change with no refresh running wakes nobody")
    func sessionChangedIdle() {
        var machine = RefreshStateMachine(window: RefreshWindow())
        #expect(machine.sessionChanged().isEmpty)
        #expect(machine.version == 1)
    }

    @Test("after a failure without a rejection, another refresh of that credential waits for the cool-down; its error is kept")
    func coolDownAfterFailure() {
        var machine = RefreshStateMachine(window: RefreshWindow(), coolDown: 2)
        #expect(machine.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now) == .startRefresh)
        let failure = RepositoryError.cancelled(nil)
        #expect(machine.refreshFailed(machine.refreshID, counts: false, coolingDown: (failure, now)) == [1])
        // Within the cool-down: by a 401 or by an expired credential, no refresh starts.
        #expect(machine.rejected(2, signedVersion: 0, isExpired: false, canRefresh: true, now: now.addingTimeInterval(1.9)) == .coolingDown)
        #expect(machine.credentialNeeded(by: 3, isExpired: true, canRefresh: true, now: now) == .coolingDown)
        guard case .cancelled? = machine.coolingFailure else {
            Issue.record("expected the failed refresh's error, got \(String(describing: machine.coolingFailure))")
            return
        }
        #expect(machine.waiters.isEmpty && !machine.isRefreshing)
        // A request that read the time just before the failure came is in the cool-down too;
        // one whose token still works (only within the leeway) is sent with it.
        #expect(
            machine.rejected(6, signedVersion: 0, isExpired: false, canRefresh: true, now: now.addingTimeInterval(-0.5)) == .coolingDown)
        #expect(machine.credentialNeeded(by: 7, isExpired: true, isUsable: true, canRefresh: true, now: now) == .proceed(version: 0))
        // A clock set back further than the cool-down, or the cool-down over: a refresh starts again.
        #expect(machine.rejected(4, signedVersion: 0, isExpired: false, canRefresh: true, now: now.addingTimeInterval(-2)) == .startRefresh)
        _ = machine.refreshFailed(machine.refreshID, counts: false, coolingDown: (failure, now))
        #expect(machine.rejected(5, signedVersion: 0, isExpired: false, canRefresh: true, now: now.addingTimeInterval(2)) == .startRefresh)
    }

    @Test("the cool-down ends with a refresh that succeeds, a replaced credential or a new session; none without a cool-down")
    func coolDownEnds() {
        let failure = RepositoryError.cancelled(nil)
        var machine = RefreshStateMachine(window: RefreshWindow(), coolDown: 60)
        // A replaced credential: a 401 for it refreshes; one for the old credential is replayed.
        _ = machine.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        _ = machine.refreshFailed(machine.refreshID, counts: false, coolingDown: (failure, now))
        _ = machine.credentialReplaced()
        #expect(machine.rejected(2, signedVersion: 0, isExpired: false, canRefresh: true, now: now) == .proceed(version: 1))
        #expect(machine.rejected(3, signedVersion: 1, isExpired: false, canRefresh: true, now: now) == .startRefresh)
        // A refresh that succeeds.
        _ = machine.refreshFailed(machine.refreshID, counts: false, coolingDown: (failure, now))
        #expect(machine.credentialNeeded(by: 4, isExpired: true, canRefresh: true, now: now) == .coolingDown)
        let later = now.addingTimeInterval(60)
        #expect(machine.rejected(5, signedVersion: 1, isExpired: false, canRefresh: true, now: later) == .startRefresh)
        _ = machine.refreshSucceeded(machine.refreshID)
        #expect(machine.coolingFailure == nil)
        // A new session.
        _ = machine.rejected(6, signedVersion: 2, isExpired: false, canRefresh: true, now: later)
        _ = machine.refreshFailed(machine.refreshID, counts: false, coolingDown: (failure, now))
        _ = machine.sessionChanged()
        #expect(machine.coolingFailure == nil)
        #expect(machine.credentialNeeded(by: 7, isExpired: true, canRefresh: true, now: now) == .startRefresh)
        // Without a cool-down (negative and NaN clamp to none), every 401 refreshes.
        for coolDown in [0, -1, .nan] as [TimeInterval] {
            var plain = RefreshStateMachine(window: RefreshWindow(), coolDown: coolDown)
            _ = plain.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
            _ = plain.refreshFailed(plain.refreshID, counts: false, coolingDown: (failure, now))
            #expect(plain.rejected(2, signedVersion: 0, isExpired: false, canRefresh: true, now: now) == .startRefresh)
        }
    }

    @Test("a refresh that timed out is still taken when it ends, while the credential it refreshed is current")
    func lateRefreshAfterTimeout() {
        for replaced in [false, true] {
            var machine = RefreshStateMachine(window: RefreshWindow(), coolDown: 2)
            #expect(machine.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now) == .startRefresh)
            let late = machine.refreshID
            let timeout = RepositoryError.sessionRefreshFailed(.timedOut(after: 60), nil)
            #expect(machine.refreshFailed(late, counts: false, coolingDown: (timeout, now), timedOut: timeout) == [1])
            #expect(machine.rejected(2, signedVersion: 0, isExpired: false, canRefresh: true, now: now) == .coolingDown)
            if replaced { _ = machine.credentialReplaced() }
            let version = machine.version
            // When: the refresher returns after all
            let (keep, woken) = machine.refreshSucceeded(late)
            // Then: kept (a new version, the cool-down over) unless the credential was replaced meanwhile
            #expect(keep == !replaced)
            #expect(woken.isEmpty)
            #expect(machine.version == (replaced ? version : version + 1))
            #expect(machine.coolingFailure == nil || replaced)
            // Once only.
            #expect(machine.refreshSucceeded(late).keep == false)
        }
        // Until it ends, no other refresh of that credential starts, cool-down or not; its late
        // failure lets the next one start.
        var blocking = RefreshStateMachine(window: RefreshWindow(), coolDown: 0)
        _ = blocking.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        let hanging = blocking.refreshID
        let timeout = RepositoryError.sessionRefreshFailed(.timedOut(after: 60), nil)
        _ = blocking.refreshFailed(hanging, counts: false, coolingDown: (timeout, now), timedOut: timeout)
        #expect(blocking.credentialNeeded(by: 2, isExpired: true, canRefresh: true, now: now.addingTimeInterval(3600)) == .coolingDown)
        #expect(blocking.awaits(hanging))
        #expect(blocking.refreshFailed(hanging, counts: false).isEmpty)
        #expect(!blocking.awaits(hanging))
        #expect(blocking.credentialNeeded(by: 3, isExpired: true, canRefresh: true, now: now.addingTimeInterval(3600)) == .startRefresh)
        // A replaced credential forgets it too.
        var replacing = RefreshStateMachine(window: RefreshWindow())
        _ = replacing.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        let forgotten = replacing.refreshID
        _ = replacing.refreshFailed(forgotten, counts: false, timedOut: timeout)
        #expect(replacing.credentialReplaced().isEmpty)
        #expect(!replacing.awaits(forgotten))
        // A new session forgets it.
        var machine = RefreshStateMachine(window: RefreshWindow())
        _ = machine.rejected(1, signedVersion: 0, isExpired: false, canRefresh: true, now: now)
        let late = machine.refreshID
        _ = machine.refreshFailed(late, counts: false, timedOut: .sessionRefreshFailed(.timedOut(after: 60), nil))
        _ = machine.sessionChanged()
        #expect(machine.refreshSucceeded(late).keep == false)
    }

    @Test("a timed-out refresh that fails after all replaces the timeout's cool-down with its own (none when it reached no server)")
    func lateFailureAfterTimeout() {
        let timeout = RepositoryError.sessionRefreshFailed(.timedOut(after: 60), nil)
        let unavailable = RepositoryError.sessionRefreshFailed(.refresherFailed(.invalidRequest(reason: "unavailable", request: nil)), nil)
        for lateCoolDown in [true, false] {
            var machine = RefreshStateMachine(window: RefreshWindow(), coolDown: 30)
            _ = machine.credentialNeeded(by: 1, isExpired: true, canRefresh: true, now: now)
            let late = machine.refreshID
            _ = machine.refreshFailed(late, counts: false, coolingDown: (timeout, now), timedOut: timeout)
            #expect(machine.coolingFailure?.description == timeout.description)
            // When: the refresher returns a failure a second later
            let later = now.addingTimeInterval(1)
            #expect(machine.refreshFailed(late, counts: false, coolingDown: lateCoolDown ? (unavailable, later) : nil).isEmpty)
            // Then: its own cool-down, or none
            let decision = machine.credentialNeeded(by: 2, isExpired: true, canRefresh: true, now: later)
            #expect(decision == (lateCoolDown ? .coolingDown : .startRefresh))
            #expect(machine.coolingFailure?.description == (lateCoolDown ? unavailable.description : nil))
        }
        // A timeout that started no cool-down (the session ends) still has its error for the requests held back.
        var ending = RefreshStateMachine(window: RefreshWindow(), coolDown: 30)
        _ = ending.credentialNeeded(by: 1, isExpired: true, canRefresh: true, now: now)
        _ = ending.refreshFailed(ending.refreshID, counts: false, timedOut: timeout)
        #expect(ending.credentialNeeded(by: 2, isExpired: true, canRefresh: true, now: now) == .coolingDown)
        #expect(ending.coolingFailure?.description == timeout.description)
    }
}

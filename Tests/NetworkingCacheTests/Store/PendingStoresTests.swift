import Foundation
import Testing

@testable import NetworkingCache

@Suite struct PendingStoresTests {
    @Test func aRemovalVoidsOnlyTheFetchesOfTheNamesItMatches() {
        // Given fetches in flight for two names
        let pending = PendingStores()
        let (a, b) = (Entries.key("a").storeName, Entries.key("b").storeName)
        let firstOfA = pending.begin(a)
        let ofB = pending.begin(b)

        // When a removal matches one of them
        pending.removed { $0 == a }

        // Then only that name's fetches are voided; one that begins afterwards is current
        #expect(!pending.isCurrent(firstOfA))
        #expect(pending.isCurrent(ofB))
        let secondOfA = pending.begin(a)
        #expect(pending.isCurrent(secondOfA))
        #expect(!pending.isCurrent(firstOfA))
        for ticket in [firstOfA, ofB, secondOfA] { pending.end(ticket) }
        #expect(pending.count == 0)
    }

    @Test("A 304's refresh is claimed only when nothing was stored since its fetch began, and holds only while nothing else is")
    func aRefreshGivesWayToAnyOtherStore() throws {
        let pending = PendingStores()
        let name = Entries.key("a").storeName
        // A revalidation and a reload in flight together; the reload's answer is stored first.
        let revalidation = pending.begin(name)
        let reload = pending.begin(name)
        let stored = try #require(pending.claimStore(reload, exclusive: false))
        #expect(pending.claimStore(revalidation, exclusive: true) == nil, "the late 304 would refresh the older answer over the newer")
        // The 304 claims first, and the reload's store is claimed before the refresh is written:
        // the refresh may have overwritten it, so it does not hold (and is removed).
        let second = pending.begin(name)
        let other = pending.begin(name)
        let refresh = try #require(pending.claimStore(second, exclusive: true))
        let newer = try #require(pending.claimStore(other, exclusive: false))
        #expect(!pending.holds(refresh))
        #expect(pending.holds(newer))
        #expect(pending.holds(stored), "ordinary stores give way only to removals")
        pending.removed { $0 == name }
        #expect(!pending.holds(newer))
        for ticket in [revalidation, reload, second, other] { pending.end(ticket) }
        #expect(pending.count == 0)
    }

    @Test func aNameIsTrackedOnlyWhileAFetchForItIsInFlight() {
        // Given many fetches, each removed while in flight, then ended
        let pending = PendingStores()
        for index in 0..<1_000 {
            let ticket = pending.begin(Entries.key("item\(index)").storeName)
            pending.removed { _ in true }
            #expect(!pending.isCurrent(ticket))
            pending.end(ticket)
        }
        // Then nothing is left: the table grows with the fetches in flight, not with the removals
        #expect(pending.count == 0)
        // …and a name fetched again starts afresh.
        let again = pending.begin(Entries.key("item0").storeName)
        #expect(pending.isCurrent(again))
        pending.end(again)
    }
}

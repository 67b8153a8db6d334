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

import Testing

@testable import NetworkingCache

@Suite struct LRUIndexTests {
    @Test func evictsTheLeastRecentlyUsedBeyondTheCount() {
        var index = LRUIndex<String>(costLimit: 1_000, countLimit: 3)
        #expect(index.insert("a", cost: 1).isEmpty)
        #expect(index.insert("b", cost: 1).isEmpty)
        #expect(index.insert("c", cost: 1).isEmpty)
        index.touch("a")
        #expect(index.insert("d", cost: 1) == ["b"])
        #expect(index.keysByAge == ["c", "a", "d"])
        #expect(index.count == 3)
    }

    @Test func anUnlimitedTierNeverOverflowsItsTotal() {
        // Files of exabytes (sparse) found at start-up under a limit of Int.max.
        var index = LRUIndex<String>(costLimit: .max, countLimit: .max)
        let cost = Int.max / 2
        #expect(index.insertAsOldest("a", cost: cost).isEmpty)
        #expect(index.insertAsOldest("b", cost: cost) == ["b"])
        #expect(index.insert("c", cost: cost) == ["a"])
        #expect(index.totalCost == cost)
        #expect(index.keysByAge == ["c"])
    }

    @Test func evictsBeyondTheBytesAndRefusesWhatCannotFit() {
        var index = LRUIndex<String>(costLimit: 100, countLimit: 10)
        _ = index.insert("a", cost: 40)
        _ = index.insert("b", cost: 40)
        #expect(index.insert("c", cost: 50) == ["a"])
        #expect(index.totalCost == 90)
        #expect(index.insert("huge", cost: 101).isEmpty)
        #expect(!index.contains("huge"))
        // Replacing a value with one too large removes the old one too.
        #expect(index.insert("b", cost: 500) == ["b"])
        #expect(index.keysByAge == ["c"])
        #expect(index.totalCost == 50)
    }

    @Test func replacingUpdatesTheCostAndOrder() {
        var index = LRUIndex<String>(costLimit: 100, countLimit: 10)
        _ = index.insert("a", cost: 10)
        _ = index.insert("b", cost: 10)
        _ = index.insert("a", cost: 30)
        #expect(index.totalCost == 40)
        #expect(index.keysByAge == ["b", "a"])
        let removed = index.remove("b")
        let removedAgain = index.remove("b")
        #expect(removed)
        #expect(!removedAgain)
        #expect(index.keysByAge == ["a"])
    }

    @Test func olderEntriesFoundLaterGoFirst() {
        var index = LRUIndex<String>(costLimit: 100, countLimit: 3)
        _ = index.insert("new", cost: 1)
        #expect(index.insertAsOldest("old2", cost: 1).isEmpty)
        #expect(index.insertAsOldest("old1", cost: 1).isEmpty)
        #expect(index.insertAsOldest("new", cost: 1).isEmpty)
        #expect(index.keysByAge == ["old1", "old2", "new"])
        #expect(index.insertAsOldest("oldest", cost: 1) == ["oldest"])
        #expect(index.insert("newer", cost: 1) == ["old1"])
    }

    @Test func aZeroLimitHoldsNothing() {
        var index = LRUIndex<String>(costLimit: 100, countLimit: 0)
        #expect(index.insert("a", cost: 1).isEmpty)
        #expect(index.count == 0)
        index.removeAll()
        #expect(index.totalCost == 0)
    }
}

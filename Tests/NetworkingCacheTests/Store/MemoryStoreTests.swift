import Foundation
import Testing

@testable import NetworkingCache

@Suite struct MemoryStoreTests {
    @Test func keepsTheMostRecentlyUsedWithinTheEntryLimit() {
        let store = MemoryStore(costLimit: 1 << 20, countLimit: 2)
        let (a, b, c) = (Entries.key("a"), Entries.key("b"), Entries.key("c"))
        store.store(.response(Entries.entry(for: a)), as: a.storeName)
        store.store(.response(Entries.entry(for: b)), as: b.storeName)
        _ = store.record(a.storeName)
        store.store(.response(Entries.entry(for: c)), as: c.storeName)
        #expect(store.record(a.storeName) != nil)
        #expect(store.record(b.storeName) == nil)
        #expect(store.record(c.storeName) != nil)
        #expect(store.usage.count == 2)
    }

    @Test func keepsWithinTheByteLimitAndSkipsWhatCannotFit() {
        let store = MemoryStore(costLimit: 3_000, countLimit: 100)
        let keys = (0..<5).map { Entries.key("item\($0)") }
        for key in keys { store.store(.response(Entries.entry(for: key, body: Data(count: 900))), as: key.storeName) }
        #expect(store.usage.bytes <= 3_000)
        #expect(store.record(keys[4].storeName) != nil)
        #expect(store.record(keys[0].storeName) == nil)
        let huge = Entries.key("huge")
        store.store(.response(Entries.entry(for: huge, body: Data(count: 5_000))), as: huge.storeName)
        #expect(store.record(huge.storeName) == nil)
    }

    @Test func aRecordReadBeforeARemovalIsNotPutBackAfterIt() {
        let store = MemoryStore(costLimit: 1 << 20, countLimit: 100)
        let (a, b) = (Entries.key("a"), Entries.key("b"))
        // A lookup takes the count, then reads the record from disk; a removal runs meanwhile.
        let before = store.removals
        store.removeAll { _ in true }
        store.store(.response(Entries.entry(for: a)), as: a.storeName, unlessRemovedSince: before)
        #expect(store.record(a.storeName) == nil)
        // Without a removal in between, it is kept.
        let now = store.removals
        store.store(.response(Entries.entry(for: b)), as: b.storeName, unlessRemovedSince: now)
        #expect(store.record(b.storeName) != nil)
    }

    @Test("A record read from disk after a miss does not replace one stored meanwhile (a reload's newer answer)")
    func aRecordReadFromDiskDoesNotReplaceANewerOne() {
        let store = MemoryStore(costLimit: 1 << 20, countLimit: 100)
        let key = Entries.key("a")
        let (older, newer) = (Entries.entry(for: key, body: Data("{\"v\":1}".utf8)), Entries.entry(for: key, body: Data("{\"v\":2}".utf8)))
        // A lookup misses and reads the older file; meanwhile a reload stores the newer answer.
        let before = store.removals
        store.store(.response(newer), as: key.storeName)
        store.store(.response(older), as: key.storeName, unlessRemovedSince: before)
        #expect(store.record(key.storeName) == .response(newer))
    }

    @Test func removesByName() {
        let store = MemoryStore(costLimit: 1 << 20, countLimit: 100)
        let mine = Entries.key("a", route: "books", user: "1")
        let theirs = Entries.key("a", route: "books", user: "2")
        let other = Entries.key("b", route: "authors", user: "1")
        for key in [mine, theirs, other] { store.store(.response(Entries.entry(for: key)), as: key.storeName) }
        #expect(store.removeAll { $0.route == mine.storeName.route && $0.discriminator == mine.storeName.discriminator } == 1)
        #expect(store.record(theirs.storeName) != nil)
        #expect(store.record(other.storeName) != nil)
        store.remove(other.storeName)
        #expect(store.usage.count == 1)
    }
}

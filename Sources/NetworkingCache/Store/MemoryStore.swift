import Foundation
import Synchronization

/// The memory tier: decoded records by name, with least-recently-used eviction within a byte
/// limit and an entry limit.
///
/// Thread-safe: one `Mutex` guards a dictionary and its ``LRUIndex``; it is held only for those
/// lookups and updates — never across I/O or user code — and evicted values are released after
/// it is let go.
final class MemoryStore: Sendable {
    private struct State {
        var records: [StoreName: StoredRecord] = [:]
        var index: LRUIndex<StoreName>
        /// Counts the calls of ``MemoryStore/removeAll(where:)``.
        var removals: UInt64 = 0
    }

    private let state: Mutex<State>

    /// An empty tier holding at most `costLimit` bytes and `countLimit` entries (zero turns it off).
    init(costLimit: Int, countLimit: Int) {
        state = Mutex(State(index: LRUIndex(costLimit: costLimit, countLimit: countLimit)))
    }

    /// The record stored under `name`, now the most recently used; `nil` when absent.
    func record(_ name: StoreName) -> StoredRecord? {
        state.withLock { state in
            guard let record = state.records[name] else { return nil }
            state.index.touch(name)
            return record
        }
    }

    /// How many times ``removeAll(where:)`` ran: give it to ``store(_:as:unlessRemovedSince:)``.
    var removals: UInt64 { state.withLock { $0.removals } }

    /// Stores `record` under `name`, evicting the least recently used beyond the limits. A record
    /// too large for the tier is not kept, and the record stored under `name` before goes too (it
    /// is no longer the current answer). With `removals` (a record read from disk after a miss
    /// here), nothing changes when ``removeAll(where:)`` ran since that count was taken — the
    /// record may be one it removed — or when a record is stored under `name` by now: stored after
    /// the miss, it is newer than the file read.
    func store(_ record: StoredRecord, as name: StoreName, unlessRemovedSince removals: UInt64? = nil) {
        let evicted: [StoredRecord] = state.withLock { state in
            if let removals, removals != state.removals || state.records[name] != nil { return [] }
            let victims = state.index.insert(name, cost: record.cost)
            var dropped = victims.compactMap { state.records.removeValue(forKey: $0) }
            if state.index.contains(name) {
                if let replaced = state.records.updateValue(record, forKey: name) { dropped.append(replaced) }
            }
            return dropped
        }
        _ = evicted  // released here, outside the lock
    }

    /// Removes the record stored under `name`.
    func remove(_ name: StoreName) {
        let removed = state.withLock { state in
            state.index.remove(name)
            return state.records.removeValue(forKey: name)
        }
        _ = removed
    }

    /// Removes every record whose name `matches`, and returns how many there were.
    @discardableResult
    func removeAll(where matches: (StoreName) -> Bool) -> Int {
        let removed: [StoredRecord] = state.withLock { state in
            state.removals &+= 1
            let names = state.records.keys.filter(matches)
            return names.compactMap { name in
                state.index.remove(name)
                return state.records.removeValue(forKey: name)
            }
        }
        return removed.count
    }

    /// How many records and bytes the tier holds.
    var usage: (count: Int, bytes: Int) {
        state.withLock { ($0.index.count, $0.index.totalCost) }
    }
}

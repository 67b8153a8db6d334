/// The bookkeeping of a tier with least-recently-used eviction: which names it holds, what each
/// costs, and in which order they were last used — without the values, so the memory tier and the
/// disk tier share it. Every operation is O(1) except eviction, which is O(evicted).
///
/// A value type with no I/O: a tier keeps it under its lock and does the work the index asks
/// for (dropping values, deleting files) after releasing it.
struct LRUIndex<Key: Hashable & Sendable>: Sendable {
    private struct Node: Sendable {
        var cost: Int
        var older: Key?
        var newer: Key?
    }

    /// The most bytes the tier may hold.
    let costLimit: Int
    /// The most entries the tier may hold.
    let countLimit: Int

    private var nodes: [Key: Node] = [:]
    private var oldest: Key?
    private var newest: Key?
    /// The total cost of every entry.
    private(set) var totalCost = 0

    /// An empty index with these limits. The cost limit is at most `Int.max / 2`, so that the
    /// total, which may exceed it by one entry before eviction, never overflows.
    init(costLimit: Int, countLimit: Int) {
        self.costLimit = min(max(0, costLimit), Int.max / 2)
        self.countLimit = max(0, countLimit)
    }

    /// How many entries the index holds.
    var count: Int { nodes.count }

    /// Whether the index holds `key`.
    func contains(_ key: Key) -> Bool { nodes[key] != nil }

    /// The keys, least recently used first.
    var keysByAge: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(nodes.count)
        var cursor = oldest
        while let key = cursor {
            keys.append(key)
            cursor = nodes[key]?.newer
        }
        return keys
    }

    /// Whether a value of this cost can be held at all.
    func admits(cost: Int) -> Bool { cost <= costLimit && countLimit > 0 }

    /// Adds or replaces `key` as the most recently used, and returns the keys evicted to stay
    /// within the limits, oldest first (never `key` itself). A value that cannot be held at all
    /// is not added, and `key` (if it was held) is returned among the evicted.
    mutating func insert(_ key: Key, cost: Int) -> [Key] {
        guard admits(cost: cost) else { return remove(key) ? [key] : [] }
        _ = remove(key)
        nodes[key] = Node(cost: cost, older: newest, newer: nil)
        if let newest { nodes[newest]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
        totalCost += cost
        return evictBeyondLimits(keeping: key)
    }

    /// Adds `key` as the least recently used, unless it is already held (for entries found on
    /// disk at start-up, which are older than anything used since); returns the keys evicted.
    mutating func insertAsOldest(_ key: Key, cost: Int) -> [Key] {
        guard !contains(key) else { return [] }
        guard admits(cost: cost) else { return [key] }
        nodes[key] = Node(cost: cost, older: nil, newer: oldest)
        if let oldest { nodes[oldest]?.older = key }
        oldest = key
        if newest == nil { newest = key }
        totalCost += cost
        return evictBeyondLimits(keeping: nil)
    }

    /// Marks `key` as the most recently used; `false` when it is not held.
    @discardableResult
    mutating func touch(_ key: Key) -> Bool {
        guard let node = nodes[key] else { return false }
        guard newest != key else { return true }
        _ = remove(key)
        nodes[key] = Node(cost: node.cost, older: newest, newer: nil)
        if let newest { nodes[newest]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
        totalCost += node.cost
        return true
    }

    /// Forgets `key`; `false` when it was not held.
    @discardableResult
    mutating func remove(_ key: Key) -> Bool {
        guard let node = nodes.removeValue(forKey: key) else { return false }
        if let older = node.older { nodes[older]?.newer = node.newer } else { oldest = node.newer }
        if let newer = node.newer { nodes[newer]?.older = node.older } else { newest = node.older }
        totalCost -= node.cost
        return true
    }

    /// Forgets every key.
    mutating func removeAll() {
        nodes.removeAll()
        oldest = nil
        newest = nil
        totalCost = 0
    }

    private mutating func evictBeyondLimits(keeping kept: Key?) -> [Key] {
        var evicted: [Key] = []
        while totalCost > costLimit || nodes.count > countLimit, let victim = oldest, victim != kept {
            _ = remove(victim)
            evicted.append(victim)
        }
        return evicted
    }
}

import Synchronization

/// The answers being fetched to be stored, by the name they will be stored under, each with a
/// count of the removals that matched that name since: an answer asked for before a removal must
/// not be stored after it (it may be what the removal meant to drop), while a removal of other
/// entries — a write to another URL, another route's invalidation — must not keep it out.
///
/// Stores are counted too: a `304` refreshes the answer it was sent for only when no other answer
/// for the name was stored since its fetch began, and the check and the count are one step
/// (``claimStore(_:exclusive:)``), so an answer stored between a check and a write cannot be
/// overwritten by an older one refreshed.
///
/// Bounded: a name is tracked only while a fetch for it is in flight, so the table holds at most
/// one row per exchange in flight, however many removals the cache has seen.
///
/// Thread-safe: a `Mutex` guards the table; it is held to update a row, or to test the names in
/// flight against a removal's condition (the cache's own comparisons of name parts) — never
/// across I/O or user code.
final class PendingStores: Sendable {
    /// One fetch's claim on a name: the name its answer will be stored under, and the count of
    /// that name's removals when the fetch began.
    struct Ticket: Sendable, Hashable {
        let name: StoreName
        let removals: UInt64
        /// The count of the name's stores when the fetch began.
        let stores: UInt64
    }

    /// A fetch's right to store its answer, from ``claimStore(_:exclusive:)``.
    struct Claim: Sendable, Hashable {
        let ticket: Ticket
        /// The count of the name's stores with this one.
        let stores: UInt64
        /// Whether another store since this one voids it.
        let exclusive: Bool
    }

    private struct Row {
        /// The fetches in flight for the name.
        var fetches: Int
        /// The removals that matched the name since the first of those fetches began.
        var removals: UInt64
        /// The stores claimed for the name since the first of those fetches began.
        var stores: UInt64
    }

    private let rows = Mutex<[StoreName: Row]>([:])

    init() {}

    /// Registers a fetch whose answer may be stored under `name` (a name without a variant).
    /// Pair every call with ``end(_:)``.
    func begin(_ name: StoreName) -> Ticket {
        rows.withLock { rows in
            var row = rows[name] ?? Row(fetches: 0, removals: 0, stores: 0)
            row.fetches += 1
            rows[name] = row
            return Ticket(name: name, removals: row.removals, stores: row.stores)
        }
    }

    /// Claims the right to store the ticket's answer, and counts the store: `nil` when a removal
    /// matched the name since the ticket was taken, or, when `exclusive` (a refresh by a `304`),
    /// when another answer was stored since.
    func claimStore(_ ticket: Ticket, exclusive: Bool) -> Claim? {
        rows.withLock { rows in
            guard var row = rows[ticket.name], row.removals == ticket.removals, !exclusive || row.stores == ticket.stores else {
                return nil
            }
            row.stores &+= 1
            rows[ticket.name] = row
            return Claim(ticket: ticket, stores: row.stores, exclusive: exclusive)
        }
    }

    /// Whether what a claim wrote still stands: no removal matched the name since its ticket
    /// was taken, nor, for an exclusive claim, was another store claimed since (it may have been
    /// written first, and overwritten by this one).
    func holds(_ claim: Claim) -> Bool {
        rows.withLock { rows in
            guard let row = rows[claim.ticket.name], row.removals == claim.ticket.removals else { return false }
            return !claim.exclusive || row.stores == claim.stores
        }
    }

    /// Whether no removal matched the ticket's name since the ticket was taken.
    func isCurrent(_ ticket: Ticket) -> Bool {
        rows.withLock { rows in rows[ticket.name]?.removals == ticket.removals }
    }

    /// Ends a fetch; its name is forgotten when no other fetch for it is in flight.
    func end(_ ticket: Ticket) {
        rows.withLock { rows in
            guard var row = rows[ticket.name] else { return }
            row.fetches -= 1
            if row.fetches > 0 {
                rows[ticket.name] = row
            } else {
                rows[ticket.name] = nil
            }
        }
    }

    /// Notes a removal of every name that `matches`: the fetches in flight for those names are
    /// no longer current. Called before anything is removed, so that a fetch that checks again
    /// after writing either sees the removal or has its write removed by it.
    func removed(where matches: (StoreName) -> Bool) {
        rows.withLock { rows in
            for name in rows.keys.filter(matches) { rows[name]?.removals &+= 1 }
        }
    }

    /// How many names have fetches in flight.
    var count: Int { rows.withLock { $0.count } }
}

import Foundation

/// Lets one session transition at a time write to the credential store and tell subscribers,
/// without a lock held while it does: the next transition waits for its turn on a condition,
/// and requests — which only read the in-memory state — never wait for it at all.
///
/// Transitions a request causes (a 401 that ends the session, a refreshed token to store) never
/// wait either: ``runSoon(now:later:)`` changes the in-memory state at once and leaves the store
/// and the subscribers to a background queue, which takes its turn after the transition running
/// now and before any that waits.
///
/// A transition started from inside another one on the same thread (a credential store whose
/// `save` calls `logout()`) would wait for itself; ``enter()`` refuses it instead.
///
/// Thread-safety (hence `@unchecked Sendable`): `busy`, `owner` and `deferred` are only read and
/// written while `condition`, which is thread-safe, is locked.
final class TransitionGate: @unchecked Sendable {
    private let condition = NSCondition()
    /// A transition, or the background queue's deferred ones, has the turn.
    private var busy = false
    /// The thread running the transition that has the turn, to refuse re-entry.
    private var owner: ObjectIdentifier?
    /// Work left by requests, run with the turn after the current transition.
    private var deferred: [@Sendable () -> Void] = []
    /// Runs deferred work: never a thread of Swift's cooperative pool, which requests need. One per
    /// gate, so one manager's slow store never holds up another's.
    private let queue = DispatchQueue(label: "Networking.SessionManager.transitions")

    /// Waits until no other transition runs, then takes the turn; `false` when the current
    /// thread holds the turn already.
    func enter() -> Bool {
        let thread = ObjectIdentifier(Thread.current)
        condition.lock()
        defer { condition.unlock() }
        if owner == thread { return false }
        while busy { condition.wait() }
        busy = true
        owner = thread
        return true
    }

    /// Gives the turn to the work requests left meanwhile, else to the next waiting transition.
    func leave() {
        condition.lock()
        owner = nil
        guard deferred.isEmpty else {
            // Still busy: the queue runs what requests left before anyone else gets the turn.
            condition.unlock()
            queue.async { self.drain() }
            return
        }
        busy = false
        condition.broadcast()
        condition.unlock()
    }

    /// Runs `body` with the turn.
    ///
    /// - Throws: ``SessionError/transitionInProgress`` when called from inside a transition on the
    ///   same thread; else what `body` throws.
    func run<T>(_ body: () throws(SessionError) -> T) throws(SessionError) -> T {
        guard enter() else { throw .transitionInProgress }
        defer { leave() }
        return try body()
    }

    /// A transition that never waits: `now` runs at once, under the gate's own lock (so no other
    /// transition starts in between; it must be quick and call no user code), and when it returns
    /// `true`, `later` runs with the turn on a background queue — after the transition that has
    /// the turn now, before any that waits for it. Returns what `now` returned.
    @discardableResult
    func runSoon(now: () -> Bool, later: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        guard now() else {
            condition.unlock()
            return false
        }
        deferred.append(later)
        let startsQueue = !busy
        busy = true
        condition.unlock()
        if startsQueue { queue.async { self.drain() } }
        return true
    }

    /// Waits until every transition started so far, deferred ones included, has finished.
    func settle() {
        if enter() { leave() }
    }

    /// Runs the deferred work in order with the turn, then hands the turn on.
    private func drain() {
        let thread = ObjectIdentifier(Thread.current)
        while true {
            condition.lock()
            guard !deferred.isEmpty else {
                owner = nil
                busy = false
                condition.broadcast()
                condition.unlock()
                return
            }
            let work = deferred.removeFirst()
            owner = thread
            condition.unlock()
            work()
        }
    }
}

import Foundation

/// Lets one session transition at a time write to the credential store and tell subscribers,
/// without a lock held while it does: the next transition waits for its turn on a condition,
/// and requests — which only read the in-memory state — never wait for it at all.
///
/// A transition started from inside another one on the same thread (a credential store whose
/// `save` calls `logout()`) would wait for itself; ``enter()`` refuses it instead.
///
/// Thread-safety (hence `@unchecked Sendable`): `turn` is only read and written while
/// `condition`, which is thread-safe, is locked.
final class TransitionGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var turn: ObjectIdentifier?

    /// Waits until no other transition runs, then takes the turn; `false` when the current
    /// thread holds the turn already.
    func enter() -> Bool {
        let thread = ObjectIdentifier(Thread.current)
        condition.lock()
        defer { condition.unlock() }
        if turn == thread { return false }
        while turn != nil { condition.wait() }
        turn = thread
        return true
    }

    /// Gives the turn to the next waiting transition.
    func leave() {
        condition.lock()
        turn = nil
        condition.signal()
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
}

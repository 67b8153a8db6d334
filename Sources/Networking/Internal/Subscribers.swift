/// The open streams an observable type handed out (session events, activity counts).
///
/// It lives inside the owner's locked state, so elements are yielded in the order of the changes
/// that produced them; the owner removes a subscriber when its stream terminates.
struct Subscribers<Element: Sendable> {
    private var continuations: [Int: AsyncStream<Element>.Continuation] = [:]
    private var lastID = 0

    /// Keeps `continuation`; returns the id to ``remove(_:)`` it with.
    mutating func add(_ continuation: AsyncStream<Element>.Continuation) -> Int {
        lastID += 1
        continuations[lastID] = continuation
        return lastID
    }

    mutating func remove(_ id: Int) {
        continuations[id] = nil
    }

    /// Sends `element` to every stream.
    func yield(_ element: Element) {
        for continuation in continuations.values { continuation.yield(element) }
    }

    /// Ends every stream (the owner is going away).
    func finishAll() {
        for continuation in continuations.values { continuation.finish() }
    }
}

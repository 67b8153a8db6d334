import Networking

/// Every event of `events` until it ends, and the error that ended them, if any: how the event
/// stream suites (stub and end to end) read a sequence whole.
func readAll(_ events: ServerSentEvents) async -> ([ServerSentEvent], RepositoryError?) {
    var read: [ServerSentEvent] = []
    do {
        for try await event in events { read.append(event) }
        return (read, nil)
    } catch {
        return (read, error)
    }
}

/// What a reader of `sequence` gets when its task is cancelled after `count` elements: the
/// elements it read, and the error that ended them, if any (the streamed-body suites' check
/// that a cancelled reader is handed nothing buffered).
func readCancelled<S: AsyncSequence & Sendable>(_ sequence: S, after count: Int) async -> ([S.Element], RepositoryError?)
where S.Element: Sendable, S.Failure == RepositoryError {
    await Task {
        var iterator = sequence.makeAsyncIterator()
        var read: [S.Element] = []
        do throws(RepositoryError) {
            while true {
                if read.count == count { withUnsafeCurrentTask { $0?.cancel() } }
                guard let element = try await iterator.next(isolation: nil) else { return (read, nil) }
                read.append(element)
            }
        } catch {
            return (read, error)
        }
    }.value
}

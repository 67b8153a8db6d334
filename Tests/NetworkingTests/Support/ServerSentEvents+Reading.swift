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

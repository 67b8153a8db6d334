import Synchronization

/// Remembers the digests of the few route names, users and resources a program uses, so that a
/// cache hit does not hash them again. Bounded: it starts over when full.
///
/// Thread-safe: a `Mutex` guards the table, held for one dictionary access (the hashing is done
/// outside it).
final class TagMemo: Sendable {
    static let shared = TagMemo(limit: 4_096)

    private let limit: Int
    private let tags = Mutex<[String: String]>([:])

    init(limit: Int) { self.limit = limit }

    func tag(for text: String, characters: Int) -> String {
        if let known = tags.withLock({ $0[text] }) { return known }
        let tag = SHA256Digest.hex(text, characters: characters)
        tags.withLock { tags in
            if tags.count >= limit { tags.removeAll(keepingCapacity: true) }
            tags[text] = tag
        }
        return tag
    }
}

import Foundation
import Synchronization

/// The disk tier: one file per record in a folder, named by its ``StoreName``, written
/// atomically (see ``EntryFiles/writeAtomically(_:folder:name:synchronize:)``) in the format of
/// ``EntryCodec``, with least-recently-used eviction within a byte limit and an entry limit.
///
/// **Damage.** A file that is not exactly one valid record — truncated, extended, flipped bits,
/// an unknown version, someone else's file — is deleted when read and reported as absent, so the
/// answer is fetched again.
///
/// **Several processes** may share one folder. Each file is replaced whole by a rename, so a
/// reader sees the old file or the new one; a reader that opened a file keeps reading it even when
/// another process replaces or deletes it; a file deleted under a reader is a miss. Each process
/// keeps its own view of the folder for eviction (built from a listing at first use, oldest
/// modification first, and from what it reads and writes), so the limits hold per process and
/// the folder holds at most their sum.
///
/// Thread-safe: a `Mutex` guards the ``LRUIndex`` only; every file operation runs outside it, so
/// a slow disk never holds up another request's lookup.
final class DiskStore: Sendable {
    private enum Listing {
        case pending, running, done
    }

    private struct State {
        var index: LRUIndex<StoreName>
        var listing = Listing.pending
        /// How many files were removed: a name read or listed before a removal is not counted
        /// again after it (its file may be gone, and a later eviction would delete a file
        /// another process wrote under that name).
        var removals: UInt64 = 0
        /// The names an eviction took out of the index whose files are not deleted yet: a store
        /// of one of them writes again once the file is gone (the deletion may have taken its
        /// new file), and a read of one does not count it.
        var evicting: Set<StoreName> = []
        /// The names being written, with how many writes and the count of their evictions since
        /// the first began: a write an eviction overlapped may have had its file deleted.
        var writes: [StoreName: (writers: Int, evictions: UInt64)] = [:]

        /// Counts `name` at `cost` as the most recently used; returns the names evicted (removals
        /// too), which are ``evicting`` until ``DiskStore/delete(_:)`` deletes their files.
        mutating func insert(_ name: StoreName, cost: Int) -> [StoreName] {
            let evicted = index.insert(name, cost: cost)
            removals &+= UInt64(evicted.count)
            markEvicting(evicted)
            return evicted
        }

        /// Notes names just evicted: their files are still to be deleted, and a write of one of
        /// them under way may lose its file to that deletion.
        mutating func markEvicting(_ names: [StoreName]) {
            evicting.formUnion(names)
            for name in names where writes[name] != nil { writes[name]?.evictions &+= 1 }
        }

        /// Where a write of `name` starts from: the count of its evictions, and whether one is
        /// under way (its deletion may come after the write).
        mutating func beginWrite(_ name: StoreName) -> (evictions: UInt64, overlapped: Bool) {
            var entry = writes[name] ?? (0, 0)
            entry.writers += 1
            writes[name] = entry
            return (entry.evictions, evicting.contains(name))
        }

        /// Ends a write begun with ``beginWrite(_:)``; the name is forgotten after its last write.
        mutating func endWrite(_ name: StoreName) {
            guard let entry = writes[name] else { return }
            writes[name] = entry.writers > 1 ? (entry.writers - 1, entry.evictions) : nil
        }
    }

    /// The folder holding the files.
    let folder: URL
    private let path: String
    private let synchronizesWrites: Bool
    /// The largest file read or written: larger ones are not records this cache wrote.
    private let recordLimit: Int
    private let state: Mutex<State>
    /// Called before each file an eviction deletes (tests hold an eviction there).
    private let beforeEvictionDelete: (@Sendable (StoreName) -> Void)?

    /// A tier over `folder`, created (mode 0700) when missing.
    ///
    /// - Parameters:
    ///   - costLimit: the most bytes of files this process keeps there.
    ///   - countLimit: the most files this process keeps there.
    ///   - recordLimit: the most bytes of one file. A larger file in the folder is deleted
    ///     unread, so a huge file put there by someone else is never loaded into memory.
    ///   - synchronizesWrites: `fsync` each file before its rename and the folder after it.
    /// - Throws: when the folder cannot be created or is not a folder.
    init(
        folder: URL, costLimit: Int, countLimit: Int, recordLimit: Int = .max, synchronizesWrites: Bool,
        beforeEvictionDelete: (@Sendable (StoreName) -> Void)? = nil
    ) throws {
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw CocoaError(.fileWriteFileExists)
        }
        self.folder = folder
        path = folder.path
        self.synchronizesWrites = synchronizesWrites
        self.recordLimit = min(recordLimit, costLimit)
        state = Mutex(State(index: LRUIndex(costLimit: costLimit, countLimit: countLimit)))
        self.beforeEvictionDelete = beforeEvictionDelete
    }

    /// The record stored under `name`, now the most recently used; `nil` when there is none, its
    /// file is damaged (the file is then deleted) or cannot be read now (it stays counted).
    func record(_ name: StoreName) -> StoredRecord? {
        listIfNeeded()
        let file = path + "/" + name.description
        let removals = state.withLock { $0.removals }
        switch EntryFiles.read(file, limit: recordLimit) {
        case .missing:
            state.withLock { _ = $0.index.remove(name) }
            return nil
        case .unreadable:
            return nil
        case .oversized:
            discard(name, file: file)
            return nil
        case .contents(let data):
            guard let record = try? EntryCodec.decode(data) else {
                discard(name, file: file)
                return nil
            }
            // The file's size now (another process may have replaced it), and the most recently used.
            let evicted = state.withLock { state -> [StoreName] in
                guard !state.evicting.contains(name), state.removals == removals || state.index.contains(name) else { return [] }
                return state.insert(name, cost: data.count)
            }
            delete(evicted)
            return record
        }
    }

    /// Stores `record` under `name`, evicting the least recently used beyond the limits.
    ///
    /// An eviction deletes its file after the lock is released, possibly after this write's rename:
    /// a write that an eviction of `name` overlapped (under way when it began, or decided while it
    /// ran) waits for that deletion and writes again.
    ///
    /// - Returns: whether the record is on disk (`false` when it is larger than the tier, or the
    ///   write failed — the disk is full, the folder and its parent are gone). A folder removed
    ///   while its parent stays is made again.
    @discardableResult
    func store(_ record: StoredRecord, as name: StoreName) -> Bool {
        listIfNeeded()
        let data = EntryCodec.encode(record)
        if data.count <= recordLimit, state.withLock({ $0.index.admits(cost: data.count) }) {
            var start = state.withLock { $0.beginWrite(name) }
            defer { state.withLock { $0.endWrite(name) } }
            for _ in 0..<3 {
                let write = {
                    EntryFiles.writeAtomically(data, folder: self.path, name: name.description, synchronize: self.synchronizesWrites)
                }
                guard write() || (recreateFolderIfGone() && write()) else { break }
                let evicted = state.withLock { state -> [StoreName]? in
                    guard !start.overlapped, !state.evicting.contains(name), state.writes[name]?.evictions == start.evictions
                    else { return nil }
                    return state.insert(name, cost: data.count)
                }
                if let evicted {
                    delete(evicted)
                    return true
                }
                guard waitUntilDeleted(name) else { break }
                start = state.withLock { ($0.writes[name]?.evictions ?? 0, $0.evicting.contains(name)) }
            }
        }
        remove(name)
        return false
    }

    /// Makes the folder again when something removed it (a cleaner of caches, the user), so that
    /// the tier goes on storing; `true` when it was gone and is back. The files it held went with
    /// it: their index entries are dropped as their reads miss.
    private func recreateFolderIfGone() -> Bool {
        guard !FileManager.default.fileExists(atPath: path) else { return false }
        return
            (try? FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])) != nil
    }

    /// Waits (five seconds at most) until an eviction has deleted the file of `name`: one
    /// `unlink` on another thread, so the wait is short and polls without holding the lock.
    private func waitUntilDeleted(_ name: StoreName) -> Bool {
        for _ in 0..<25_000 {
            if !state.withLock({ $0.evicting.contains(name) }) { return true }
            usleep(200)
        }
        return false
    }

    /// Removes the record stored under `name`.
    func remove(_ name: StoreName) {
        discard(name, file: path + "/" + name.description)
    }

    /// Removes every file whose name `matches` — found by listing the folder, so files other
    /// processes wrote go too — and returns how many there were.
    ///
    /// These are invalidations and a user's answers removed for good: with `synchronizesWrites`
    /// the folder is synced after them, so that a power loss does not bring back an answer a
    /// write made stale, or one user's answers after their logout. (Evictions are not synced: an
    /// evicted answer that comes back is only older.)
    @discardableResult
    func removeAll(where matches: (StoreName) -> Bool) -> Int {
        var removed = 0
        var removedTemporaries = false
        for file in EntryFiles.names(path) {
            if let destination = EntryFiles.destination(ofTemporary: file) {
                // A write under way (it then fails) or one a killed process left: it goes with the
                // entry it was to become, so that no answer a logout removes stays behind in it.
                if let name = StoreName(fileName: String(destination)), matches(name) {
                    EntryFiles.remove(path + "/" + file)
                    removedTemporaries = true
                }
                continue
            }
            guard let name = StoreName(fileName: file), matches(name) else { continue }
            discard(name, file: path + "/" + file)
            removed += 1
        }
        if removed > 0 || removedTemporaries, synchronizesWrites { EntryFiles.synchronizeFolder(path) }
        return removed
    }

    /// How many files and bytes this process counts in the folder.
    var usage: (count: Int, bytes: Int) {
        state.withLock { ($0.index.count, $0.index.totalCost) }
    }

    /// At first use, learns the files already in the folder (oldest first) and removes temporary
    /// files left by a process that died while writing. Other callers go on meanwhile. A folder
    /// that cannot be read now (no file descriptor left) is listed again at the next use.
    private func listIfNeeded() {
        let shouldList = state.withLock { state -> Bool in
            guard state.listing == .pending else { return false }
            state.listing = .running
            return true
        }
        guard shouldList else { return }
        let removals = state.withLock { $0.removals }
        guard let listed = EntryFiles.list(path, removingTemporaryFilesOlderThan: 3600) else {
            state.withLock { $0.listing = .pending }
            return
        }
        var files =
            listed
            .compactMap { file in StoreName(fileName: file.name).map { (name: $0, size: file.size, modified: file.modified) } }
            .sorted { $0.modified > $1.modified }
        sweepEarlierFormats(&files)
        // Files removed while the folder was listed are not counted.
        if state.withLock({ $0.removals != removals }) {
            files.removeAll { !FileManager.default.fileExists(atPath: path + "/" + $0.name.description) }
        }
        let evicted = state.withLock { state -> [StoreName] in
            var evicted: [StoreName] = []
            for file in files where !state.evicting.contains(file.name) {
                evicted += state.index.insertAsOldest(file.name, cost: file.size)
            }
            state.removals &+= UInt64(evicted.count)
            state.markEvicting(evicted)
            state.listing = .done
            return evicted
        }
        delete(evicted)
    }

    /// The name of the file that says the folder holds no entry of an earlier format.
    static let sweptMarker = ".format-\(EntryCodec.version)"

    /// Once per folder: removes the entries of earlier formats among `files` (format 1 kept keys
    /// and `Vary` values in clear, tokens included), reading each file's first six bytes, then
    /// leaves a marker so that later listings skip the check — only when every file was checked
    /// and every old one removed (a folder that could not be read, a file that could not be
    /// opened or removed: the next process checks again).
    private func sweepEarlierFormats(_ files: inout [(name: StoreName, size: Int, modified: TimeInterval)]) {
        let marker = path + "/" + Self.sweptMarker
        guard !FileManager.default.fileExists(atPath: marker) else { return }
        var complete = (try? FileManager.default.contentsOfDirectory(atPath: path)) != nil
        files.removeAll { file in
            let path = path + "/" + file.name.description
            guard let header = EntryFiles.prefix(of: path, count: EntryCodec.headerPrefixSize) else {
                if errno != ENOENT { complete = false }
                return false
            }
            guard let version = EntryCodec.formatVersion(ofPrefix: header), version < EntryCodec.version else { return false }
            if unlink(path) != 0, errno != ENOENT { complete = false }
            return true
        }
        if complete { _ = FileManager.default.createFile(atPath: marker, contents: Data(), attributes: [.posixPermissions: 0o600]) }
    }

    private func discard(_ name: StoreName, file: String) {
        state.withLock {
            _ = $0.index.remove(name)
            $0.removals &+= 1
        }
        EntryFiles.remove(file)
    }

    /// Deletes the files of names an eviction took out of the index, one by one; once a name's
    /// file is gone, a store of that name counts it again.
    private func delete(_ names: [StoreName]) {
        for name in names {
            beforeEvictionDelete?(name)
            EntryFiles.remove(path + "/" + name.description)
            _ = state.withLock { $0.evicting.remove(name) }
        }
    }
}

import Foundation
import Synchronization
import Testing

@testable import NetworkingCache

@Suite struct DiskStoreTests {
    @Test func storesReadsAndLeavesNoTemporaryFiles() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: true)
        let key = Entries.key("books?page=1")
        let entry = Entries.entry(for: key)
        #expect(store.store(.response(entry), as: key.storeName))
        #expect(folder.files() == [key.storeName.description])
        // A new store over the same folder (a new launch) reads it back.
        let reopened = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        #expect(reopened.record(key.storeName) == .response(entry))
        #expect(reopened.usage.count == 1)
    }

    @Test("A folder something removed (a cleaner of caches) is made again at the next write: the tier goes on storing")
    func removedFolderIsMadeAgain() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        let first = Entries.key("books?page=1")
        #expect(store.store(.response(Entries.entry(for: first)), as: first.storeName))
        try FileManager.default.removeItem(at: folder.url)
        let second = Entries.key("books?page=2")
        #expect(store.store(.response(Entries.entry(for: second)), as: second.storeName))
        #expect(folder.files() == [second.storeName.description])
        #expect(store.record(first.storeName) == nil, "its file went with the folder")
        let permissions = try FileManager.default.attributesOfItem(atPath: folder.url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o700)
    }

    @Test("A file another process replaced with a larger one is counted at its new size when read")
    func aReplacedFileIsCountedAtItsSize() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let mine = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        let theirs = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        let key = Entries.key("books")
        #expect(mine.store(.response(Entries.entry(for: key)), as: key.storeName))
        let small = mine.usage.bytes
        #expect(theirs.store(.response(Entries.entry(for: key, body: Data(count: 50_000))), as: key.storeName))
        #expect(mine.record(key.storeName) != nil)
        #expect(mine.usage.count == 1)
        #expect(mine.usage.bytes > small + 40_000)
    }

    @Test("Entries of the first format (keys and Vary values in clear) are removed at the first listing, once per folder")
    func entriesOfAnEarlierFormatAreSwept() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let (old, current) = (Entries.key("old"), Entries.key("current"))
        let writer = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        #expect(writer.store(.response(Entries.entry(for: old)), as: old.storeName))
        #expect(writer.store(.response(Entries.entry(for: current)), as: current.storeName))
        // The marker goes, and the old entry becomes one of format 1.
        try FileManager.default.removeItem(at: folder.url.appendingPathComponent(DiskStore.sweptMarker))
        let file = folder.url.appendingPathComponent(old.storeName.description)
        var bytes = try Data(contentsOf: file)
        bytes[4] = 1
        try bytes.write(to: file)
        let reader = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        #expect(reader.record(current.storeName) != nil)
        #expect(folder.files() == [current.storeName.description])
        #expect(reader.usage.count == 1)
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent(DiskStore.sweptMarker).path))
        // Once: with the marker there, a later listing reads no file's header.
        try bytes.write(to: file)
        let later = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        #expect(later.record(current.storeName) != nil)
        #expect(later.usage.count == 2)
        #expect(folder.files().count == 2)
    }

    @Test func aDamagedFileIsDroppedNotTrusted() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        let file = { (key: CacheKey) in folder.url.appendingPathComponent(key.storeName.description) }
        let truncated = Entries.key("truncated")
        store.store(.response(Entries.entry(for: truncated)), as: truncated.storeName)
        let bytes = try Data(contentsOf: file(truncated))
        try bytes.prefix(bytes.count / 2).write(to: file(truncated))
        let flipped = Entries.key("flipped")
        store.store(.response(Entries.entry(for: flipped)), as: flipped.storeName)
        var damaged = try Data(contentsOf: file(flipped))
        damaged[damaged.count - 10] ^= 0x40
        try damaged.write(to: file(flipped))
        let empty = Entries.key("empty")
        try Data().write(to: file(empty))

        for key in [truncated, flipped, empty] {
            #expect(store.record(key.storeName) == nil)
            #expect(!FileManager.default.fileExists(atPath: file(key).path))
        }
    }

    @Test func aNamedPipeUnderAnEntrysNameIsDroppedWithoutWaiting() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        let key = Entries.key("pipe")
        let file = folder.url.appendingPathComponent(key.storeName.description).path
        // Opened for reading, a pipe without a writer would block the calling thread for good.
        #expect(mkfifo(file, 0o600) == 0)
        // On a thread of its own, so that a lookup that blocks fails the test instead of stalling it.
        let found = Mutex<StoredRecord??>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            found.withLock { $0 = .some(store.record(key.storeName)) }
            done.signal()
        }
        try #require(done.wait(timeout: .now() + 10) == .success)
        #expect(found.withLock { $0 } == .some(nil))
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func aFileLargerThanAnyRecordIsDroppedUnreadEvenWithoutAByteLimit() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskStore(
            folder: folder.url, costLimit: .max, countLimit: 100, recordLimit: 4_096, synchronizesWrites: false)
        let key = Entries.key("sparse")
        let file = folder.url.appendingPathComponent(key.storeName.description)
        // 64 GiB that take no disk space: read whole, they would exhaust memory.
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 64 << 30)
        try handle.close()
        #expect(store.record(key.storeName) == nil)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        // Nor does it write a record it would refuse to read.
        let big = Entries.key("big")
        #expect(!store.store(.response(Entries.entry(for: big, body: Data(count: 5_000))), as: big.storeName))
        #expect(folder.files().isEmpty)
    }

    @Test func evictsTheLeastRecentlyUsedFiles() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 3, synchronizesWrites: false)
        let keys = (0..<4).map { Entries.key("item\($0)") }
        for key in keys.prefix(3) { store.store(.response(Entries.entry(for: key)), as: key.storeName) }
        _ = store.record(keys[0].storeName)
        store.store(.response(Entries.entry(for: keys[3])), as: keys[3].storeName)
        #expect(Set(folder.files()) == Set([keys[0], keys[2], keys[3]].map(\.storeName.description)))

        let bytes = try DiskStore(folder: folder.url, costLimit: 2_000, countLimit: 100, synchronizesWrites: false)
        let big = Entries.key("big")
        bytes.store(.response(Entries.entry(for: big, body: Data(count: 1_700))), as: big.storeName)
        // The files found at start-up were older than the new one, so they went first.
        #expect(folder.files() == [big.storeName.description])
        let huge = Entries.key("huge")
        #expect(!bytes.store(.response(Entries.entry(for: huge, body: Data(count: 3_000))), as: huge.storeName))
        #expect(folder.files() == [big.storeName.description])
    }

    @Test("A store of a name whose eviction has not deleted its file yet writes again after that deletion")
    func aStoreRacingAnEvictionOfItsNameKeepsItsFile() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let (held, released, done) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchGroup())
        let holds = Mutex(true)
        let store = try DiskStore(
            folder: folder.url, costLimit: 1 << 20, countLimit: 1, synchronizesWrites: false,
            beforeEvictionDelete: { _ in
                // The first eviction stops before its deletion until the test lets it go.
                guard
                    holds.withLock({ holds in
                        defer { holds = false }
                        return holds
                    })
                else { return }
                held.signal()
                released.wait()
            })
        let (name, other) = (Entries.key("books"), Entries.key("authors"))
        let newer = StoredRecord.response(Entries.entry(for: name, body: Data("newer".utf8)))
        #expect(store.store(.response(Entries.entry(for: name)), as: name.storeName))
        // Storing another name evicts `name`; its deletion waits.
        DispatchQueue.global().async(group: done) { store.store(.response(Entries.entry(for: other)), as: other.storeName) }
        held.wait()
        // A newer answer for `name` is written meanwhile; the eviction deletes it once let go.
        let stored = Mutex(false)
        DispatchQueue.global().async(group: done) {
            let result = store.store(newer, as: name.storeName)
            stored.withLock { $0 = result }
        }
        let file = folder.url.appendingPathComponent(name.storeName.description)
        for _ in 0..<5_000 {
            if (try? Data(contentsOf: file)).flatMap({ try? EntryCodec.decode($0) }) == newer { break }
            usleep(1_000)
        }
        released.signal()
        done.wait()
        #expect(stored.withLock { $0 })
        // The newer answer was written again: it is on disk and counted (it evicted `other`).
        #expect(folder.files() == [name.storeName.description])
        #expect(store.record(name.storeName) == newer)
        #expect(store.usage.count == 1)
    }

    @Test func startUpLearnsTheFolderOldestFirstAndSweepsDeadTemporaryFiles() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let writer = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        let (old, new) = (Entries.key("old"), Entries.key("new"))
        writer.store(.response(Entries.entry(for: old)), as: old.storeName)
        writer.store(.response(Entries.entry(for: new)), as: new.storeName)
        let past = Date(timeIntervalSinceNow: -7_200)
        try FileManager.default.setAttributes(
            [.modificationDate: past], ofItemAtPath: folder.url.appendingPathComponent(old.storeName.description).path)
        let deadTemporary = folder.url.appendingPathComponent(".tmp-dead")
        let liveTemporary = folder.url.appendingPathComponent(".tmp-live")
        try Data("partial".utf8).write(to: deadTemporary)
        try Data("partial".utf8).write(to: liveTemporary)
        try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: deadTemporary.path)
        try Data("mine".utf8).write(to: folder.url.appendingPathComponent("README"))

        let reader = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 2, synchronizesWrites: false)
        let third = Entries.key("third")
        reader.store(.response(Entries.entry(for: third)), as: third.storeName)
        #expect(!FileManager.default.fileExists(atPath: deadTemporary.path))
        #expect(FileManager.default.fileExists(atPath: liveTemporary.path))
        #expect(
            Set(folder.files()) == Set([new.storeName.description, third.storeName.description, ".tmp-live", "README"]))
    }

    @Test func removesByNameIncludingFilesItDidNotWrite() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let first = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        let second = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        let (a, b) = (Entries.key("a", route: "books"), Entries.key("b", route: "authors"))
        first.store(.response(Entries.entry(for: a)), as: a.storeName)
        first.store(.response(Entries.entry(for: b)), as: b.storeName)
        #expect(second.removeAll { $0.route == a.storeName.route } == 1)
        #expect(folder.files() == [b.storeName.description])
        #expect(first.record(a.storeName) == nil)
    }

    @Test("A removal takes the temporary files of the names it removes (a write under way, one a killed process left), and only those")
    func removalsTakeTheirTemporaryFiles() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        let (mine, theirs) = (Entries.key("a", route: "books"), Entries.key("b", route: "authors"))
        #expect(store.store(.response(Entries.entry(for: mine)), as: mine.storeName))
        let leftovers = [mine, theirs].map { EntryFiles.temporaryName(for: $0.storeName.description) }
        for name in leftovers + [".tmp-of-an-earlier-version"] {
            try Data("partial".utf8).write(to: folder.url.appendingPathComponent(name))
        }
        // Only the entry counts as removed.
        #expect(store.removeAll { $0.route == mine.storeName.route } == 1)
        #expect(Set(folder.files()) == [leftovers[1], ".tmp-of-an-earlier-version"])
        #expect(EntryFiles.destination(ofTemporary: leftovers[1]) == Substring(theirs.storeName.description))
    }

    @Test("A file that cannot be read now (a symbolic link loop) is a miss that stays counted; a missing one is forgotten")
    func anUnreadableFileStaysCounted() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        let (looped, gone) = (Entries.key("looped"), Entries.key("gone"))
        #expect(store.store(.response(Entries.entry(for: looped)), as: looped.storeName))
        #expect(store.store(.response(Entries.entry(for: gone)), as: gone.storeName))
        let path = folder.url.appendingPathComponent(looped.storeName.description).path
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path)
        try FileManager.default.removeItem(at: folder.url.appendingPathComponent(gone.storeName.description))
        #expect(store.record(looped.storeName) == nil)
        #expect(store.record(gone.storeName) == nil)
        #expect(store.usage.count == 1)
        // Evicted, or removed, it goes.
        #expect(store.removeAll { $0 == looped.storeName } == 1)
        #expect(folder.files().isEmpty)
    }

    @Test("A folder that cannot be listed at first use is listed again at the next")
    func anUnlistableFolderIsListedAgain() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let (first, second) = (Entries.key("first"), Entries.key("second"))
        let writer = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        #expect(writer.store(.response(Entries.entry(for: first)), as: first.storeName))
        #expect(writer.store(.response(Entries.entry(for: second)), as: second.storeName))
        let saved = folder.url.deletingLastPathComponent().appendingPathComponent(folder.url.lastPathComponent + "-saved")
        defer { try? FileManager.default.removeItem(at: saved) }
        let reader = try DiskStore(folder: folder.url, costLimit: 1 << 20, countLimit: 100, synchronizesWrites: false)
        // The folder is away at the reader's first use, back at its second.
        try FileManager.default.moveItem(at: folder.url, to: saved)
        #expect(reader.record(first.storeName) == nil)
        try FileManager.default.moveItem(at: saved, to: folder.url)
        #expect(reader.record(first.storeName) != nil)
        #expect(reader.usage.count == 2)
    }

    @Test func aFolderThatCannotBeMadeThrows() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("file")
        try Data().write(to: file)
        #expect(throws: (any Error).self) {
            try DiskStore(folder: file, costLimit: 1, countLimit: 1, synchronizesWrites: false)
        }
    }
}

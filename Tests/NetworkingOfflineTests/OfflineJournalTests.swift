import Foundation
import Networking
import Testing

@testable import NetworkingOffline

@Suite("Offline journal")
struct OfflineJournalTests {
    static func item(_ number: Int) throws -> OfflineItem {
        OfflineItem(
            id: UUID(), enqueuedAt: Date(timeIntervalSince1970: Double(number)), user: "user:1",
            request: TransportRequest(
                method: .post, url: try #require(URL(string: "http://api.test/notes")), headers: ["Idempotency-Key": "k\(number)"],
                body: Data(#"{"n":\#(number)}"#.utf8)),
            requiresSession: true, name: "note")
    }

    /// The framed `add` record of `item`, as the journal writes it.
    static func frame(_ item: OfflineItem) throws -> Data {
        OfflineJournal.frame(try JSONEncoder().encode(OfflineJournal.Record.add(item)))
    }

    @Test("Items survive reopening, in order, without the ones marked done")
    func reopen() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let items = try (0..<5).map(Self.item)
        do {
            let journal = try OfflineJournal(folder: folder)
            #expect(try journal.load().isEmpty)
            try await journal.append(items.map { .add($0) })
            try await journal.append([.done(items[1].id), .done(items[3].id)])
        }
        let reopened = try OfflineJournal(folder: folder)
        let loaded = try reopened.loadMeasured()
        #expect(loaded.map(\.item) == [items[0], items[2], items[4]])
        // Each item is measured by its record, as the queue admitted it.
        #expect(try loaded.map(\.bytes) == [items[0], items[2], items[4]].map { try Self.frame($0).count })
        #expect(try OfflineJournal.framed(.add(items[0])).frame.count == Self.frame(items[0]).count)
    }

    @Test("A record written before invalidated routes were kept loads with none; those kept now survive reopening")
    func recordsWithoutCacheSettings() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // An `add` record as the journal wrote it before (the synthesized form, no `cacheSettings`).
        let old = #"""
            {"add":{"_0":{"user":"user:1","enqueuedAt":-978307199,"request":{"body":{"segments":[{"data":"eyJuIjoxfQ=="}],"gzip":false},\#
            "url":"http:\/\/api.test\/notes","security":{"pinnedPublicKeys":[]},"method":"POST","headers":{"fields":\#
            [{"name":"Idempotency-Key","value":"k1"}]},"timeout":75},"requiresSession":true,"name":"note",\#
            "id":"6858A937-185A-4C16-8441-98E656D6E1A2"}}}
            """#
        try OfflineJournal.frame(Data(old.utf8)).write(to: folder.appendingPathComponent("queue.log"))
        var kept = try Self.item(2)
        kept.invalidatesRouteNames = ["notes"]
        do {
            let journal = try OfflineJournal(folder: folder)
            let loaded = try journal.load()
            #expect(loaded.map(\.id) == [try #require(UUID(uuidString: "6858A937-185A-4C16-8441-98E656D6E1A2"))])
            #expect(loaded.first?.invalidatesRouteNames == nil)
            #expect(loaded.first?.request == (try Self.item(1)).request)
            try await journal.append([.add(kept)])
        }
        let reopened = try OfflineJournal(folder: folder).load()
        #expect(reopened.last == kept)
    }

    @Test("A journal closed right after an append releases its lock at once: reopening never finds it taken")
    func lockReleasedOnClose() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for number in 0..<100 {
            let journal = try OfflineJournal(folder: folder)
            _ = try journal.load()
            try await journal.append([.add(try Self.item(number))])
        }
        #expect(try OfflineJournal(folder: folder).load().count == 100)
    }

    @Test("A torn or corrupt tail (a crash mid-write) is cut off; what came before is kept")
    func tornTail() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let items = try (0..<3).map(Self.item)
        do {
            let journal = try OfflineJournal(folder: folder)
            _ = try journal.load()
            try await journal.append(items.map { .add($0) })
        }
        let log = folder.appendingPathComponent("queue.log")
        let whole = try Data(contentsOf: log)
        for cut in [whole.count - 1, whole.count - 10, whole.count / 2 + 3] {
            try whole.prefix(cut).write(to: log)
            let reopened = try OfflineJournal(folder: folder)
            let loaded = try reopened.load()
            #expect(loaded.count < 3 && loaded == Array(items.prefix(loaded.count)))
            #expect(try Data(contentsOf: log).count <= cut, "the torn tail is cut off")
        }
        var flipped = whole
        flipped[flipped.count - 5] ^= 0xFF
        try flipped.write(to: log)
        #expect(try OfflineJournal(folder: folder).load() == Array(items.prefix(2)))
        // A tail of zeros (what a power loss leaves on some file systems) is torn too, though an
        // empty payload's checksum is 0.
        try (whole + Data(count: 64)).write(to: log)
        #expect(try OfflineJournal(folder: folder).load() == items)
        #expect(try Data(contentsOf: log) == whole)
    }

    @Test(
        "An intact record that no longer decodes (another version wrote it) is skipped, and copied when the log is compacted"
    )
    func undecodableRecordIsSkipped() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let items = try (0..<2).map(Self.item)
        // The other version's request, and its delivery in a record this one reads: both kept.
        let future = OfflineJournal.frame(Data(#"{"future":{"shape":1}}"#.utf8)) + (try OfflineJournal.framed(.done(UUID())).frame)
        var log = try Self.frame(items[0]) + future
        log += try Self.frame(items[1])
        try log.write(to: folder.appendingPathComponent("queue.log"))
        let journal = try OfflineJournal(folder: folder)
        #expect(try journal.load() == items)
        #expect(try Data(contentsOf: folder.appendingPathComponent("queue.log")) == log, "nothing is cut off")
        // Everything this version knows is delivered: a compaction would keep nothing, the future record included.
        let more = try (2..<100).map(Self.item)
        try await journal.append(more.map { .add($0) })
        try await journal.append((items + more).map { .done($0.id) })
        await journal.compactIfWorthIt()
        // Compacted all the same (or the log would grow for good), the other version's record copied.
        let kept = try Data(contentsOf: folder.appendingPathComponent("queue.log"))
        #expect(kept == future, "the other version's record was dropped, or the log not compacted")
        #expect(try OfflineJournal.liveItems(in: folder).isEmpty)
    }

    @Test("A damaged record in the middle of the log costs that record only: the records after it are kept, and later appends follow")
    func damagedMiddleRecord() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let items = try (0..<4).map(Self.item)
        let frames = try items.map(Self.frame)
        let log = folder.appendingPathComponent("queue.log")
        // A bit flipped inside the second record's payload, then in its length.
        for position in [frames[0].count + 30, frames[0].count + 1] {
            var damaged = frames.reduce(Data(), +)
            damaged[position] ^= 0x40
            try damaged.write(to: log)
            do {
                let journal = try OfflineJournal(folder: folder)
                #expect(try journal.load() == [items[0], items[2], items[3]])
                #expect(try Data(contentsOf: log) == damaged, "nothing intact is cut off")
                try await journal.append([.done(items[2].id)])
            }
            #expect(try OfflineJournal(folder: folder).load() == [items[0], items[3]])
        }
    }

    @Test("The torn bytes of an append whose cut failed are stepped over: the records written after them are kept")
    func tornRecordBetweenIntactOnes() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let items = try (0..<3).map(Self.item)
        let frames = try items.map(Self.frame)
        let torn = try Self.frame(Self.item(9)).prefix(40)
        try (frames[0] + torn + frames[1] + frames[2]).write(to: folder.appendingPathComponent("queue.log"))
        #expect(try OfflineJournal(folder: folder).load() == items)
        // Nothing but damage: an empty queue, and the file cut to nothing.
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: folder.appendingPathComponent("queue.log"))
        #expect(try OfflineJournal(folder: folder).load().isEmpty)
        #expect(try Data(contentsOf: folder.appendingPathComponent("queue.log")).isEmpty)
    }

    @Test(
        "An append whose sync and cut both fail leaves a whole record its caller heard was not kept: it is marked done, at once or with the next write"
    )
    func failedAppendThatCannotBeCut() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let items = try (0..<4).map(Self.item)
        do {
            let journal = try OfflineJournal(folder: folder)
            _ = try journal.load()
            try await journal.append([.add(items[0])])
            // The sync fails, the cut too: the record is on disk, and the log is rewritten without it.
            journal.simulateSyncAndCutFailures(1)
            await #expect(throws: OfflineQueueError.self) { try await journal.append([.add(items[1])]) }
            #expect(try OfflineJournal.liveItems(in: folder) == [items[0]])
            // The rewrite fails too: the add is marked done at once.
            journal.simulateSyncAndCutFailures(2)
            await #expect(throws: OfflineQueueError.self) { try await journal.append([.add(items[1])]) }
            #expect(try OfflineJournal.liveItems(in: folder) == [items[0]])
            // The marking fails as well: the next write that succeeds carries it first.
            journal.simulateSyncAndCutFailures(3)
            await #expect(throws: OfflineQueueError.self) { try await journal.append([.add(items[2])]) }
            try await journal.append([.add(items[3])])
        }
        #expect(try OfflineJournal(folder: folder).load() == [items[0], items[3]])
    }

    @Test("A done record whose sync and cut fail does not drop the request after a restart: the log is rewritten from what is live")
    func failedDoneThatCannotBeCut() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let items = try (0..<2).map(Self.item)
        do {
            let journal = try OfflineJournal(folder: folder)
            _ = try journal.load()
            try await journal.append(items.map { .add($0) })
            journal.simulateSyncAndCutFailures(1)
            await #expect(throws: OfflineQueueError.self) { try await journal.append([.done(items[0].id)]) }
        }
        #expect(try OfflineJournal(folder: folder).load() == items)
    }

    @Test("A log made so that every offset looks like a frame is read in bounded work: the search checks at most twice the log")
    func framesEverywhere() throws {
        // Every 16 bytes: a length of 2 MiB + 8, a checksum that never matches, `{`, and the `}`
        // that the frame 16 bytes earlier would end on. Each offset is a candidate whose checksum
        // is over 2 MiB: 131,072 of them, 256 GiB of CRC-32 (minutes) without a bound.
        let length = 2 * 1024 * 1024 + 8
        var period = [UInt8](repeating: UInt8(ascii: " "), count: 16)
        for index in 0..<4 { period[index] = UInt8(truncatingIfNeeded: length >> (8 * index)) }
        period[8] = UInt8(ascii: "{")
        period[15] = UInt8(ascii: "}")
        var bytes = [UInt8](repeating: 0xFF, count: 8)
        bytes.reserveCapacity(8 + 4 * 1024 * 1024)
        for _ in 0..<(256 * 1024) { bytes.append(contentsOf: period) }
        let log = Data(bytes)
        let read = OfflineJournal.read(log)
        #expect(read.items.isEmpty)
        #expect(read.validLength == 0)
    }

    @Test("A write the disk has no room for is told apart from other failures of the storage")
    func aFullDiskIsNoSpace() throws {
        #if os(Linux)
            // `/dev/full` (Linux's) answers every write with ENOSPC, as a full disk does.
            let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
            try #require(full >= 0)
            defer { close(full) }
            #expect(throws: OfflineQueueError.noSpace("the queue's journal cannot be written: No space left on device")) {
                try OfflineJournal.writeAll(Data("record".utf8), to: full)
            }
        #endif
        #expect(throws: OfflineQueueError.storage("the queue's journal cannot be written: Bad file descriptor")) {
            try OfflineJournal.writeAll(Data("record".utf8), to: -1)
        }
        #expect(OfflineQueueError.system("the journal", errno: EDQUOT) == .noSpace("the journal: \(String(cString: strerror(EDQUOT)))"))
    }

    @Test("Opening removes the temporary file a compaction cut short left behind")
    func leftoverCompactionFileIsRemoved() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let temporary = folder.appendingPathComponent("queue.log.tmp")
        try Data("half a log".utf8).write(to: temporary)
        let journal = try OfflineJournal(folder: folder)
        #expect(try journal.load().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: temporary.path))
    }

    @Test("Compaction keeps exactly the live items; a second process cannot open the same folder")
    func compactionAndLock() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let items = try (0..<100).map(Self.item)
        let journal = try OfflineJournal(folder: folder)
        _ = try journal.load()
        try await journal.append(items.map { .add($0) })
        try await journal.append(items.dropLast(2).map { .done($0.id) })
        let before = try Data(contentsOf: folder.appendingPathComponent("queue.log")).count
        await journal.compactIfWorthIt()
        let after = try Data(contentsOf: folder.appendingPathComponent("queue.log")).count
        #expect(after < before / 10)
        try await journal.append([.done(items[99].id)])
        #expect(try OfflineJournal.liveItems(in: folder) == [items[98]])
        #expect(throws: OfflineQueueError.folderInUse(folder.path)) { try OfflineJournal(folder: folder) }
        withExtendedLifetime(journal) {}
    }

    @Test("A FIFO planted as the log is refused when the journal opens: nothing waits on it")
    func logThatIsNotAFile() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("queue.log")
        try #require(mkfifo(log.path, 0o600) == 0)
        // Before, the open went through and reading the log waited for a writer, for good.
        #expect(throws: OfflineQueueError.storage("the queue's journal \(log.path) is not a plain file")) {
            try OfflineJournal(folder: folder)
        }
    }

    @Test(
        "A log of few records but many obsolete megabytes is compacted, when asked and when opened; one of a few obsolete megabytes is not")
    func compactionBySize() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("queue.log")
        func large(_ number: Int) throws -> OfflineItem {
            let note = try Self.item(number)
            return OfflineItem(
                id: note.id, enqueuedAt: note.enqueuedAt, user: note.user,
                request: TransportRequest(method: .post, url: note.request.url, body: Data(repeating: UInt8(ascii: "x"), count: 600_000)),
                requiresSession: true, name: "photo")
        }
        let small = try (0..<3).map(Self.item)
        do {
            let journal = try OfflineJournal(folder: folder)
            _ = try journal.load()
            try await journal.append(small.map { .add($0) })
            // Three photos delivered: 2.4 MB obsolete, under the size that counts.
            let few = try (0..<3).map(large)
            try await journal.append(few.map { .add($0) })
            try await journal.append(few.map { .done($0.id) })
            let before = try Data(contentsOf: log).count
            await journal.compactIfWorthIt()
            #expect(try Data(contentsOf: log).count == before)
            // Ten more: 23 records in all, too few for the count of records to say so, but 10 MB obsolete.
            let many = try (3..<13).map(large)
            try await journal.append(many.map { .add($0) })
            try await journal.append(many.map { .done($0.id) })
            await journal.compactIfWorthIt()
            #expect(try Data(contentsOf: log).count < 10_000)
            #expect(try OfflineJournal.liveItems(in: folder) == small)
            // Left obsolete again, then closed.
            let more = try (13..<23).map(large)
            try await journal.append(more.map { .add($0) })
            try await journal.append(more.map { .done($0.id) })
        }
        #expect(try Data(contentsOf: log).count > 5_000_000)
        let reopened = try OfflineJournal(folder: folder)
        #expect(try reopened.load() == small)
        #expect(try Data(contentsOf: log).count < 10_000)
    }
}

import CZlib
import Foundation
import Networking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The offline queue's durable storage: an append-only log of records (`add` an item, `done` with
/// an id), each framed by its length and CRC-32 and synced (`fsync`; `F_FULLFSYNC` on Apple
/// platforms) before the caller is told, so a request reported as queued survives a crash or a
/// `kill -9` at any moment. An append that fails
/// (a full disk, a failed sync) is cut off again at once, so later records never follow a torn
/// one. Should that cut fail too, the failed records may be whole on disk (an `add` its caller
/// heard was not kept, a `done` for a request still queued): the log is rewritten at once from the
/// live items, as a compaction does; should that fail as well, reading steps over the torn bytes,
/// and the requests whose `add` stayed whole are marked done, at once or with the next write that
/// succeeds (only a process that ends before then finds them, or loses a request whose `done`
/// stayed, after its restart). A torn or corrupt record
/// (what a crash mid-write leaves at the end, or a damaged disk block in the middle) is skipped up
/// to the next intact record, so one bad block costs its own records only (a lost `done` brings its
/// request back, to be sent again under its `Idempotency-Key`; on a file system that can show a
/// file's old blocks after a power loss, such as ext4 with `data=writeback`, intact records of an
/// earlier log may come back the same way); a torn end is cut off.
/// An intact record that does not decode (written by another version of the app) is skipped too,
/// and kept: a compaction copies it, as it copies a `done` for a request this version never saw
/// added, after the live items and in their order, so that version finds its records again; a
/// compaction drops only damaged records and what this version knows is over. A record of
/// length 0 counts as torn: a tail of zeros (a power loss on some file systems) has a valid
/// checksum. When most records are obsolete, the log is rewritten
/// with the live items only, into a temporary file that is synced and renamed over the log (and
/// the folder synced), so a crash leaves the old log or the new; a temporary file a failed or
/// cut-short compaction left is removed.
///
/// One process at a time: opening takes an exclusive `flock` on a lock file in the folder.
///
/// Thread-safety (hence `@unchecked Sendable`): every file operation runs on `queue`, a serial
/// dispatch queue, so records never interleave and no lock is held while the disk works; callers
/// await the result.
final class OfflineJournal: @unchecked Sendable {
    enum Record: Codable {
        case add(OfflineItem)
        case done(UUID)
    }

    private let folder: URL
    private let logURL: URL
    private let queue = DispatchQueue(label: "Networking.OfflineJournal")
    private var descriptor: Int32 = -1
    private var lockDescriptor: Int32 = -1
    private var records = 0
    private var size: Int64 = 0
    /// The items on disk and not done, in order: what a compaction keeps.
    private var live: [OfflineItem] = []
    /// The size of each live item's record, and their sum: about what a compaction writes.
    private var liveSizes: [UUID: Int] = [:]
    private var liveBytes: Int64 = 0
    /// The records of another version of the app the log holds (see ``read(_:)``), which a
    /// compaction copies.
    private var foreignFrames: [Data] = []

    /// The requests of a failed append whose bytes could not be cut off, not yet marked done: the
    /// next write that succeeds marks them first (see ``owe(_:)``).
    private var owedCancellations: [UUID] = []

    /// A failure every write meets before it touches the file, while set (for tests: a full disk).
    private var writeFault: OfflineQueueError?
    /// How many syncs, and cuts after them, are still to fail (for tests: a disk failing both).
    private var failingSyncs = 0
    private var failingCuts = 0

    /// Above this size, a log is also compacted when most of its bytes are obsolete.
    static let compactionSize: Int64 = 4 * 1024 * 1024

    /// The most bytes one record may have (a request body kept in memory counts).
    static let maximumRecordSize = 64 * 1024 * 1024

    /// Opens (or creates) the journal in `folder` and reads the items it holds, in order.
    ///
    /// - Throws: ``OfflineQueueError`` when the folder cannot be used or another process holds it.
    init(folder: URL) throws(OfflineQueueError) {
        self.folder = folder
        logURL = folder.appendingPathComponent("queue.log")
        // The folders this creates, innermost first: each one's name is synced in its parent.
        var created: [URL] = []
        var missing = folder
        while !FileManager.default.fileExists(atPath: missing.path), missing.pathComponents.count > 1 {
            created.append(missing)
            missing = missing.deletingLastPathComponent()
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .storage("the queue folder \(folder.path) cannot be created: \(error.localizedDescription)")
        }
        lockDescriptor = open(folder.appendingPathComponent("queue.lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockDescriptor >= 0 else { throw .system("the queue's lock file cannot be opened", errno: errno) }
        // `deinit` closes the lock file.
        switch Self.lock(lockDescriptor) {
        case 0: break
        case EWOULDBLOCK: throw .folderInUse(folder.path)
        case let failure: throw .system("the queue's lock file cannot be locked", errno: failure)
        }
        // A compaction cut short by a crash leaves its temporary file; the log itself is whole.
        _ = unlink(folder.appendingPathComponent(Self.temporaryName).path)
        let existed = FileManager.default.fileExists(atPath: logURL.path)
        descriptor = open(logURL.path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else { throw .system("the queue's journal cannot be opened", errno: errno) }
        // Anything but a plain file there (a FIFO would block the read for good) is not a journal.
        var information = stat()
        guard fstat(descriptor, &information) == 0, information.st_mode & S_IFMT == S_IFREG else {
            throw .storage("the queue's journal \(logURL.path) is not a plain file")
        }
        // A new log's name must reach the disk too, or a power loss could take it with its records;
        // so must a new folder's, in the folder that holds it.
        if !existed { Self.synchronize(folder: folder) }
        for made in created { Self.synchronize(folder: made.deletingLastPathComponent()) }
    }

    /// Takes the exclusive lock, waiting up to half a second for it: a child process this one
    /// is starting (a fork not yet past its `exec`) briefly holds a copy of every descriptor, and
    /// with it a lock a closed journal had. A journal open in another process keeps it longer.
    /// `0`, or the last failure's `errno` (`EWOULDBLOCK` while another holds it; another where
    /// the file system cannot lock).
    private static func lock(_ descriptor: Int32) -> Int32 {
        var failure = EWOULDBLOCK
        for _ in 0..<50 {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return 0 }
            failure = errno
            guard failure == EWOULDBLOCK || failure == EINTR else { return failure }
            usleep(10_000)
        }
        return failure == EINTR ? EWOULDBLOCK : failure
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if lockDescriptor >= 0 { close(lockDescriptor) }
    }

    /// The live items, in order, from the log (a torn tail is cut off).
    func load() throws(OfflineQueueError) -> [OfflineItem] {
        try loadMeasured().map(\.item)
    }

    /// The live items, in order, each with the size of its record: what it costs the queue.
    func loadMeasured() throws(OfflineQueueError) -> [(item: OfflineItem, bytes: Int)] {
        let data: Data
        do {
            data = try Data(contentsOf: logURL)
        } catch {
            throw .storage("the queue's journal cannot be read: \(error.localizedDescription)")
        }
        let (items, validLength, count, bytes, foreign) = Self.read(data)
        size = Int64(data.count)
        if validLength < data.count { cut(to: Int64(validLength)) }
        records = count
        live = items
        liveSizes = bytes
        liveBytes = bytes.values.reduce(0) { $0 + Int64($1) }
        foreignFrames = foreign
        // What a previous run left obsolete is not read again at the next start.
        if isWorthCompacting { compact(live) }
        return items.map { ($0, bytes[$0.id] ?? 0) }
    }

    /// The live items a log holds, the length of its valid records, their number, the size of
    /// each live item's record, and the frames a compaction keeps for another version of the app:
    /// intact records this one cannot read, and `done` records for requests it never saw added.
    static func read(_ data: Data) -> (items: [OfflineItem], validLength: Int, records: Int, bytes: [UUID: Int], foreign: [Data]) {
        var bytes: [UUID: Int] = [:]
        var items: [UUID: OfflineItem] = [:]
        var order: [UUID] = []
        var added = Set<UUID>()
        var offset = 0
        var end = 0
        var count = 0
        var foreign: [Data] = []
        let decoder = FastJSONDecoder()
        // Bytes the search for intact records may checksum, over the whole read. A false frame
        // inside intact JSON has a length word of text (at least 512 MiB, over the maximum) and is
        // never checksummed, and each resumption charges one real record: twice the log is plenty
        // for damage, and bounds the work on a file made so that every offset looks like a frame.
        var budget = data.count > Int.max / 2 ? Int.max : 2 * data.count
        while offset < data.count {
            guard let (record, next) = record(in: data, at: offset, decoder: decoder) else {
                // Torn or corrupt: go on at the next intact record, if any (else this is the end).
                guard let resumption = nextIntactRecord(in: data, after: offset, budget: &budget) else { break }
                offset = resumption
                continue
            }
            switch record {
            case .add(let item)?:
                if items[item.id] == nil { order.append(item.id) }
                added.insert(item.id)
                items[item.id] = item
                bytes[item.id] = next - offset
            case .done(let id)?:
                if !added.contains(id) { foreign.append(data.subdata(in: offset..<next)) }
                items[id] = nil
                bytes[id] = nil
            case nil: foreign.append(data.subdata(in: offset..<next))
            }
            count += 1
            offset = next
            end = next
        }
        return (order.compactMap { items[$0] }, end, count, bytes, foreign)
    }

    /// The offset of the first intact record after `offset`. A record's payload is a JSON object,
    /// so only a frame whose payload starts with `{` and ends with `}` has its checksum computed:
    /// the scan costs one pass, and a frame found by chance in damaged bytes must also match its
    /// CRC-32. `budget` is how many payload bytes may still have their checksum computed: once it
    /// runs out, the rest of the log counts as torn.
    static func nextIntactRecord(in data: Data, after offset: Int, budget: inout Int) -> Int? {
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> Int? in
            var candidate = offset + 1
            while candidate <= buffer.count - 9 {
                defer { candidate += 1 }
                guard buffer[candidate + 8] == UInt8(ascii: "{") else { continue }
                guard let length = length(buffer, candidate), length > 1, buffer.count - candidate - 8 >= length,
                    buffer[candidate + 7 + length] == UInt8(ascii: "}")
                else { continue }
                guard length <= budget else { return nil }
                budget -= length
                let payload = UnsafeRawBufferPointer(rebasing: buffer[(candidate + 8)..<(candidate + 8 + length)])
                if crc(payload) == word(buffer, candidate + 4) { return candidate }
            }
            return nil
        }
    }

    /// The live items of the journal in `folder`, read without opening it (for diagnostics and tests).
    static func liveItems(in folder: URL) throws -> [OfflineItem] {
        read(try Data(contentsOf: folder.appendingPathComponent("queue.log"))).items
    }

    /// A record framed for the log: the queue measures a request by it before keeping it.
    struct Framed: Sendable {
        let record: Record
        let frame: Data
    }

    /// Frames a record; throws when it cannot be encoded or is over ``maximumRecordSize``.
    static func framed(_ record: Record) throws(OfflineQueueError) -> Framed {
        let payload: Data
        do { payload = try JSONEncoder().encode(record) } catch { throw .storage("the request could not be encoded to be kept: \(error)") }
        guard payload.count <= maximumRecordSize else { throw .storage("a request is too large to be kept in the queue") }
        return Framed(record: record, frame: frame(payload))
    }

    /// Frames a record on the journal's queue: a body of megabytes is encoded (JSON, Base64)
    /// off Swift's cooperative threads.
    func framedOffThread(_ record: Record) async throws(OfflineQueueError) -> Framed {
        let result: Result<Framed, OfflineQueueError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(OfflineQueueError) in try Self.framed(record) }) }
        }
        return try result.get()
    }

    /// Appends records and syncs them to disk before returning.
    func append(_ new: [Record]) async throws(OfflineQueueError) {
        var framed: [Framed] = []
        for record in new { framed.append(try Self.framed(record)) }
        try await append(framed)
    }

    /// Appends records framed already and syncs them to disk before returning.
    func append(_ new: [Framed]) async throws(OfflineQueueError) {
        let result: Result<Void, OfflineQueueError> = await withCheckedContinuation { continuation in
            submit(new) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Starts appending records framed already, and returns at once: records submitted one
    /// after another are written in that order, whatever the threads of the callers, and `done`
    /// hears of each write once it is synced.
    func submit(_ new: [Framed], then done: @escaping @Sendable (Result<Void, OfflineQueueError>) -> Void) {
        // Unowned: the caller holds the journal while it waits, and a closure still holding it
        // after the write would delay `deinit`, and with it the lock's release.
        queue.async { [unowned self] in
            done(Result { () throws(OfflineQueueError) in try self.write(new) })
        }
    }

    /// Rewrites the log with its live items only, when most of it is obsolete. The live items
    /// are the journal's own record of what it wrote, so a record appended meanwhile is never dropped.
    func compactIfWorthIt() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [unowned self] in
                if self.isWorthCompacting { self.compact(self.live) }
                continuation.resume()
            }
        }
    }

    /// Whether most of the log is obsolete: most of its records (many small requests), or, past
    /// ``compactionSize``, most of its bytes (a few large bodies delivered leave few records,
    /// each of megabytes, that every start would read again). Each compaction then rewrites at
    /// most as many bytes as were appended since the last one.
    private var isWorthCompacting: Bool {
        let kept = live.count + foreignFrames.count
        return (records > 64 && records > kept * 4) || (size > Self.compactionSize && size > 2 * liveBytes)
    }

    /// Makes every write fail with `fault` until called with `nil` (for tests).
    func simulateWriteFailure(_ fault: OfflineQueueError?) {
        queue.sync { writeFault = fault }
    }

    /// Makes the next `count` syncs fail after their bytes are written, and the cut after each
    /// fail too, so that the bytes stay (for tests).
    func simulateSyncAndCutFailures(_ count: Int) {
        queue.sync {
            failingSyncs = count
            failingCuts = count
        }
    }

    // MARK: - On the queue

    private func write(_ new: [Framed]) throws(OfflineQueueError) {
        if let writeFault { throw writeFault }
        let written = Self.cancellations(owedCancellations) + new
        let start = size
        do throws(OfflineQueueError) {
            try appendDurably(written)
        } catch {
            // Cut off what part of it reached the file, so that the next record follows an intact
            // one. Should that fail, the failed records may be whole on disk (a `done` would drop a
            // request still queued; an `add` bring back one its caller heard was not): the log is
            // rewritten from the live items, else what they added is marked done.
            if !cut(to: start), !compact(live) { owe(wholeAdds(of: written, from: start, to: size)) }
            throw error
        }
        owedCancellations = []
        record(written)
    }

    /// Writes records at the log's end and syncs them, or throws the system's reason.
    private func appendDurably(_ records: [Framed]) throws(OfflineQueueError) {
        var bytes = Data()
        for framed in records { bytes += framed.frame }
        try Self.writeAll(bytes, to: descriptor)
        guard sync(descriptor) == 0 else { throw .system("the queue's journal cannot be synced", errno: errno) }
    }

    /// ``durableSync(_:)``, or a simulated failure (`EIO`) while one is due.
    private func sync(_ file: Int32) -> Int32 {
        guard failingSyncs > 0 else { return Self.durableSync(file) }
        failingSyncs -= 1
        errno = EIO
        return -1
    }

    /// `done` records for `ids`.
    private static func cancellations(_ ids: [UUID]) -> [Framed] {
        ids.compactMap { try? framed(.done($0)) }
    }

    /// The new items (not live) whose `add` records, written from `start`, lie whole before `end`.
    private func wholeAdds(of written: [Framed], from start: Int64, to end: Int64) -> [UUID] {
        var offset = start
        var ids: [UUID] = []
        for framed in written {
            offset += Int64(framed.frame.count)
            if offset <= end, case .add(let item) = framed.record, liveSizes[item.id] == nil { ids.append(item.id) }
        }
        return ids
    }

    /// Marks done the requests of a failed append whose records stayed whole on disk: they would
    /// be sent after a restart though their caller heard they were not queued. Tried at once;
    /// should that fail too, the next write that succeeds carries them first. (An item written
    /// again whose new record stayed is not marked: it keeps that record's content.)
    private func owe(_ ids: [UUID]) {
        owedCancellations += ids
        guard !owedCancellations.isEmpty else { return }
        let cancellations = Self.cancellations(owedCancellations)
        let start = size
        do throws(OfflineQueueError) {
            try appendDurably(cancellations)
        } catch {
            _ = cut(to: start)
            return
        }
        owedCancellations = []
        record(cancellations)
    }

    /// Counts records written and synced, and keeps the live items in step with them.
    private func record(_ written: [Framed]) {
        records += written.count
        size += written.reduce(0) { $0 + Int64($1.frame.count) }
        for framed in written {
            switch framed.record {
            case .add(let item):
                // An item written again (updated) keeps its place, as reading the log gives it.
                if let index = live.firstIndex(where: { $0.id == item.id }) { live[index] = item } else { live.append(item) }
                liveBytes += Int64(framed.frame.count) - Int64(liveSizes[item.id] ?? 0)
                liveSizes[item.id] = framed.frame.count
            case .done(let id):
                live.removeAll { $0.id == id }
                liveBytes -= Int64(liveSizes.removeValue(forKey: id) ?? 0)
            }
        }
    }

    /// Cuts the log back to `length`, and says whether it could. Should that fail, `size` becomes
    /// the file's real length, and the torn bytes stay where reading steps over them.
    @discardableResult
    private func cut(to length: Int64) -> Bool {
        let simulatedFailure = failingCuts > 0
        if simulatedFailure { failingCuts -= 1 }
        // `off_t` has 32 bits on Linux for armv7; a log that long is not cut (read steps over the rest).
        if !simulatedFailure, let end = off_t(exactly: length), ftruncate(descriptor, end) == 0 {
            size = length
            return true
        }
        var status = stat()
        if fstat(descriptor, &status) == 0 { size = Int64(status.st_size) }
        return false
    }

    static let temporaryName = "queue.log.tmp"

    /// Rewrites the log with `live` and the other version's records; says whether it could.
    @discardableResult
    private func compact(_ live: [OfflineItem]) -> Bool {
        let temporary = folder.appendingPathComponent(Self.temporaryName)
        var bytes = Data()
        var sizes: [UUID: Int] = [:]
        for item in live {
            guard let framed = try? Self.framed(.add(item)) else { return false }
            bytes += framed.frame
            sizes[item.id] = framed.frame.count
        }
        for frame in foreignFrames { bytes += frame }
        // Opened for appending, so that once renamed it is the log that writes go on in.
        let file = open(temporary.path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o600)
        guard file >= 0 else { return false }
        guard (try? Self.writeAll(bytes, to: file)) != nil, sync(file) == 0, rename(temporary.path, logURL.path) == 0 else {
            close(file)
            _ = unlink(temporary.path)
            return false
        }
        Self.synchronize(folder: folder)
        close(descriptor)
        descriptor = file
        // The new log holds the live items only: a failed append's records are gone with the old.
        owedCancellations = []
        records = live.count + foreignFrames.count
        size = Int64(bytes.count)
        liveSizes = sizes
        liveBytes = size
        return true
    }

    #if !canImport(Darwin)
        /// Writes a file's data through to the storage (`OfflineJournal+Darwin.swift` has Apple's).
        static func durableSync(_ descriptor: Int32) -> Int32 { fsync(descriptor) }
    #endif

    /// Syncs a folder, so that the names made or replaced in it reach the disk.
    private static func synchronize(folder: URL) {
        let directory = open(folder.path, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    /// Writes all of `bytes` to `file`, or throws the system's reason (`.noSpace` on a full disk).
    static func writeAll(_ bytes: Data, to file: Int32) throws(OfflineQueueError) {
        let failure: Int32? = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                guard let base = buffer.baseAddress else { return nil }
                let written = posixWrite(file, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                // A file system that takes nothing would have this loop spin for good.
                guard written > 0 else { return EIO }
                offset += written
            }
            return nil
        }
        if let failure { throw .system("the queue's journal cannot be written", errno: failure) }
    }

    // MARK: - Framing

    /// `[length: UInt32 LE][crc32: UInt32 LE][payload]`.
    static func frame(_ payload: Data) -> Data {
        var header = Data(count: 8)
        let length = UInt32(payload.count)
        let checksum = crc(payload)
        for index in 0..<4 {
            header[index] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(index)))
            header[4 + index] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt32(index)))
        }
        return header + payload
    }

    /// The record at `offset` and the offset after it, or `nil` when it is torn or corrupt. An
    /// intact record (its length and checksum hold) that does not decode is read as `nil`, so it is
    /// skipped rather than ending the log.
    static func record(in data: Data, at offset: Int, decoder: FastJSONDecoder) -> (Record?, Int)? {
        guard offset >= 0, data.count - offset >= 8 else { return nil }
        let intact: Int? = data.withUnsafeBytes { buffer in
            guard let length = length(buffer, offset), length > 0, buffer.count - offset - 8 >= length else { return nil }
            let payload = UnsafeRawBufferPointer(rebasing: buffer[(offset + 8)..<(offset + 8 + length)])
            return crc(payload) == word(buffer, offset + 4) ? length : nil
        }
        guard let length = intact else { return nil }
        let start = data.startIndex + offset + 8
        return (try? decoder.decode(Record.self, from: data.subdata(in: start..<(start + length))), offset + 8 + length)
    }

    /// The length word of the frame at `offset`, when it is at most ``maximumRecordSize``
    /// (compared before it becomes an `Int`, which has 32 bits on watchOS).
    private static func length(_ buffer: UnsafeRawBufferPointer, _ offset: Int) -> Int? {
        let length = word(buffer, offset)
        return length <= UInt32(maximumRecordSize) ? Int(length) : nil
    }

    /// The little-endian 32-bit word at `offset` (which has four bytes after it).
    private static func word(_ buffer: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(buffer[offset + $1]) << (8 * UInt32($1)) }
    }

    static func crc(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { crc($0) }
    }

    static func crc(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(truncatingIfNeeded: crc32(0, buffer.bindMemory(to: Bytef.self).baseAddress, uInt(buffer.count)))
    }
}

private func posixWrite(_ file: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Darwin)
        Darwin.write(file, bytes, count)
    #elseif canImport(Musl)
        Musl.write(file, bytes, count)
    #else
        Glibc.write(file, bytes, count)
    #endif
}

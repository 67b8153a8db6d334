import Foundation

/// Everything one call to `FastJSONDecoder.decode` shares: a copy of the input, its tape, the
/// options, and the scratch state; plus the readers that turn tape values into Swift values and the
/// key tables of keyed containers.
///
/// The input is copied (with zero padding, which the scanner's 8-byte reads rely on) so that
/// decoders or containers a model keeps after `init(from:)` returns can never read freed memory.
final class FastJSONSession {
    let bytes: UnsafeMutablePointer<UInt8>
    let byteCount: Int
    let tape: FastJSONTape
    let options: FastJSONOptions
    let scratch: UnsafeMutablePointer<FastJSONScratch>
    /// The same memory as plain pointers, for the hot paths.
    let reader: FastJSONReader

    /// Zero bytes after the input.
    static let padding = 16
    /// Tables with more members than this get a hash index; smaller ones are searched linearly.
    static let linearSearchLimit = 16

    init(input: UnsafeRawBufferPointer, options: FastJSONOptions) throws(FastJSONSyntaxError) {
        let count = input.count
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: count + FastJSONSession.padding)
        if let base = input.baseAddress, count > 0 {
            UnsafeMutableRawPointer(copy).copyMemory(from: base, byteCount: count)
        }
        (copy + count).initialize(repeating: 0, count: FastJSONSession.padding)
        do {
            var markUnderscores = false
            if case .convertFromSnakeCase = options.keyStrategy { markUnderscores = true }
            tape = try FastJSONScanner.scan(copy, count: count, markUnderscores: markUnderscores)
        } catch {
            copy.deallocate()
            throw error
        }
        bytes = copy
        byteCount = count
        self.options = options
        let scratch = UnsafeMutablePointer<FastJSONScratch>.allocate(capacity: 1)
        scratch.initialize(to: FastJSONScratch(valueCount: tape.count))
        self.scratch = scratch
        reader = FastJSONReader(bytes: copy, tape: tape, scratch: scratch, options: options)
    }

    deinit {
        scratch.pointee.release()
        scratch.deinitialize(count: 1)
        scratch.deallocate()
        tape.words.deallocate()
        bytes.deallocate()
    }

    // MARK: - Paths and errors

    func codingPath(_ node: Int32) -> [any CodingKey] {
        scratch.pointee.codingPath(node)
    }

    func codingPath(_ node: Int32, _ component: FastJSONPathNode.Component?) -> [any CodingKey] {
        var path = scratch.pointee.codingPath(node)
        if let component { path.append(component.codingKey) }
        return path
    }

    var userInfo: [CodingUserInfoKey: Any] {
        if let cached = scratch.pointee.userInfo { return cached }
        var converted: [CodingUserInfoKey: Any] = [:]
        for (key, value) in options.userInfo { converted[key] = value }
        scratch.pointee.userInfo = converted
        return converted
    }

    /// `JSONDecoder`'s error for a value that could not be read as `type`.
    func error(
        _ failure: FastJSONValueFailure, _ type: Any.Type, node: Int32, _ component: FastJSONPathNode.Component?
    ) -> any Error {
        switch failure {
        case .syntax(let error):
            return error
        case .valueNotFound:
            return DecodingError.valueNotFound(
                type,
                DecodingError.Context(
                    codingPath: codingPath(node, component),
                    debugDescription: "Cannot get value of type \(type) -- found null value instead"))
        case .typeMismatch(let found):
            return DecodingError.typeMismatch(
                type,
                DecodingError.Context(
                    codingPath: codingPath(node, component),
                    debugDescription: "Expected to decode \(type) but found \(FastJSONTape.describe(found)) instead."))
        }
    }

    // MARK: - Key tables

    /// Builds the key table of the object at `object` (whose coding path is `node`): each member's key
    /// unescaped and converted by the key strategy, the first of equal keys kept. Keys are equal as
    /// in `JSONDecoder`'s `[String: Value]`: as Swift strings, which for ASCII keys means byte for
    /// byte; only a table with a non-ASCII key pays for string comparisons. Like `JSONDecoder`, this
    /// reads every key, so a key with a bad escape or bad UTF-8 fails here.
    func makeKeyTable(object: Int32, node: Int32) throws(FastJSONSyntaxError) -> FastJSONKeyTable {
        let memberCount = tape.elementCount(object)
        let header = scratch.pointee.records.count
        scratch.pointee.generation &+= 1
        let generation = scratch.pointee.generation
        let hashed = memberCount > FastJSONSession.linearSearchLimit
        var slotStart = -1
        var slotMask = 0
        if hashed {
            var capacity = 32
            while capacity < memberCount &* 2 { capacity &*= 2 }
            slotStart = scratch.pointee.slots.count
            slotMask = capacity &- 1
            scratch.pointee.slots.append(repeating: 0, count: capacity)
        }
        scratch.pointee.records.append(
            FastJSONKeyRecord(
                keyStart: 0, keyLength: FastJSONKeyRecord.headerMarker, valueIndex: generation,
                extra: hashed ? UInt32(truncatingIfNeeded: slotStart) : UInt32.max))

        let defaultKeys = options.usesDefaultKeys
        var customPath: [any CodingKey]?
        if case .custom = options.keyStrategy { customPath = codingPath(node) }

        var kept = 0
        var lengthsSeen: UInt64 = 0
        var hasNonASCIIKeys = false
        var key = object &+ 1
        for _ in 0..<memberCount {
            let value = key &+ 1
            let following = tape.next(value)
            defer { key = following }
            var record: FastJSONKeyRecord
            if defaultKeys, tape.flags(key) == 0 {
                // The common case: an ASCII key without escapes, used as it is.
                record = FastJSONKeyRecord(
                    keyStart: UInt32(truncatingIfNeeded: tape.offset(key)), keyLength: UInt32(truncatingIfNeeded: tape.length(key)),
                    valueIndex: UInt32(truncatingIfNeeded: value), extra: 0)
            } else {
                record = try keyRecord(key, customPath: customPath)
                record.valueIndex = UInt32(truncatingIfNeeded: value)
                let isASCII =
                    record.extra & FastJSONKeyRecord.inKeyBytes == 0
                    ? tape.flags(key) & FastJSONTape.nonASCII == 0
                    : FastJSONSnakeCase.isASCII(reader.keyPointer(record), Int(record.keyLength))
                if !isASCII {
                    record.extra |= FastJSONKeyRecord.nonASCII
                    hasNonASCIIKeys = true
                }
            }
            let keyPointer = reader.keyPointer(record)
            let keyLength = Int(record.keyLength)
            if hashed {
                var slot = Int(truncatingIfNeeded: FastJSONReader.hash(keyPointer, keyLength)) & slotMask
                var duplicate = false
                while true {
                    let occupant = Int(scratch.pointee.slots[slotStart &+ slot])
                    if occupant == 0 { break }
                    let other = scratch.pointee.records[header &+ occupant]
                    if Int(other.keyLength) == keyLength, FastJSONReader.equal(reader.keyPointer(other), keyPointer, keyLength) {
                        duplicate = true
                        break
                    }
                    slot = (slot &+ 1) & slotMask
                }
                if duplicate { continue }
                scratch.pointee.slots[slotStart &+ slot] = UInt32(truncatingIfNeeded: kept &+ 1)
            } else {
                // Only keys of a length seen before can be duplicates.
                let lengthBit: UInt64 = 1 &<< UInt64(keyLength & 63)
                if lengthsSeen & lengthBit != 0 {
                    var duplicate = false
                    for k in 0..<kept {
                        let other = scratch.pointee.records[header &+ 1 &+ k]
                        if Int(other.keyLength) == keyLength, FastJSONReader.equal(reader.keyPointer(other), keyPointer, keyLength) {
                            duplicate = true
                            break
                        }
                    }
                    if duplicate { continue }
                }
                lengthsSeen |= lengthBit
            }
            scratch.pointee.records.append(record)
            kept &+= 1
        }
        if hasNonASCIIKeys, kept > 1 {
            kept = removeEquivalentKeys(header: header, count: kept, slotStart: slotStart, slotMask: slotMask)
        }
        return FastJSONKeyTable(
            header: Int32(truncatingIfNeeded: header), count: Int32(truncatingIfNeeded: kept), generation: generation,
            slotMask: Int32(truncatingIfNeeded: slotMask), hasNonASCIIKeys: hasNonASCIIKeys)
    }

    /// Drops the members of a new table whose key equals an earlier member's as a Swift string
    /// without being the same bytes ("café" precomposed and decomposed, "K" and the Kelvin sign):
    /// `JSONDecoder` keeps the first of those too. Rebuilds the hash index if a member was dropped.
    /// Returns the number of members left.
    private func removeEquivalentKeys(header: Int, count: Int, slotStart: Int, slotMask: Int) -> Int {
        var seen = Set<String>(minimumCapacity: count)
        var kept = 0
        for k in 0..<count {
            let record = scratch.pointee.records[header &+ 1 &+ k]
            guard seen.insert(reader.keyString(record)).inserted else { continue }
            scratch.pointee.records[header &+ 1 &+ kept] = record
            kept &+= 1
        }
        guard kept < count else { return count }
        scratch.pointee.records.truncate(to: header &+ 1 &+ kept)
        if slotStart >= 0 {
            for slot in 0...slotMask { scratch.pointee.slots[slotStart &+ slot] = 0 }
            for k in 0..<kept {
                let record = scratch.pointee.records[header &+ 1 &+ k]
                var slot = Int(truncatingIfNeeded: FastJSONReader.hash(reader.keyPointer(record), Int(record.keyLength))) & slotMask
                while scratch.pointee.slots[slotStart &+ slot] != 0 { slot = (slot &+ 1) & slotMask }
                scratch.pointee.slots[slotStart &+ slot] = UInt32(truncatingIfNeeded: k &+ 1)
            }
        }
        return kept
    }

    /// A member's key after unescaping and key conversion.
    private func keyRecord(_ key: Int32, customPath: [any CodingKey]?) throws(FastJSONSyntaxError) -> FastJSONKeyRecord {
        let flags = tape.flags(key)
        let offset = tape.offset(key)
        let length = tape.length(key)
        var record: FastJSONKeyRecord
        if flags & FastJSONTape.needsUnescaping == 0 {
            if flags & FastJSONTape.nonASCII != 0, !FastJSONStringParser.isValidUTF8(bytes + offset, length) {
                throw FastJSONSyntaxError("Invalid UTF-8 in object key", at: offset)
            }
            record = FastJSONKeyRecord(
                keyStart: UInt32(truncatingIfNeeded: offset), keyLength: UInt32(truncatingIfNeeded: length), valueIndex: 0, extra: 0)
        } else {
            let start = scratch.pointee.keyBytes.count
            try FastJSONStringParser.unescape(bytes + offset, length, offset: offset, into: &scratch.pointee.keyBytes)
            let unescapedLength = scratch.pointee.keyBytes.count &- start
            guard FastJSONStringParser.isValidUTF8(scratch.pointee.keyBytes.base + start, unescapedLength) else {
                throw FastJSONSyntaxError("Invalid UTF-8 in object key", at: offset)
            }
            record = FastJSONKeyRecord(
                keyStart: UInt32(truncatingIfNeeded: start), keyLength: UInt32(truncatingIfNeeded: unescapedLength),
                valueIndex: 0, extra: FastJSONKeyRecord.inKeyBytes)
        }

        switch options.keyStrategy {
        case .useDefaultKeys:
            return record
        case .convertFromSnakeCase:
            let n = Int(record.keyLength)
            // The scanner marked raw keys with an underscore; unescaped keys are checked here.
            let unescaped = record.extra & FastJSONKeyRecord.inKeyBytes != 0
            if unescaped {
                guard FastJSONSnakeCase.mayChange(reader.keyPointer(record), n) else { return record }
            } else if flags & FastJSONTape.hasUnderscore == 0 {
                return record
            }
            if unescaped ? FastJSONSnakeCase.isASCII(reader.keyPointer(record), n) : flags & FastJSONTape.nonASCII == 0 {
                // Convert into fresh room, then re-read the source pointer (the buffer may have moved).
                scratch.pointee.keyBytes.reserve(n)
                let start = scratch.pointee.keyBytes.count
                let source = reader.keyPointer(record)
                guard FastJSONSnakeCase.convertASCII(source, n, into: &scratch.pointee.keyBytes) else { return record }
                return FastJSONKeyRecord(
                    keyStart: UInt32(truncatingIfNeeded: start),
                    keyLength: UInt32(truncatingIfNeeded: scratch.pointee.keyBytes.count &- start),
                    valueIndex: 0, extra: FastJSONKeyRecord.inKeyBytes)
            }
            return appendKey(FastJSONSnakeCase.convertExactly(reader.keyString(record)))
        case .custom(let convert):
            var path = customPath ?? []
            path.append(FastJSONCodingKey(stringValue: reader.keyString(record)))
            return appendKey(convert(path).stringValue)
        }
    }

    /// The tape index of the value for `key`, or -1, also for a table that is no longer intact
    /// (rebuilt for this one lookup).
    func find(_ key: String, in table: FastJSONKeyTable, object: Int32, node: Int32) -> Int32 {
        if reader.isIntact(table) { return reader.find(key, in: table) }
        let marks = scratch.pointee.marks
        defer { scratch.pointee.restore(marks) }
        guard let rebuilt = try? makeKeyTable(object: object, node: node) else { return -1 }
        return reader.find(key, in: rebuilt)
    }

    /// The keys of a table, in document order (first occurrences).
    func keys(of table: FastJSONKeyTable, object: Int32, node: Int32) -> [String] {
        if reader.isIntact(table) { return reader.keys(of: table) }
        let marks = scratch.pointee.marks
        defer { scratch.pointee.restore(marks) }
        guard let rebuilt = try? makeKeyTable(object: object, node: node) else { return [] }
        return reader.keys(of: rebuilt)
    }

    /// A record for a key stored in `keyBytes`.
    private func appendKey(_ key: String) -> FastJSONKeyRecord {
        let start = scratch.pointee.keyBytes.count
        var key = key
        key.withUTF8 { scratch.pointee.keyBytes.append(contentsOf: $0) }
        return FastJSONKeyRecord(
            keyStart: UInt32(truncatingIfNeeded: start), keyLength: UInt32(truncatingIfNeeded: scratch.pointee.keyBytes.count &- start),
            valueIndex: 0, extra: FastJSONKeyRecord.inKeyBytes)
    }

}

import Foundation

/// The hot-path view of a `FastJSONSession`: the input, the tape and the scratch state as plain
/// pointers, with the readers that turn tape values into Swift values and the key-table lookup.
///
/// It holds no counted references, so decoders and containers can keep and copy it, and call it,
/// without retain/release traffic (which otherwise costs a fifth of the decoding time). Its
/// session must outlive it; every holder also holds the session or a decoder that does.
struct FastJSONReader {
    let bytes: UnsafeMutablePointer<UInt8>
    let tape: FastJSONTape
    let scratch: UnsafeMutablePointer<FastJSONScratch>
    /// For the rare paths that need the strategies (non-conforming floats).
    unowned(unsafe) let options: FastJSONOptions

    // MARK: - Values

    @inline(__always) func bool(_ value: Int32) throws(FastJSONValueFailure) -> Bool {
        let kind = tape.kind(value)
        if kind == FastJSONTape.true { return true }
        if kind == FastJSONTape.false { return false }
        // JSONDecoder reports a null Bool as a type mismatch, not as a missing value.
        throw .typeMismatch(found: kind)
    }

    @inline(__always) func string(_ value: Int32) throws(FastJSONValueFailure) -> String {
        let kind = tape.kind(value)
        guard kind == FastJSONTape.string else {
            throw kind == FastJSONTape.null ? .valueNotFound : .typeMismatch(found: kind)
        }
        do {
            return try stringContents(value)
        } catch {
            throw .syntax(error)
        }
    }

    /// The text of a string value (which must be a string).
    func stringContents(_ value: Int32) throws(FastJSONSyntaxError) -> String {
        let flags = tape.flags(value)
        let offset = tape.offset(value)
        let length = tape.length(value)
        let start = bytes + offset
        if flags & FastJSONTape.needsUnescaping == 0 {
            guard let string = FastJSONStringParser.string(start, length, isASCII: flags & FastJSONTape.nonASCII == 0) else {
                throw FastJSONSyntaxError("Invalid UTF-8 in string", at: offset)
            }
            return string
        }
        scratch.pointee.stringBytes.truncate(to: 0)
        try FastJSONStringParser.unescape(start, length, offset: offset, into: &scratch.pointee.stringBytes)
        let unescaped = scratch.pointee.stringBytes
        guard let string = FastJSONStringParser.string(unescaped.base, unescaped.count, isASCII: false) else {
            throw FastJSONSyntaxError("Invalid UTF-8 in string", at: offset)
        }
        return string
    }

    /// The bytes of a number value, after the checks common to every numeric type.
    @inline(__always) private func numberBytes(_ value: Int32) throws(FastJSONValueFailure) -> UnsafeBufferPointer<UInt8> {
        let kind = tape.kind(value)
        guard kind == FastJSONTape.number else {
            throw kind == FastJSONTape.null ? .valueNotFound : .typeMismatch(found: kind)
        }
        return UnsafeBufferPointer(start: bytes + tape.offset(value), count: tape.length(value))
    }

    private func notRepresentable(_ number: UnsafeBufferPointer<UInt8>) -> FastJSONValueFailure {
        .syntax(FastJSONSyntaxError("Number \(String(decoding: number, as: UTF8.self)) is not representable in Swift"))
    }

    private func invalidNumber(_ number: UnsafeBufferPointer<UInt8>) -> FastJSONValueFailure {
        .syntax(
            FastJSONSyntaxError(
                "Invalid number \(String(decoding: number, as: UTF8.self))",
                at: number.baseAddress.map { $0 - UnsafePointer(bytes) }))
    }

    /// An integer of any width, with `JSONDecoder`'s rules: digits in range; or a number with a
    /// fraction or exponent whose nearest double is a whole number in range (below 2^53; larger ones
    /// are left to `JSONDecoder`, whose answer then depends on its decimal parser, once it is sure
    /// not to trap).
    @inline(__always) func integer<T: FixedWidthInteger & Decodable>(_ value: Int32, as type: T.Type) throws(FastJSONValueFailure) -> T {
        let number = try numberBytes(value)
        guard let p = number.baseAddress else { throw invalidNumber(number) }
        let n = number.count
        if tape.flags(value) & FastJSONTape.plainInteger != 0 {
            guard FastJSONNumberParser.isValidPlainInteger(p, n) else { throw invalidNumber(number) }
            guard let result = FastJSONNumberParser.plainInteger(p, n, as: T.self) else { throw notRepresentable(number) }
            return result
        }
        return try nonPlainInteger(number, as: T.self)
    }

    private func nonPlainInteger<T: FixedWidthInteger & Decodable>(_ number: UnsafeBufferPointer<UInt8>, as type: T.Type)
        throws(FastJSONValueFailure) -> T
    {
        guard let p = number.baseAddress, FastJSONNumberParser.isValid(p, number.count),
            let double = FastJSONNumberParser.double(p, number.count)
        else { throw invalidNumber(number) }
        guard let result = T(exactly: double) else { throw notRepresentable(number) }
        if double.magnitude < 9_007_199_254_740_992 { return result }
        // JSONDecoder re-reads such numbers as Decimal and truncates. Where its Decimal parser gives
        // up (more integer digits than Decimal's exponent can absorb, about 165, or an exponent out
        // of its range) JSONDecoder traps on a valid number (`JSONScanner.validateNumber` ends in
        // `preconditionFailure`); `Decimal(string:)` runs the same parser and returns nil there, so
        // such numbers are reported as not representable instead. Otherwise ask JSONDecoder for
        // its exact answer.
        guard Decimal(string: String(decoding: number, as: UTF8.self)) != nil else { throw notRepresentable(number) }
        do {
            return try JSONDecoder().decode(T.self, from: Data(number))
        } catch {
            throw notRepresentable(number)
        }
    }

    func double(_ value: Int32) throws(FastJSONValueFailure) -> Double {
        let kind = tape.kind(value)
        if kind == FastJSONTape.number {
            let p = bytes + tape.offset(value)
            let n = tape.length(value)
            let number = UnsafeBufferPointer(start: UnsafePointer(p), count: n)
            if tape.flags(value) & FastJSONTape.plainInteger != 0, n <= 16 {
                // At most 16 digits: an Int64, converted with one correct rounding.
                guard FastJSONNumberParser.isValidPlainInteger(p, n),
                    let integer = FastJSONNumberParser.plainInteger(p, n, as: Int64.self)
                else { throw invalidNumber(number) }
                if integer == 0 { return p[0] == UInt8(ascii: "-") ? -0.0 : 0.0 }
                return Double(integer)
            }
            guard FastJSONNumberParser.isValid(p, n), let result = FastJSONNumberParser.double(p, n) else {
                throw invalidNumber(number)
            }
            guard result.isFinite, result != 0 || FastJSONNumberParser.isTrueZero(p, n) else {
                throw notRepresentable(number)
            }
            return result
        }
        if kind == FastJSONTape.null { throw .valueNotFound }
        if let special = nonConformingFloat(value, kind, as: Double.self) { return special }
        throw .typeMismatch(found: kind)
    }

    func float(_ value: Int32) throws(FastJSONValueFailure) -> Float {
        let kind = tape.kind(value)
        if kind == FastJSONTape.number {
            let p = bytes + tape.offset(value)
            let n = tape.length(value)
            let number = UnsafeBufferPointer(start: UnsafePointer(p), count: n)
            guard FastJSONNumberParser.isValid(p, n), let result = FastJSONNumberParser.float(p, n) else {
                throw invalidNumber(number)
            }
            guard result.isFinite, result != 0 || FastJSONNumberParser.isTrueZero(p, n) else {
                throw notRepresentable(number)
            }
            return result
        }
        if kind == FastJSONTape.null { throw .valueNotFound }
        if let special = nonConformingFloat(value, kind, as: Float.self) { return special }
        throw .typeMismatch(found: kind)
    }

    /// `convertFromString`: a string without escapes that is byte for byte one of the three names.
    private func nonConformingFloat<F: FloatingPoint>(_ value: Int32, _ kind: UInt8, as type: F.Type) -> F? {
        guard kind == FastJSONTape.string, let names = options.nonConformingFloats,
            tape.flags(value) & FastJSONTape.needsUnescaping == 0
        else { return nil }
        let text = UnsafeBufferPointer(start: UnsafePointer(bytes + tape.offset(value)), count: tape.length(value))
        if text.elementsEqual(names.positiveInfinity) { return F.infinity }
        if text.elementsEqual(names.negativeInfinity) { return -F.infinity }
        if text.elementsEqual(names.nan) { return F.nan }
        return nil
    }

    func decimal(_ value: Int32) throws(FastJSONValueFailure) -> Decimal {
        let number = try numberBytes(value)
        guard let p = number.baseAddress, FastJSONNumberParser.isValid(p, number.count) else { throw invalidNumber(number) }
        guard let result = Decimal(string: String(decoding: number, as: UTF8.self)) else { throw notRepresentable(number) }
        return result
    }

    // MARK: - Key tables

    @inline(__always) func keyPointer(_ record: FastJSONKeyRecord) -> UnsafeMutablePointer<UInt8> {
        (record.extra & FastJSONKeyRecord.inKeyBytes != 0 ? scratch.pointee.keyBytes.base : bytes) + Int(record.keyStart)
    }

    func keyString(_ record: FastJSONKeyRecord) -> String {
        String(decoding: UnsafeBufferPointer(start: keyPointer(record), count: Int(record.keyLength)), as: UTF8.self)
    }

    /// Whether the table is still where its container left it (it is not if the container outlived
    /// the `init(from:)` that made it and the space was reused).
    @inline(__always) func isIntact(_ table: FastJSONKeyTable) -> Bool {
        let header = Int(table.header)
        guard header &+ Int(table.count) < scratch.pointee.records.count else { return false }
        let record = scratch.pointee.records[header]
        return record.keyLength == FastJSONKeyRecord.headerMarker && record.valueIndex == table.generation
    }

    /// `find`, with the common case inlined into the caller: the member at the cursor (the one
    /// after the last found) is the key asked for, as when a model reads keys in document order.
    @inline(__always) func findFast(_ key: UnsafeBufferPointer<UInt8>, in table: FastJSONKeyTable) -> Int32 {
        let records = scratch.pointee.records.base + Int(table.header)
        let cursor = Int(records[0].keyStart)
        if cursor < Int(table.count), let keyBase = key.baseAddress {
            let candidate = records[1 &+ cursor]
            if Int(candidate.keyLength) == key.count, FastJSONReader.equal(keyPointer(candidate), keyBase, key.count) {
                records[0].keyStart = UInt32(truncatingIfNeeded: cursor &+ 1)
                return Int32(truncatingIfNeeded: candidate.valueIndex)
            }
        }
        return find(key, in: table)
    }

    /// The tape index of the value for `key` in an intact table, or -1.
    func find(_ key: UnsafeBufferPointer<UInt8>, in table: FastJSONKeyTable) -> Int32 {
        let count = Int(table.count)
        guard count > 0 else { return -1 }
        let records = scratch.pointee.records.base + Int(table.header)
        let keyBase = key.baseAddress ?? UnsafePointer(bytes)
        let keyLength = key.count
        var cursor = Int(records[0].keyStart)
        if cursor >= count { cursor = 0 }
        let slotStart = records[0].extra
        if slotStart != UInt32.max {
            // Hashed: try the cursor, then the index.
            let candidate = records[1 &+ cursor]
            if Int(candidate.keyLength) == keyLength, FastJSONReader.equal(keyPointer(candidate), keyBase, keyLength) {
                records[0].keyStart = UInt32(truncatingIfNeeded: cursor &+ 1)
                return Int32(truncatingIfNeeded: candidate.valueIndex)
            }
            let mask = Int(table.slotMask)
            let slots = scratch.pointee.slots.base + Int(slotStart)
            var slot = Int(truncatingIfNeeded: FastJSONReader.hash(keyBase, keyLength)) & mask
            while true {
                let occupant = Int(slots[slot])
                if occupant == 0 { return -1 }
                let record = records[occupant]
                if Int(record.keyLength) == keyLength, FastJSONReader.equal(keyPointer(record), keyBase, keyLength) {
                    records[0].keyStart = UInt32(truncatingIfNeeded: occupant)
                    return Int32(truncatingIfNeeded: record.valueIndex)
                }
                slot = (slot &+ 1) & mask
            }
        }
        var position = cursor
        for _ in 0..<count {
            let record = records[1 &+ position]
            if Int(record.keyLength) == keyLength, FastJSONReader.equal(keyPointer(record), keyBase, keyLength) {
                records[0].keyStart = UInt32(truncatingIfNeeded: position &+ 1)
                return Int32(truncatingIfNeeded: record.valueIndex)
            }
            position &+= 1
            if position == count { position = 0 }
        }
        return -1
    }

    /// The tape index of the value for `name` in an intact table, or -1: by bytes, then, if that
    /// finds nothing, as `JSONDecoder` compares keys (see `findEquivalent`).
    func find(_ name: String, in table: FastJSONKeyTable) -> Int32 {
        var name = name
        let found = name.withUTF8 { find($0, in: table) }
        if found >= 0 { return found }
        return findEquivalent(name, in: table)
    }

    /// For a key whose bytes are no member's: the member whose key equals it as a Swift string
    /// (canonical equivalence, as in `JSONDecoder`'s `[String: Value]`), or -1. Two ASCII strings
    /// are equal only byte for byte, so a key and a member that are both ASCII are skipped: this
    /// does nothing unless the key or the table has a non-ASCII key. Members are distinct as
    /// strings (see `FastJSONSession.makeKeyTable`), so at most one matches.
    @inline(never) func findEquivalent(_ name: String, in table: FastJSONKeyTable) -> Int32 {
        var name = name
        let nameIsASCII = name.withUTF8 { FastJSONReader.isASCII($0) }
        guard table.hasNonASCIIKeys || !nameIsASCII else { return -1 }
        let header = Int(table.header)
        for k in 0..<Int(table.count) {
            let record = scratch.pointee.records[header &+ 1 &+ k]
            if nameIsASCII, record.extra & FastJSONKeyRecord.nonASCII == 0 { continue }
            if keyString(record) == name { return Int32(truncatingIfNeeded: record.valueIndex) }
        }
        return -1
    }

    @inline(__always) static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.baseAddress.map { FastJSONSnakeCase.isASCII($0, bytes.count) } ?? true
    }

    /// An intact table's keys in document order (first occurrences).
    func keys(of table: FastJSONKeyTable) -> [String] {
        var result: [String] = []
        result.reserveCapacity(Int(table.count))
        for k in 0..<Int(table.count) {
            result.append(keyString(scratch.pointee.records[Int(table.header) &+ 1 &+ k]))
        }
        return result
    }

    @inline(__always) static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        while i &+ 8 <= n {
            if UnsafeRawPointer(a + i).loadUnaligned(as: UInt64.self) != UnsafeRawPointer(b + i).loadUnaligned(as: UInt64.self) {
                return false
            }
            i &+= 8
        }
        while i < n {
            if a[i] != b[i] { return false }
            i &+= 1
        }
        return true
    }

    /// A key's slot hash for tables of more than 16 members: Swift's `Hasher` (SipHash with a
    /// seed drawn for each process), so a server cannot choose keys that all land in one slot and
    /// make building a table quadratic, as it could with a fixed hash (minutes for a 9 MB object).
    /// Smaller tables, the common case, are searched without hashing.
    static func hash(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt32 {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(start: p, count: n))
        return UInt32(truncatingIfNeeded: hasher.finalize())
    }
}

import CZlib
import Foundation
import Networking

/// The on-disk form of a ``StoredRecord``, built so that a damaged file is always recognised:
///
/// ```
/// offset  size  field
///      0     4  magic "NWCE"
///      4     2  format version (2), little-endian
///      6     1  kind: 0 an answer, 1 a list of varying fields
///      7     1  reserved (0)
///      8     4  length M of the metadata
///     12     8  length B of the body
///     20     M  metadata: key digest, method, URL (no user, query or fragment), route, discriminator,
///               status, dates, headers, digests of the Vary values
///   20+M     B  body
/// 20+M+B     4  CRC-32 (zlib) of every byte before it
/// ```
///
/// Integers are little-endian; strings are a 4-byte length and UTF-8; dates are the bits of a
/// `Double` of seconds since 1970. Reading checks the magic, the version, that the lengths add up
/// to exactly the file's size, the checksum, and every length inside the metadata, so a
/// truncated, extended, bit-flipped or foreign file is refused — never trusted, never a crash.
enum EntryCodec {
    /// Why bytes are not a valid record.
    struct Corruption: Error, Hashable, CustomStringConvertible {
        let description: String
    }

    static let magic: [UInt8] = Array("NWCE".utf8)

    /// The format version a file's first ``headerPrefixSize`` bytes name, or `nil` when they do
    /// not start an entry: what a sweep of earlier formats reads without loading the file.
    static let headerPrefixSize = 6
    static func formatVersion(ofPrefix bytes: [UInt8]) -> UInt16? {
        guard bytes.count >= headerPrefixSize, Array(bytes[0..<4]) == magic else { return nil }
        return UInt16(bytes[4]) | UInt16(bytes[5]) << 8
    }
    /// 2 since keys and `Vary` values are digests (1 had them in clear, tokens included): a
    /// file of version 1 is refused, and so removed when it is read.
    static let version: UInt16 = 2
    static let headerSize = 20
    static let trailerSize = 4

    /// The bytes of `record`.
    static func encode(_ record: StoredRecord) -> Data {
        var metadata = ByteWriter()
        var body = Data()
        let kind: UInt8
        switch record {
        case .response(let entry):
            kind = 0
            metadata.string(entry.key)
            metadata.string(entry.method)
            metadata.string(entry.url)
            metadata.string(entry.routeName)
            metadata.optionalString(entry.discriminator)
            metadata.uint32(UInt32(clamping: entry.statusCode))
            metadata.date(entry.requestDate)
            metadata.date(entry.responseDate)
            metadata.uint32(UInt32(clamping: entry.headers.count))
            for field in entry.headers {
                metadata.string(field.name)
                metadata.string(field.value)
            }
            metadata.uint32(UInt32(clamping: entry.vary.count))
            for field in entry.vary {
                metadata.string(field.name)
                metadata.optionalString(field.value)
            }
            body = entry.body
        case .variants(let key, let fields):
            kind = 1
            metadata.string(key)
            metadata.uint32(UInt32(clamping: fields.count))
            for field in fields { metadata.string(field) }
        }
        var output = ByteWriter()
        output.bytes.reserveCapacity(headerSize + metadata.bytes.count + body.count + trailerSize)
        output.bytes.append(contentsOf: magic)
        output.uint16(version)
        output.bytes.append(kind)
        output.bytes.append(0)
        output.uint32(UInt32(clamping: metadata.bytes.count))
        output.uint64(UInt64(body.count))
        output.bytes.append(contentsOf: metadata.bytes)
        var data = Data(output.bytes)
        data.append(body)
        let checksum = crc(data)
        var trailer = ByteWriter()
        trailer.uint32(checksum)
        data.append(contentsOf: trailer.bytes)
        return data
    }

    /// The record in `data`.
    ///
    /// - Throws: ``Corruption`` when the bytes are not exactly one valid record.
    static func decode(_ data: Data) throws(Corruption) -> StoredRecord {
        guard data.count >= headerSize + trailerSize else { throw Corruption(description: "\(data.count) bytes is too short") }
        let bytes = [UInt8](data.prefix(headerSize))
        guard Array(bytes[0..<4]) == magic else { throw Corruption(description: "not a cache entry (bad magic)") }
        var header = ByteReader(bytes: bytes[4...])
        let version = try header.uint16()
        guard version == Self.version else { throw Corruption(description: "format version \(version) is not known") }
        let kind = try header.uint8()
        _ = try header.uint8()
        let metadataLength = UInt64(try header.uint32())
        let bodyLength = try header.uint64()
        let expected = UInt64(headerSize) + metadataLength + UInt64(trailerSize)
        // `expected` alone can pass `Int.max` where an `Int` has 32 bits (watchOS).
        guard expected <= UInt64(Int.max), bodyLength <= UInt64(Int.max) - expected, expected + bodyLength == UInt64(data.count)
        else {
            throw Corruption(description: "lengths do not add up to the \(data.count) bytes present (truncated or extended)")
        }
        let checksumOffset = data.count - trailerSize
        var trailer = ByteReader(bytes: [UInt8](data.suffix(trailerSize))[...])
        let stored = try trailer.uint32()
        guard crc(data.prefix(checksumOffset)) == stored else { throw Corruption(description: "checksum mismatch") }

        let metadataStart = data.startIndex + headerSize
        let bodyStart = metadataStart + Int(metadataLength)
        var metadata = ByteReader(bytes: [UInt8](data[metadataStart..<bodyStart])[...])
        let record: StoredRecord
        switch kind {
        case 0:
            let key = try metadata.string()
            let method = try metadata.string()
            let url = try metadata.string()
            let routeName = try metadata.string()
            let discriminator = try metadata.optionalString()
            let status = try metadata.integer()
            let requestDate = try metadata.date()
            let responseDate = try metadata.date()
            var headers = HTTPHeaders()
            for _ in 0..<(try metadata.count()) { headers.add(name: try metadata.string(), value: try metadata.string()) }
            var vary: [VaryField] = []
            for _ in 0..<(try metadata.count()) {
                vary.append(VaryField(name: try metadata.string(), value: try metadata.optionalString()))
            }
            let body = Data(data[bodyStart..<(data.startIndex + checksumOffset)])
            record = .response(
                CacheEntry(
                    key: key, method: method, url: url, routeName: routeName, discriminator: discriminator, statusCode: status,
                    headers: headers, body: body, requestDate: requestDate, responseDate: responseDate, vary: vary))
        case 1:
            guard bodyLength == 0 else { throw Corruption(description: "a list of varying fields has a body") }
            let key = try metadata.string()
            var fields: [String] = []
            for _ in 0..<(try metadata.count()) { fields.append(try metadata.string()) }
            record = .variants(key: key, fields: fields)
        default:
            throw Corruption(description: "record kind \(kind) is not known")
        }
        guard metadata.isAtEnd else { throw Corruption(description: "metadata has trailing bytes") }
        return record
    }

    /// zlib's CRC-32 of `data`, fed in pieces that fit its 32-bit length.
    static func crc(_ data: Data) -> UInt32 {
        var value: UInt = crc32(0, nil, 0)
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard let base = buffer.bindMemory(to: UInt8.self).baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let length = min(buffer.count - offset, 1 << 30)
                value = crc32(value, base + offset, UInt32(length))
                offset += length
            }
        }
        return UInt32(truncatingIfNeeded: value)
    }
}

/// Appends little-endian integers and length-prefixed strings.
private struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func uint16(_ value: UInt16) { for shift in [0, 8] { bytes.append(UInt8(truncatingIfNeeded: value >> UInt16(shift))) } }
    mutating func uint32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
    mutating func uint64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
    mutating func date(_ date: Date) { uint64(date.timeIntervalSince1970.bitPattern) }

    mutating func string(_ text: String) {
        let utf8 = Array(text.utf8)
        uint32(UInt32(clamping: utf8.count))
        bytes.append(contentsOf: utf8.prefix(Int(clamping: UInt32.max)))
    }

    mutating func optionalString(_ text: String?) {
        guard let text else {
            bytes.append(0)
            return
        }
        bytes.append(1)
        string(text)
    }
}

/// Reads what ``ByteWriter`` wrote, checking every length against what is left.
private struct ByteReader {
    var bytes: ArraySlice<UInt8>

    var isAtEnd: Bool { bytes.isEmpty }

    mutating func take(_ count: Int) throws(EntryCodec.Corruption) -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count else {
            throw EntryCodec.Corruption(description: "a field claims \(count) bytes where \(bytes.count) are left")
        }
        let taken = bytes.prefix(count)
        bytes = bytes.dropFirst(count)
        return taken
    }

    mutating func uint8() throws(EntryCodec.Corruption) -> UInt8 { try take(1).first ?? 0 }

    mutating func uint16() throws(EntryCodec.Corruption) -> UInt16 {
        try take(2).reversed().reduce(0) { $0 << 8 | UInt16($1) }
    }

    mutating func uint32() throws(EntryCodec.Corruption) -> UInt32 {
        try take(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A 32-bit field as an `Int`: one that does not fit (where `Int` has 32 bits) is corrupt.
    mutating func integer() throws(EntryCodec.Corruption) -> Int {
        let value = try uint32()
        guard let integer = Int(exactly: value) else { throw EntryCodec.Corruption(description: "a field of \(value) is too large") }
        return integer
    }

    mutating func uint64() throws(EntryCodec.Corruption) -> UInt64 {
        try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func date() throws(EntryCodec.Corruption) -> Date {
        let seconds = Double(bitPattern: try uint64())
        guard seconds.isFinite else { throw EntryCodec.Corruption(description: "a date is not a number") }
        return Date(timeIntervalSince1970: seconds)
    }

    /// A count of items, each of which takes at least 4 bytes: a count larger than that is corrupt.
    mutating func count() throws(EntryCodec.Corruption) -> Int {
        let count = try integer()
        guard count <= bytes.count / 4 else { throw EntryCodec.Corruption(description: "a count of \(count) items exceeds the bytes left") }
        return count
    }

    mutating func string() throws(EntryCodec.Corruption) -> String {
        let length = try integer()
        let utf8 = try take(length)
        guard let text = String(validating: utf8, as: UTF8.self) else {
            throw EntryCodec.Corruption(description: "a string is not UTF-8")
        }
        return text
    }

    mutating func optionalString() throws(EntryCodec.Corruption) -> String? {
        switch try uint8() {
        case 0: return nil
        case 1: return try string()
        case let flag: throw EntryCodec.Corruption(description: "an optional has flag \(flag)")
        }
    }
}

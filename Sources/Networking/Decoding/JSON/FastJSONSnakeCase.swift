import Foundation
import Synchronization

/// `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase`, on bytes.
///
/// For ASCII keys it reproduces `JSONDecoder`'s algorithm exactly: leading and trailing underscores
/// are kept, the rest is split at underscores (empty parts dropped); a single part is kept as is,
/// otherwise the first part is lowercased and each other part is capitalized the way Foundation's
/// `capitalized` does it (a letter is uppercased unless it follows a letter, ignoring `'`, `^` and
/// `` ` ``; other letters are lowercased). Keys with other characters and an underscore are converted
/// by asking `JSONDecoder` itself, so that Unicode case mapping cannot differ.
enum FastJSONSnakeCase {
    /// Whether the key (valid UTF-8) contains an underscore; keys without one are never changed.
    @inline(__always) static func mayChange(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        while i < n {
            if p[i] == UInt8(ascii: "_") { return true }
            i &+= 1
        }
        return false
    }

    static func isASCII(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        while i < n {
            if p[i] >= 0x80 { return false }
            i &+= 1
        }
        return true
    }

    /// Converts an ASCII key, appending the result to `out` (which must not hold the source).
    /// Returns false, appending nothing, when the key stays as it is.
    static func convertASCII(_ p: UnsafePointer<UInt8>, _ n: Int, into out: inout FastJSONBuffer<UInt8>) -> Bool {
        var first = 0
        while first < n, p[first] == UInt8(ascii: "_") { first &+= 1 }
        guard first < n else { return false }
        var last = n &- 1
        while last > first, p[last] == UInt8(ascii: "_") { last &-= 1 }
        var hasInnerUnderscore = false
        for i in first...last where p[i] == UInt8(ascii: "_") {
            hasInnerUnderscore = true
            break
        }
        guard hasInnerUnderscore else { return false }

        out.reserve(n)
        out.append(contentsOf: UnsafeBufferPointer(start: p, count: first))
        var i = first
        var isFirstPart = true
        while i <= last {
            if p[i] == UInt8(ascii: "_") {
                i &+= 1
                continue
            }
            var end = i
            while end <= last, p[end] != UInt8(ascii: "_") { end &+= 1 }
            if isFirstPart {
                for k in i..<end {
                    let c = p[k]
                    out.append(c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c &+ 32 : c)
                }
                isFirstPart = false
            } else {
                var lastWasCased = false
                for k in i..<end {
                    let c = p[k]
                    if c >= UInt8(ascii: "A"), c <= UInt8(ascii: "Z") {
                        out.append(lastWasCased ? c &+ 32 : c)
                        lastWasCased = true
                    } else if c >= UInt8(ascii: "a"), c <= UInt8(ascii: "z") {
                        out.append(lastWasCased ? c : c &- 32)
                        lastWasCased = true
                    } else {
                        out.append(c)
                        if c != UInt8(ascii: "'"), c != UInt8(ascii: "^"), c != UInt8(ascii: "`") { lastWasCased = false }
                    }
                }
            }
            i = end
        }
        out.append(contentsOf: UnsafeBufferPointer(start: p + last + 1, count: n &- last &- 1))
        return true
    }

    /// Converts any key: on its bytes when it is ASCII, as ``convertExactly(_:)`` does otherwise.
    static func convert(_ key: String) -> String {
        var bytes = key
        let converted = bytes.withUTF8 { buffer -> String? in
            guard let base = buffer.baseAddress, isASCII(base, buffer.count) else { return nil }
            var out = FastJSONBuffer<UInt8>(capacity: buffer.count)
            defer { out.release() }
            guard convertASCII(base, buffer.count, into: &out) else { return key }
            return String(decoding: UnsafeBufferPointer(start: out.base, count: out.count), as: UTF8.self)
        }
        return converted ?? convertExactly(key)
    }

    /// Converts any key by asking `JSONDecoder` (slow; used for non-ASCII keys with an underscore),
    /// once per key: the answers are kept, up to ``keptConversions`` of them (a new one beyond
    /// that starts the table afresh, so a server's endless new keys cannot grow it).
    static func convertExactly(_ key: String) -> String {
        if let known = conversions.withLock({ $0[key] }) { return known }
        let converted = askJSONDecoder(key)
        guard key.utf8.count <= 256 else { return converted }
        conversions.withLock { table in
            if table.count >= keptConversions { table.removeAll(keepingCapacity: true) }
            table[key] = converted
        }
        return converted
    }

    /// The most conversions kept by ``convertExactly(_:)``.
    static let keptConversions = 1024

    /// Keys converted by ``convertExactly(_:)``, and what they became.
    static let conversions = Mutex<[String: String]>([:])

    private static func askJSONDecoder(_ key: String) -> String {
        var json = "{\""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case let c where c.value < 0x20: json += "\\u00" + (c.value < 0x10 ? "0" : "") + String(c.value, radix: 16)
            default: json.unicodeScalars.append(scalar)
            }
        }
        json += "\":0}"
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return (try? decoder.decode(KeyCollector.self, from: Data(json.utf8)))?.key ?? key
    }

    /// Reads back the single key of an object, as the decoder converted it.
    private struct KeyCollector: Decodable {
        let key: String?

        init(from decoder: any Decoder) throws {
            key = try decoder.container(keyedBy: FastJSONCodingKey.self).allKeys.first?.stringValue
        }
    }
}

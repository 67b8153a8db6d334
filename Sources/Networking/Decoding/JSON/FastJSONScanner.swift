/// One pass over the document that accepts exactly what `JSONDecoder`'s scanner accepts and records
/// every value on a `FastJSONTape`.
///
/// Like `JSONDecoder`, it checks structure here (brackets, commas, colons, literals, quotes, nesting
/// of at most 512 levels, nothing but whitespace after the top-level value, trailing commas allowed)
/// and leaves the rest to decode time: a number's syntax, escape sequences, UTF-8 validity and control
/// characters in strings are only checked for values that are actually decoded, so a malformed value
/// nobody asks for is no error, as with `JSONDecoder`. It is iterative (no recursion), and reads the
/// input eight bytes at a time in strings; the input must be followed by at least 8 zero bytes.
struct FastJSONScanner {
    /// `JSONDecoder` rejects more nested arrays and objects than this.
    static let maximumDepth = 512

    /// Scans `count` bytes (followed by at least 8 zero bytes). The caller owns the tape's words.
    /// With `markUnderscores`, object keys with an underscore get `FastJSONTape.hasUnderscore`.
    static func scan(_ bytes: UnsafePointer<UInt8>, count: Int, markUnderscores: Bool) throws(FastJSONSyntaxError) -> FastJSONTape {
        var writer = Writer(capacity: count / 8 + 8)
        let stack = UnsafeMutablePointer<UInt64>.allocate(capacity: maximumDepth + 1)
        defer { stack.deallocate() }
        do {
            try run(bytes, count, stack, &writer, markUnderscores: markUnderscores)
        } catch {
            writer.words.deallocate()
            throw error
        }
        // The synthetic null (see FastJSONTape).
        writer.emit(UInt64(FastJSONTape.null) &<< 56, 0)
        return FastJSONTape(words: writer.words, count: writer.used)
    }

    /// Appends tape entries; kept in a local so its fields live in registers.
    private struct Writer {
        var words: UnsafeMutablePointer<UInt64>
        var out: UnsafeMutablePointer<UInt64>
        var used = 0
        var capacity: Int

        init(capacity: Int) {
            self.capacity = capacity
            words = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity * 2)
            out = words
        }

        @inline(__always) mutating func emit(_ word0: UInt64, _ word1: UInt64) {
            if used == capacity { grow() }
            out[0] = word0
            out[1] = word1
            out += 2
            used &+= 1
        }

        @inline(never) mutating func grow() {
            let newCapacity = capacity * 2
            let newWords = UnsafeMutablePointer<UInt64>.allocate(capacity: newCapacity * 2)
            newWords.moveInitialize(from: words, count: used * 2)
            words.deallocate()
            words = newWords
            out = newWords + used * 2
            capacity = newCapacity
        }

        /// Records a closed container's element count and the index of the value after it.
        @inline(__always) func close(_ entry: UInt64) {
            let index = Int(truncatingIfNeeded: entry &>> 32)
            words[(index &<< 1) &+ 1] = (entry & 0x7FFF_FFFF) &<< 32 | UInt64(truncatingIfNeeded: used)
        }
    }

    /// Space, tab, line feed or carriage return: one comparison and one bit test.
    @inline(__always) private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte <= 0x20 && (0x1_0000_2600 as UInt64) &>> UInt64(byte) & 1 != 0
    }

    /// The first index at or after `index` that is not whitespace (the zero padding stops it).
    @inline(__always) private static func skipWhitespace(_ bytes: UnsafePointer<UInt8>, _ index: Int) -> Int {
        var i = index
        while isWhitespace(bytes[i]) { i &+= 1 }
        return i
    }

    @inline(__always) private static func load32(_ bytes: UnsafePointer<UInt8>, _ index: Int) -> UInt32 {
        UInt32(littleEndian: UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt32.self))
    }

    @inline(__always) private static func load64(_ bytes: UnsafePointer<UInt8>, _ index: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self))
    }

    private enum Expecting { case value, afterValue, key }

    /// `stack` holds, per open container, its tape index (high 32 bits), whether it is an object
    /// (bit 31) and its element count (low 31 bits).
    private static func run(
        _ bytes: UnsafePointer<UInt8>, _ count: Int, _ stack: UnsafeMutablePointer<UInt64>, _ writer: inout Writer,
        markUnderscores: Bool
    ) throws(FastJSONSyntaxError) {
        var tape = writer
        defer { writer = tape }
        var i = skipWhitespace(bytes, 0)
        var depth = 0
        var inObject = false
        var expecting = Expecting.value
        while true {
            switch expecting {
            case .value:
                guard i < count else { throw .unexpectedEnd() }
                let byte = bytes[i]
                switch byte {
                case UInt8(ascii: "\""):
                    let (end, flags) = try scanString(bytes, count, at: i)
                    tape.emit(
                        UInt64(FastJSONTape.string) &<< 56 | UInt64(flags) &<< 48 | UInt64(truncatingIfNeeded: i &+ 1),
                        UInt64(truncatingIfNeeded: end &- i &- 1))
                    i = end &+ 1
                    expecting = .afterValue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard depth < maximumDepth else {
                        throw FastJSONSyntaxError("Too many nested arrays or dictionaries", at: i)
                    }
                    inObject = byte == UInt8(ascii: "{")
                    stack[depth] = UInt64(truncatingIfNeeded: tape.used) &<< 32 | (inObject ? 1 &<< 31 : 0)
                    depth &+= 1
                    tape.emit(UInt64(inObject ? FastJSONTape.object : FastJSONTape.array) &<< 56 | UInt64(truncatingIfNeeded: i), 0)
                    i = skipWhitespace(bytes, i &+ 1)
                    guard i < count else { throw .unexpectedEnd() }
                    if bytes[i] == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        depth &-= 1
                        tape.close(stack[depth])
                        if depth > 0 { inObject = stack[depth &- 1] & (1 &<< 31) != 0 }
                        i &+= 1
                        expecting = .afterValue
                    } else {
                        expecting = inObject ? .key : .value
                    }
                case UInt8(ascii: "t"):
                    // "true" as a little-endian 32-bit word.
                    guard i &+ 4 <= count, load32(bytes, i) == 0x6575_7274 else { throw literalError(count, at: i, "true") }
                    tape.emit(UInt64(FastJSONTape.true) &<< 56 | UInt64(truncatingIfNeeded: i), 4)
                    i &+= 4
                    expecting = .afterValue
                case UInt8(ascii: "f"):
                    // "alse"
                    guard i &+ 5 <= count, load32(bytes, i &+ 1) == 0x6573_6C61 else { throw literalError(count, at: i, "false") }
                    tape.emit(UInt64(FastJSONTape.false) &<< 56 | UInt64(truncatingIfNeeded: i), 5)
                    i &+= 5
                    expecting = .afterValue
                case UInt8(ascii: "n"):
                    // "null"
                    guard i &+ 4 <= count, load32(bytes, i) == 0x6C6C_756E else { throw literalError(count, at: i, "null") }
                    tape.emit(UInt64(FastJSONTape.null) &<< 56 | UInt64(truncatingIfNeeded: i), 4)
                    i &+= 4
                    expecting = .afterValue
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let (end, plain) = scanNumber(bytes, at: i)
                    let flags = plain ? FastJSONTape.plainInteger : 0
                    tape.emit(
                        UInt64(FastJSONTape.number) &<< 56 | UInt64(flags) &<< 48 | UInt64(truncatingIfNeeded: i),
                        UInt64(truncatingIfNeeded: end &- i))
                    i = end
                    expecting = .afterValue
                default:
                    throw .unexpected(byte, at: i, "where a value should start")
                }

            case .afterValue:
                if depth == 0 {
                    i = skipWhitespace(bytes, i)
                    guard i == count else { throw .unexpected(bytes[i], at: i, "after top-level value") }
                    return
                }
                stack[depth &- 1] &+= 1
                i = skipWhitespace(bytes, i)
                guard i < count else { throw .unexpectedEnd() }
                let closer = inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                let byte = bytes[i]
                if byte == UInt8(ascii: ",") {
                    i = skipWhitespace(bytes, i &+ 1)
                    guard i < count else { throw .unexpectedEnd() }
                    if bytes[i] == closer {
                        // JSONDecoder accepts a trailing comma.
                        depth &-= 1
                        tape.close(stack[depth])
                        if depth > 0 { inObject = stack[depth &- 1] & (1 &<< 31) != 0 }
                        i &+= 1
                    } else {
                        expecting = inObject ? .key : .value
                    }
                } else if byte == closer {
                    depth &-= 1
                    tape.close(stack[depth])
                    if depth > 0 { inObject = stack[depth &- 1] & (1 &<< 31) != 0 }
                    i &+= 1
                } else {
                    throw .unexpected(byte, at: i, inObject ? "in object" : "in array")
                }

            case .key:
                guard bytes[i] == UInt8(ascii: "\"") else { throw .unexpected(bytes[i], at: i, "where an object key should start") }
                var (end, flags) = try scanString(bytes, count, at: i)
                if markUnderscores {
                    for k in (i &+ 1)..<end where bytes[k] == UInt8(ascii: "_") {
                        flags |= FastJSONTape.hasUnderscore
                        break
                    }
                }
                tape.emit(
                    UInt64(FastJSONTape.string) &<< 56 | UInt64(flags) &<< 48 | UInt64(truncatingIfNeeded: i &+ 1),
                    UInt64(truncatingIfNeeded: end &- i &- 1))
                i = end &+ 1
                if bytes[i] != UInt8(ascii: ":") { i = skipWhitespace(bytes, i) }
                guard i < count else { throw .unexpectedEnd() }
                guard bytes[i] == UInt8(ascii: ":") else { throw .unexpected(bytes[i], at: i, "in object") }
                i = skipWhitespace(bytes, i &+ 1)
                expecting = .value
            }
        }
    }

    private static func literalError(_ count: Int, at index: Int, _ literal: String) -> FastJSONSyntaxError {
        if index + literal.utf8.count > count { return .unexpectedEnd() }
        return FastJSONSyntaxError("Invalid literal (expected \(literal))", at: index)
    }

    /// Scans the string whose opening quote is at `index`; returns the index of its closing quote and
    /// its flags.
    @inline(__always)
    private static func scanString(_ bytes: UnsafePointer<UInt8>, _ count: Int, at index: Int) throws(FastJSONSyntaxError) -> (Int, UInt8) {
        var i = index &+ 1
        var flags: UInt8 = 0
        var high: UInt64 = 0
        while true {
            // Eight bytes at a time: stop at the first quote, backslash or byte below 0x20 (the zero
            // padding after the input is such a byte, so this never reads past it).
            let word = load64(bytes, i)
            let quotes = word ^ 0x2222_2222_2222_2222
            let backslashes = word ^ 0x5C5C_5C5C_5C5C_5C5C
            let special =
                ((quotes &- 0x0101_0101_0101_0101) & ~quotes
                    | (backslashes &- 0x0101_0101_0101_0101) & ~backslashes
                    | (word &- 0x2020_2020_2020_2020) & ~word) & 0x8080_8080_8080_8080
            if special == 0 {
                high |= word
                i &+= 8
                continue
            }
            let skipped = special.trailingZeroBitCount &>> 3
            if skipped > 0 { high |= word & (UInt64.max &>> (64 &- skipped &* 8)) }
            i &+= skipped
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") { break }
            guard i < count else { throw .unexpectedEnd() }
            flags |= FastJSONTape.needsUnescaping
            if byte == UInt8(ascii: "\\") {
                i &+= 1
                guard i < count else { throw .unexpectedEnd() }
                if bytes[i] == UInt8(ascii: "u") {
                    // As JSONDecoder: four more bytes, none of them a quote; the digits are checked later.
                    guard i &+ 4 < count else { throw .unexpectedEnd() }
                    for k in 1...4 where bytes[i &+ k] == UInt8(ascii: "\"") {
                        throw FastJSONSyntaxError("Invalid hex digit in unicode escape sequence", at: i &+ k)
                    }
                    i &+= 5
                } else {
                    i &+= 1
                }
            } else {
                // A control character: an error only if the string is decoded.
                i &+= 1
            }
        }
        if high & 0x8080_8080_8080_8080 != 0 { flags |= FastJSONTape.nonASCII }
        return (i, flags)
    }

    /// Scans a number the way JSONDecoder does: a `-` or digit, then any run of digits, `.`, `+`,
    /// `-`, `e` and `E`; its syntax is checked when it is decoded. Returns its end and whether it
    /// is a plain integer (an optional `-` and digits).
    @inline(__always) private static func scanNumber(_ bytes: UnsafePointer<UInt8>, at index: Int) -> (Int, Bool) {
        var i = index &+ 1
        while bytes[i] &- UInt8(ascii: "0") < 10 { i &+= 1 }
        var plain = true
        while true {
            let byte = bytes[i]
            if byte &- UInt8(ascii: "0") < 10 {
                i &+= 1
            } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
            {
                plain = false
                i &+= 1
            } else {
                break
            }
        }
        return (i, plain)
    }
}

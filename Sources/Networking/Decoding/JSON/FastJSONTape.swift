/// The scanner's output: every JSON value of a document as two 64-bit words, in document order.
///
/// Decoding reads values through this index instead of re-parsing text, and skips whole arrays and
/// objects in one step. Word 0 holds the kind (top 8 bits), flags (next 8) and the byte offset of the
/// value in the input (low 48: a string's first content byte, a number's first byte, a container's
/// bracket). Word 1 holds a string's or number's length in bytes; for an array or object it holds
/// the number of elements (members for an object) in the top 32 bits and the index of the value after
/// the container's end in the low 32. An object's members follow it as key, value, key, value. The
/// last value is a `null` that is not in the document, used where `JSONDecoder` substitutes null (a
/// `superDecoder` for a missing key).
struct FastJSONTape {
    /// Kinds of value, stored in the top byte of word 0.
    static let null: UInt8 = 1
    static let `true`: UInt8 = 2
    static let `false`: UInt8 = 3
    static let number: UInt8 = 4
    static let string: UInt8 = 5
    static let object: UInt8 = 6
    static let array: UInt8 = 7

    /// String flag: has a backslash or a control character, so it must be unescaped and checked
    /// before use (`JSONDecoder`'s strings that are not "simple").
    static let needsUnescaping: UInt8 = 1
    /// String flag: has a byte of 0x80 or more, so its UTF-8 must be validated.
    static let nonASCII: UInt8 = 2
    /// Key flag, set only when the scanner is asked to (for `convertFromSnakeCase`): the key's raw
    /// bytes contain an underscore, so the key may need converting.
    static let hasUnderscore: UInt8 = 4
    /// Number flag: an optional `-` followed by digits only.
    static let plainInteger: UInt8 = 1

    /// Two words per value; owned by the session that holds this tape.
    let words: UnsafeMutablePointer<UInt64>
    /// Number of values, including the trailing synthetic null.
    let count: Int

    /// The index of the synthetic null at the end of the tape.
    var nullIndex: Int32 { Int32(truncatingIfNeeded: count - 1) }

    @inline(__always) func kind(_ index: Int32) -> UInt8 {
        UInt8(truncatingIfNeeded: words[Int(index) &<< 1] &>> 56)
    }

    @inline(__always) func flags(_ index: Int32) -> UInt8 {
        UInt8(truncatingIfNeeded: words[Int(index) &<< 1] &>> 48)
    }

    @inline(__always) func offset(_ index: Int32) -> Int {
        Int(truncatingIfNeeded: words[Int(index) &<< 1] & 0xFFFF_FFFF_FFFF)
    }

    /// A string's or number's length in bytes.
    @inline(__always) func length(_ index: Int32) -> Int {
        Int(truncatingIfNeeded: words[(Int(index) &<< 1) &+ 1])
    }

    /// Elements of an array, members of an object.
    @inline(__always) func elementCount(_ index: Int32) -> Int {
        Int(truncatingIfNeeded: words[(Int(index) &<< 1) &+ 1] &>> 32)
    }

    /// The index of the value after this one (after a container's last element).
    @inline(__always) func next(_ index: Int32) -> Int32 {
        let kind = self.kind(index)
        if kind == FastJSONTape.object || kind == FastJSONTape.array {
            return Int32(truncatingIfNeeded: words[(Int(index) &<< 1) &+ 1] & 0xFFFF_FFFF)
        }
        return index &+ 1
    }

    /// How `JSONDecoder` names a value's kind in type-mismatch messages.
    static func describe(_ kind: UInt8) -> String {
        switch kind {
        case string: "a string"
        case number: "number"
        case `true`, `false`: "bool"
        case null: "null"
        case object: "a dictionary"
        default: "an array"
        }
    }
}

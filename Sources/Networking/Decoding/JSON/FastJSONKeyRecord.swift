/// One member of a keyed container's key table, or the table's header.
///
/// A keyed container's table is built once, when the container is made: every member's key,
/// unescaped and converted by the key strategy, deduplicated so that the first of equal keys wins (as
/// in `JSONDecoder`). Tables live in `FastJSONScratch.records`: a header, then the members.
///
/// In a header, `keyStart` is the search cursor (the member after the last one found, so keys asked
/// for in document order are found at once), `keyLength` is `FastJSONKeyRecord.headerMarker`,
/// `valueIndex` is the table's generation (to notice a table that was dropped and its space reused,
/// if a container outlives its `init(from:)`), and `extra` is where its hash slots start (or
/// `UInt32.max` for small tables, which are searched linearly).
struct FastJSONKeyRecord: BitwiseCopyable {
    static let headerMarker = UInt32.max
    /// `extra` flag of a member: the key's bytes are in `FastJSONScratch.keyBytes`, not the input.
    static let inKeyBytes: UInt32 = 1
    /// `extra` flag of a member: the key (after conversion) has a byte of 0x80 or more, so it may
    /// equal a key with other bytes (`JSONDecoder` compares keys as Swift strings: "é" written
    /// precomposed or as "e" and a combining accent, the Kelvin sign and "K").
    static let nonASCII: UInt32 = 2

    var keyStart: UInt32
    var keyLength: UInt32
    var valueIndex: UInt32
    var extra: UInt32
}

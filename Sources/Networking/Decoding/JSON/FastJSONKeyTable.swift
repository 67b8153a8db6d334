/// Where a keyed container's key table is (see `FastJSONKeyRecord`), and how to recognise it.
struct FastJSONKeyTable {
    /// Index of the header record in `FastJSONScratch.records`; the members follow it.
    let header: Int32
    /// Members after deduplication.
    let count: Int32
    let generation: UInt32
    /// Hash slots minus one (a power of two minus one), for tables with a hash index; else 0.
    let slotMask: Int32
    /// Whether some member's key is not ASCII (see `FastJSONKeyRecord.nonASCII`): then members are
    /// also told apart as Swift strings, and a key whose bytes match none may still match one.
    let hasNonASCIIKeys: Bool
}

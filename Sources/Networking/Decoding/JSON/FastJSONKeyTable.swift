/// Where a keyed container's key table is (see `FastJSONKeyRecord`), and how to recognise it.
struct FastJSONKeyTable {
    /// Index of the header record in `FastJSONScratch.records`; the members follow it.
    let header: Int32
    /// Members after deduplication.
    let count: Int32
    let generation: UInt32
    /// Hash slots minus one (a power of two minus one), for tables with a hash index; else 0.
    let slotMask: Int32
}

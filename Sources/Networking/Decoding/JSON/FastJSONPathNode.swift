/// One step of a coding path, kept in `FastJSONScratch.nodes` so that paths cost no allocation
/// until an error or a caller asks for one.
///
/// Nodes form a tree through `parent` (always a smaller index; index 0 is the root). A decode pushes
/// a node for each nested value it descends into, as `JSONDecoder` extends its coding path, and
/// keeps it (see `FastJSONScratch`), so that containers kept past their `init(from:)` keep their
/// path. Nodes are plain values; a caller's own coding key is kept in `FastJSONScratch.keys` and
/// referenced by position.
struct FastJSONPathNode: BitwiseCopyable {
    /// The last key of a path, as callers hand it over.
    enum Component {
        /// A key of a keyed container: the caller's own key, so errors carry it unchanged.
        case key(any CodingKey)
        /// A position in an unkeyed container ("Index 3").
        case index(Int)
        /// The key `superDecoder()` uses ("super").
        case superKey

        var codingKey: any CodingKey {
            switch self {
            case .key(let key): key
            case .index(let index): FastJSONCodingKey(index: index)
            case .superKey: FastJSONCodingKey.superKey
            }
        }
    }

    static let root: UInt8 = 0
    static let key: UInt8 = 1
    static let index: UInt8 = 2
    static let superKey: UInt8 = 3

    var parent: Int32
    var kind: UInt8
    /// The array index, or the position of the key in `FastJSONScratch.keys`.
    var payload: Int
}

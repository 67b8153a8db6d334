/// The mutable state one decode shares across its decoders and containers: coding-path nodes, key
/// tables, hash slots and byte buffers for unescaped or converted text.
///
/// It is reached through a pointer held by `FastJSONSession`, so that hot paths pay no exclusivity
/// checks. Key tables and byte buffers grow like stacks: `marks` is taken before a nested value's
/// `init(from:)` runs and `restore(_:)` drops what that value added once it returns.
///
/// Path nodes and their keys are only added to, up to `nodeLimit`: a container or decoder that a
/// model keeps after its `init(from:)` returned refers to its node by position, and must still
/// report the coding path it was made with (as `JSONDecoder`'s do), so a node is never reused for
/// another path. A decode pushes a node per nested value it descends into, so normal models stay
/// far below the limit; past it (a model that decodes the same values over and over), nodes are
/// dropped like the rest again, which keeps memory in proportion to the input, at the price of
/// wrong paths for containers kept past their `init(from:)` (never a crash: paths are read with
/// bounds checks).
struct FastJSONScratch {
    var nodes: FastJSONBuffer<FastJSONPathNode>
    /// The caller's coding keys that path nodes refer to.
    var keys: [any CodingKey] = []
    /// How many nodes are kept before `restore(_:)` drops nodes again.
    let nodeLimit: Int
    var records = FastJSONBuffer<FastJSONKeyRecord>(capacity: 64)
    var slots = FastJSONBuffer<UInt32>(capacity: 16)
    /// Unescaped and converted keys, referenced by key records.
    var keyBytes = FastJSONBuffer<UInt8>(capacity: 64)
    /// Unescaped string values, reused by each string decode.
    var stringBytes = FastJSONBuffer<UInt8>(capacity: 64)
    /// Counts the key tables made, so that a reused table slot can be told apart.
    var generation: UInt32 = 0
    /// How `FastJSONDecoderImpl.unwrap` treats types it has met (see `TypeKind`), so that each
    /// type's conformance checks run once per decode.
    var typeKinds = FastJSONBuffer<TypeKind>(capacity: 8)
    /// `userInfo` as `Decoder` presents it, made on first use.
    var userInfo: [CodingUserInfoKey: Any]?

    /// Scratch state for a document of `valueCount` values (the tape's count).
    init(valueCount: Int) {
        nodeLimit = valueCount &* 2 &+ 256
        // Room for a node per object of about ten members, so that arrays of models rarely regrow it.
        nodes = FastJSONBuffer<FastJSONPathNode>(capacity: min(max(valueCount / 16, 32), 4096))
        nodes.append(FastJSONPathNode(parent: 0, kind: FastJSONPathNode.root, payload: 0))
    }

    /// A type and how it decodes: 0 through `init(from:)`, 1 as an `Array`, 2 as a `[String: Value]`
    /// under a key strategy.
    struct TypeKind: BitwiseCopyable {
        let type: ObjectIdentifier
        let kind: UInt8
    }

    func release() {
        typeKinds.release()
        nodes.release()
        records.release()
        slots.release()
        keyBytes.release()
        stringBytes.release()
    }

    /// Sizes of the stacks, to restore after a nested value is decoded.
    struct Marks {
        let nodes: Int
        let keys: Int
        let records: Int
        let slots: Int
        let keyBytes: Int
    }

    @inline(__always) var marks: Marks {
        Marks(nodes: nodes.count, keys: keys.count, records: records.count, slots: slots.count, keyBytes: keyBytes.count)
    }

    @inline(__always) mutating func restore(_ marks: Marks) {
        if nodes.count > nodeLimit {
            nodes.truncate(to: marks.nodes)
            if keys.count > marks.keys { keys.removeLast(keys.count &- marks.keys) }
        }
        records.truncate(to: marks.records)
        slots.truncate(to: marks.slots)
        keyBytes.truncate(to: marks.keyBytes)
    }

    @inline(__always) mutating func pushNode(parent: Int32, _ component: FastJSONPathNode.Component) -> Int32 {
        switch component {
        case .index(let index):
            nodes.append(FastJSONPathNode(parent: parent, kind: FastJSONPathNode.index, payload: index))
        case .key(let key):
            keys.append(key)
            nodes.append(FastJSONPathNode(parent: parent, kind: FastJSONPathNode.key, payload: keys.count &- 1))
        case .superKey:
            nodes.append(FastJSONPathNode(parent: parent, kind: FastJSONPathNode.superKey, payload: 0))
        }
        return Int32(truncatingIfNeeded: nodes.count &- 1)
    }

    /// The coding path of a node, root first.
    func codingPath(_ node: Int32) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var index = Int(node)
        while index > 0, index < nodes.count {
            let current = nodes[index]
            switch current.kind {
            case FastJSONPathNode.key:
                // A node kept past its init(from:) may point at a key that is gone.
                if current.payload >= 0, current.payload < self.keys.count { keys.append(self.keys[current.payload]) }
            case FastJSONPathNode.index:
                keys.append(FastJSONCodingKey(index: current.payload))
            case FastJSONPathNode.superKey:
                keys.append(FastJSONCodingKey.superKey)
            default:
                break
            }
            let parent = Int(current.parent)
            guard parent < index else { break }
            index = parent
        }
        keys.reverse()
        return keys
    }
}

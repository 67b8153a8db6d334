import Foundation

/// `FastJSONDecoder.decode(_:from:keyPath:)`: walks object keys and array indices from the root,
/// then decodes the value found as a container's `decode(_:forKey:)` would (strategies apply).
extension FastJSONDecoderImpl {
    /// Walks `keyPath` like `FastJSONKeyPathFallback` over `JSONDecoder`: a component that is an
    /// integer selects an array element when the value is an array and is an object key otherwise;
    /// keys are matched after the key strategy, as `contains(_:)` does.
    func decode<T: Decodable>(_ type: T.Type, atKeyPath keyPath: [String]) throws -> T {
        var value: Int32 = 0
        var node: Int32 = 0
        // The container the last component was found in: the decoder stands for it while the value
        // is decoded, as in a walk through nested init(from:) (JSONDecoder reports some date errors
        // at the decoder's path).
        var parentValue: Int32 = 0
        var parentNode: Int32 = 0
        let tape = session.tape
        for component in keyPath {
            parentValue = value
            parentNode = node
            if let index = Int(component), tape.kind(value) == FastJSONTape.array {
                guard index >= 0, index < tape.elementCount(value) else {
                    throw DecodingError.valueNotFound(
                        T.self,
                        DecodingError.Context(
                            codingPath: session.codingPath(node) + [FastJSONCodingKey(index: index)],
                            debugDescription: "the array has no element at index \(index)"))
                }
                var element = value &+ 1
                for _ in 0..<index { element = tape.next(element) }
                node = session.scratch.pointee.pushNode(parent: node, .index(index))
                value = element
                continue
            }
            let kind = tape.kind(value)
            guard kind == FastJSONTape.object else {
                if kind == FastJSONTape.null {
                    throw DecodingError.valueNotFound(
                        [String: Any].self,
                        DecodingError.Context(
                            codingPath: session.codingPath(node),
                            debugDescription: "Cannot get keyed decoding container -- found null value instead"))
                }
                throw DecodingError.typeMismatch(
                    [String: Any].self,
                    DecodingError.Context(
                        codingPath: session.codingPath(node),
                        debugDescription: "Expected to decode \([String: Any].self) but found \(FastJSONTape.describe(kind)) instead."))
            }
            let table = try session.makeKeyTable(object: value, node: node)
            let found = session.find(component, in: table, object: value, node: node)
            let key = FastJSONCodingKey(stringValue: component)
            guard found >= 0 else {
                throw DecodingError.keyNotFound(
                    key,
                    DecodingError.Context(
                        codingPath: session.codingPath(node), debugDescription: "no value at key path component \"\(component)\""))
            }
            node = session.scratch.pointee.pushNode(parent: node, .key(key))
            value = found
        }
        frame.pointee = Frame(value: parentValue, node: parentNode)
        return try unwrap(T.self, value: value, parent: node, nil)
    }
}

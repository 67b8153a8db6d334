/// Decodes a model that sits at a dotted key path inside the JSON (`"data"`, `"page.items"`,
/// `"results.0"`), so that coding paths in errors start at the document's root.
///
/// Each level decodes the next one from inside its own `init(from:)`, with the remaining path in
/// a task-local value: decoders may reuse their state once `init(from:)` returns, so a decoder is
/// never kept for later.
struct KeyPathDecodable<Value: Decodable>: Decodable {
    let value: Value

    init(from decoder: any Decoder) throws {
        let components = KeyPathDecoding.components
        guard let first = components.first else {
            value = try Value(from: decoder)
            return
        }
        let rest = Array(components.dropFirst())
        if let index = Int(first), var elements = try? decoder.unkeyedContainer() {
            while elements.currentIndex < index, !elements.isAtEnd {
                _ = try elements.decode(SkippedValue.self)
            }
            guard !elements.isAtEnd else {
                throw DecodingError.valueNotFound(
                    Value.self,
                    .init(codingPath: elements.codingPath, debugDescription: "the array has no element at index \(index)"))
            }
            value = try KeyPathDecoding.$components.withValue(rest) {
                try elements.decode(KeyPathDecodable<Value>.self).value
            }
            return
        }
        let container = try decoder.container(keyedBy: DynamicKey.self)
        let key = DynamicKey(first)
        guard container.contains(key) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: container.codingPath, debugDescription: "no value at key path component \"\(first)\""))
        }
        value = try KeyPathDecoding.$components.withValue(rest) {
            try container.decode(KeyPathDecodable<Value>.self, forKey: key).value
        }
    }

    private struct SkippedValue: Decodable {
        init(from decoder: any Decoder) throws {}
    }
}

enum KeyPathDecoding {
    /// The key path components still to walk, for the decoding running on this task.
    @TaskLocal static var components: [String] = []
}

/// A coding key made at run time.
struct DynamicKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init?(stringValue: String) { self.init(stringValue) }

    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

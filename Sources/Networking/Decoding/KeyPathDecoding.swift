/// Decodes a model that sits at a dotted key path inside the JSON (`"data"`, `"page.items"`,
/// `"results.0"`), so that coding paths in errors start at the document's root.
struct KeyPathDecodable<Value: Decodable>: Decodable {
    let value: Value

    init(from decoder: any Decoder) throws {
        value = try Self.decode(from: decoder, remaining: ArraySlice(KeyPathDecoding.components))
    }

    // Each step decodes the next level *inside* the nested `decode` call: a decoder must not be
    // kept past the `init(from:)` it was given to, because Foundation's JSONDecoder reuses one
    // decoder object and moves it back to the parent value when that call returns.
    private static func decode(from decoder: any Decoder, remaining: ArraySlice<String>) throws -> Value {
        guard let first = remaining.first else { return try Value(from: decoder) }
        let rest = Array(remaining.dropFirst())
        if let index = Int(first), var elements = try? decoder.unkeyedContainer() {
            while elements.currentIndex < index {
                guard !elements.isAtEnd else { break }
                _ = try elements.decode(SkippedValue.self)
            }
            guard !elements.isAtEnd else {
                throw DecodingError.valueNotFound(
                    Value.self,
                    .init(codingPath: elements.codingPath, debugDescription: "the array has no element at index \(index)"))
            }
            return try KeyPathDecoding.$components.withValue(rest) { try elements.decode(KeyPathDecodable.self).value }
        }
        let container = try decoder.container(keyedBy: DynamicKey.self)
        let key = DynamicKey(first)
        guard container.contains(key) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: container.codingPath, debugDescription: "no value at key path component \"\(first)\""))
        }
        return try KeyPathDecoding.$components.withValue(rest) {
            try container.decode(KeyPathDecodable.self, forKey: key).value
        }
    }

    private struct SkippedValue: Decodable {
        init(from decoder: any Decoder) throws {}
    }
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

enum KeyPathDecoding {
    /// The key path components for the decoding running on this task.
    @TaskLocal static var components: [String] = []
}

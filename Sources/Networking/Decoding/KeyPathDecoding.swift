/// Decodes a model that sits at a dotted key path inside the JSON (`"data"`, `"page.items"`,
/// `"results.0"`), so that coding paths in errors start at the document's root.
struct KeyPathDecodable<Value: Decodable>: Decodable {
    let value: Value

    init(from decoder: any Decoder) throws {
        value = try Self.decode(from: decoder, remaining: ArraySlice(KeyPathDecoding.components))
    }

    private static func decode(from decoder: any Decoder, remaining: ArraySlice<String>) throws -> Value {
        guard let first = remaining.first else { return try Value(from: decoder) }
        let rest = remaining.dropFirst()
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
            return try elements.decode(Nested.self).value(rest)
        }
        let container = try decoder.container(keyedBy: DynamicKey.self)
        let key = DynamicKey(first)
        guard container.contains(key) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: container.codingPath, debugDescription: "no value at key path component \"\(first)\""))
        }
        return try container.decode(Nested.self, forKey: key).value(rest)
    }

    /// Defers decoding until the remaining path is known, keeping the decoder's coding path.
    private struct Nested: Decodable {
        let decoder: any Decoder
        init(from decoder: any Decoder) throws { self.decoder = decoder }
        func value(_ remaining: ArraySlice<String>) throws -> Value { try KeyPathDecodable.decode(from: decoder, remaining: remaining) }
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

import Foundation

/// Decodes at a key path with `JSONDecoder` itself, for options `FastJSONDecoder` leaves to it
/// (`allowsJSON5`, `assumesTopLevelDictionary`, strategies it does not know, inputs over 1 GB), and
/// for repositories configured with `usesFoundationJSONDecoder`.
///
/// It walks the same way as `FastJSONDecoderImpl.decode(_:atKeyPath:)`, one nested value per path
/// component, with the components still to walk in a task-local value.
struct FastJSONKeyPathFallback<Value: Decodable>: Decodable {
    let value: Value

    static func decode(with decoder: JSONDecoder, from data: Data, keyPath: [String]) throws -> Value {
        try FastJSONNumberScreen.check(data, json5: decoder.allowsJSON5)
        if keyPath.isEmpty { return try decoder.decode(Value.self, from: data) }
        return try FastJSONKeyPathFallbackContext.$components.withValue(keyPath[...]) {
            try decoder.decode(FastJSONKeyPathFallback<Value>.self, from: data).value
        }
    }

    init(from decoder: any Decoder) throws {
        let components = FastJSONKeyPathFallbackContext.components
        guard let first = components.first else {
            value = try decoder.singleValueContainer().decode(Value.self)
            return
        }
        let rest = components.dropFirst()
        if let index = Int(first), var elements = try? decoder.unkeyedContainer() {
            while elements.currentIndex < index, !elements.isAtEnd {
                _ = try elements.decode(Skipped.self)
            }
            guard index >= 0, !elements.isAtEnd else {
                throw DecodingError.valueNotFound(
                    Value.self,
                    DecodingError.Context(
                        codingPath: elements.codingPath + [FastJSONCodingKey(index: index)],
                        debugDescription: "the array has no element at index \(index)"))
            }
            if rest.isEmpty {
                value = try elements.decode(Value.self)
            } else {
                value = try FastJSONKeyPathFallbackContext.$components.withValue(rest) {
                    try elements.decode(FastJSONKeyPathFallback<Value>.self).value
                }
            }
            return
        }
        let container = try decoder.container(keyedBy: FastJSONCodingKey.self)
        let key = FastJSONCodingKey(stringValue: first)
        guard container.contains(key) else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: container.codingPath, debugDescription: "no value at key path component \"\(first)\""))
        }
        if rest.isEmpty {
            value = try container.decode(Value.self, forKey: key)
        } else {
            value = try FastJSONKeyPathFallbackContext.$components.withValue(rest) {
                try container.decode(FastJSONKeyPathFallback<Value>.self, forKey: key).value
            }
        }
    }

    /// An array element passed over on the way to an index.
    private struct Skipped: Decodable {
        init(from decoder: any Decoder) throws {}
    }
}

/// The key path components still to walk, for the fallback decode running on this task.
enum FastJSONKeyPathFallbackContext {
    @TaskLocal static var components: ArraySlice<String> = []
}

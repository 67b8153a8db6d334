/// The coding keys the decoder makes itself, shaped like `JSONDecoder`'s: array positions
/// (`"Index 3"` with integer value 3), `"super"`, dictionary keys under a key strategy, keys handed to
/// a custom key strategy, and key-path components.
struct FastJSONCodingKey: CodingKey, Sendable {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }

    /// A position in an unkeyed container, as `JSONDecoder` names it.
    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    /// The key `superDecoder()` uses.
    static let superKey = FastJSONCodingKey(stringValue: "super")
}

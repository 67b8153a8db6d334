import Foundation

extension JSONDecoder {
    /// Whether this is a subclass, whose `decode(_:from:)` may do more than its settings say: it
    /// is shared rather than copied, and decodes bodies itself.
    var isSubclass: Bool { type(of: self) != JSONDecoder.self }

    /// A new decoder with the same strategies and user info: repositories keep their own, so
    /// that changing a configuration's decoder later (it is a class, shared by the configuration's
    /// copies) does not change repositories already made. A subclass is kept as it is, since its
    /// `decode(_:from:)` may do more than its settings say: it is shared, not copied.
    func copy() -> JSONDecoder {
        guard !isSubclass else { return self }
        let copy = JSONDecoder()
        copy.keyDecodingStrategy = keyDecodingStrategy
        copy.dateDecodingStrategy = dateDecodingStrategy
        copy.dataDecodingStrategy = dataDecodingStrategy
        copy.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
        copy.userInfo = userInfo
        copy.allowsJSON5 = allowsJSON5
        copy.assumesTopLevelDictionary = assumesTopLevelDictionary
        return copy
    }
}

extension JSONEncoder {
    /// A new encoder with the same formatting, strategies and user info (see `JSONDecoder.copy()`);
    /// a subclass, whose `encode(_:)` may do more than its settings say, is shared as it is.
    func copy() -> JSONEncoder {
        guard type(of: self) == JSONEncoder.self else { return self }
        let copy = JSONEncoder()
        copy.outputFormatting = outputFormatting
        copy.keyEncodingStrategy = keyEncodingStrategy
        copy.dateEncodingStrategy = dateEncodingStrategy
        copy.dataEncodingStrategy = dataEncodingStrategy
        copy.nonConformingFloatEncodingStrategy = nonConformingFloatEncodingStrategy
        copy.userInfo = userInfo
        return copy
    }
}

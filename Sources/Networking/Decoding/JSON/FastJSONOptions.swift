import Foundation

/// A snapshot of a `JSONDecoder`'s strategies and `userInfo`, shared (immutably) by every decode.
///
/// Strategies this decoder does not implement itself — `allowsJSON5`, `assumesTopLevelDictionary`,
/// and any strategy case this file does not know (such as `formatted(DateFormatter)` on Apple
/// platforms) — make `fallback` a configured copy of the `JSONDecoder`, which then does all decoding.
/// `JSONDecoder`'s strategy closures are `@Sendable`, so the snapshot is `Sendable`.
final class FastJSONOptions: Sendable {
    enum KeyStrategy: Sendable {
        case useDefaultKeys
        case convertFromSnakeCase
        case custom(@Sendable ([any CodingKey]) -> any CodingKey)
    }

    enum DateStrategy: Sendable {
        case deferredToDate
        case secondsSince1970
        case millisecondsSince1970
        case iso8601
        case custom(@Sendable (any Decoder) throws -> Date)
    }

    enum DataStrategy: Sendable {
        case deferredToData
        case base64
        case custom(@Sendable (any Decoder) throws -> Data)
    }

    /// The strings `convertFromString` maps to infinity, minus infinity and NaN, as UTF-8.
    struct NonConformingFloatStrings: Sendable {
        let positiveInfinity: [UInt8]
        let negativeInfinity: [UInt8]
        let nan: [UInt8]
    }

    let keyStrategy: KeyStrategy
    let dateStrategy: DateStrategy
    let dataStrategy: DataStrategy
    let nonConformingFloats: NonConformingFloatStrings?
    let userInfo: [CodingUserInfoKey: any Sendable]
    /// Set when decoding must be left to `JSONDecoder`.
    let fallback: JSONDecoder?

    var usesDefaultKeys: Bool {
        if case .useDefaultKeys = keyStrategy { return true }
        return false
    }

    init(_ decoder: JSONDecoder) {
        var needsFallback = decoder.allowsJSON5 || decoder.assumesTopLevelDictionary

        let keys = decoder.keyDecodingStrategy
        if case .useDefaultKeys = keys {
            keyStrategy = .useDefaultKeys
        } else if case .convertFromSnakeCase = keys {
            keyStrategy = .convertFromSnakeCase
        } else if case .custom(let convert) = keys {
            keyStrategy = .custom(convert)
        } else {
            keyStrategy = .useDefaultKeys
            needsFallback = true
        }

        let dates = decoder.dateDecodingStrategy
        if case .deferredToDate = dates {
            dateStrategy = .deferredToDate
        } else if case .secondsSince1970 = dates {
            dateStrategy = .secondsSince1970
        } else if case .millisecondsSince1970 = dates {
            dateStrategy = .millisecondsSince1970
        } else if case .iso8601 = dates {
            dateStrategy = .iso8601
        } else if case .custom(let decode) = dates {
            dateStrategy = .custom(decode)
        } else {
            dateStrategy = .deferredToDate
            needsFallback = true
        }

        let data = decoder.dataDecodingStrategy
        if case .deferredToData = data {
            dataStrategy = .deferredToData
        } else if case .base64 = data {
            dataStrategy = .base64
        } else if case .custom(let decode) = data {
            dataStrategy = .custom(decode)
        } else {
            dataStrategy = .base64
            needsFallback = true
        }

        let floats = decoder.nonConformingFloatDecodingStrategy
        if case .convertFromString(let positiveInfinity, let negativeInfinity, let nan) = floats {
            nonConformingFloats = NonConformingFloatStrings(
                positiveInfinity: Array(positiveInfinity.utf8), negativeInfinity: Array(negativeInfinity.utf8),
                nan: Array(nan.utf8))
        } else if case .throw = floats {
            nonConformingFloats = nil
        } else {
            nonConformingFloats = nil
            needsFallback = true
        }

        userInfo = decoder.userInfo
        if needsFallback {
            let copy = JSONDecoder()
            copy.keyDecodingStrategy = keys
            copy.dateDecodingStrategy = dates
            copy.dataDecodingStrategy = data
            copy.nonConformingFloatDecodingStrategy = floats
            copy.userInfo = decoder.userInfo
            copy.allowsJSON5 = decoder.allowsJSON5
            copy.assumesTopLevelDictionary = decoder.assumesTopLevelDictionary
            fallback = copy
        } else {
            fallback = nil
        }
    }
}

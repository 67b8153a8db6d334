import Foundation

/// The library's JSON decoder: decodes models several times faster than Foundation's
/// `JSONDecoder`, with the same results and the same errors.
///
/// Repositories use it for every response body (unless
/// ``NetworkingConfiguration/usesFoundationJSONDecoder`` is set); use it directly for JSON that
/// arrives another way — a file, a cached body, a message on a socket — to decode it with the same
/// rules and speed.
///
/// ```swift
/// let decoder = JSONDecoder()
/// decoder.keyDecodingStrategy = .convertFromSnakeCase
/// let books = try FastJSONDecoder(decoder).decode([Book].self, from: data, at: "data")
/// ```
///
/// It scans the document once into a compact tape without making strings, arrays or dictionaries,
/// then runs the models' `init(from:)` against it; keys are compared as bytes (as Swift strings
/// when one is not ASCII, so canonically equivalent keys match as in `JSONDecoder`), and strings and
/// numbers are only read when asked for. Its rules are `JSONDecoder`'s (swift-foundation),
/// including what `JSONDecoder` only checks lazily, so both give the same value or the same
/// `DecodingError` (case, coding path, description) for the same input. Options it does not
/// implement (`allowsJSON5`, `assumesTopLevelDictionary`, the `.formatted` date strategy), and
/// documents over 1 GiB, are handed to a `JSONDecoder` with the same settings, once the document
/// is checked for the numbers `JSONDecoder` traps on (a whole number of 2^53 or more written with
/// hundreds of digits and a fraction or exponent): such a document is refused, for any model.
public struct FastJSONDecoder: Sendable {
    let options: FastJSONOptions

    /// A decoder with every setting of `decoder`, copied now: key strategies (default, snake case,
    /// custom), date strategies (deferred, seconds and milliseconds since 1970, ISO 8601, custom;
    /// `.formatted` goes to a copy of `decoder`), data strategies (deferred, base64, custom),
    /// non-conforming floats and `userInfo`. Later changes to `decoder` do not reach it.
    public init(_ decoder: JSONDecoder = JSONDecoder()) {
        options = FastJSONOptions(decoder)
    }

    /// Decodes a whole document into `type`.
    ///
    /// - Throws: the `DecodingError` `JSONDecoder` would throw for the same input.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from data: Data) throws -> T {
        try decode(type, from: data, keyPath: [])
    }

    /// Decodes the value at a dotted key path inside the document (`"data"`, `"page.items"`,
    /// `"results.0"`; a number picks an array element), leaving the rest unread.
    ///
    /// - Throws: the `DecodingError` `JSONDecoder` would throw for the same value; coding paths
    ///   start at the document's root (`data`, `Index 3`, `genre`). A missing key is `keyNotFound`
    ///   at its parent; an index past the end is `valueNotFound`.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from data: Data, at keyPath: String) throws -> T {
        try decode(type, from: data, keyPath: keyPath.split(separator: ".").map(String.init))
    }

    /// Decodes the value at `keyPath` (object keys, or array indices as decimal strings like "0").
    func decode<T: Decodable>(_ type: T.Type, from data: Data, keyPath: [String]) throws -> T {
        if let fallback = options.fallback {
            return try FastJSONKeyPathFallback<T>.decode(with: fallback, from: data, keyPath: keyPath)
        }
        // Inputs this large are left to JSONDecoder: the tape indexes values with 32-bit numbers.
        guard data.count < Int(Int32.max) / 2 else {
            return try FastJSONKeyPathFallback<T>.decode(with: Self.configuredJSONDecoder(options), from: data, keyPath: keyPath)
        }
        let session: FastJSONSession
        do {
            session = try Self.withUTF8(of: data) { try FastJSONSession(input: $0, options: options) }
        } catch let error as FastJSONSyntaxError {
            throw Self.invalidJSON(error)
        }
        let decoder = FastJSONDecoderImpl(session: session, value: 0, node: 0)
        do {
            if keyPath.isEmpty {
                return try decoder.unwrap(T.self, value: 0, parent: 0, nil)
            }
            return try decoder.decode(T.self, atKeyPath: keyPath)
        } catch let error as FastJSONSyntaxError {
            throw Self.invalidJSON(error)
        }
    }

    /// `JSONDecoder`'s error for input that is not JSON (or holds a value it cannot read).
    static func invalidJSON(_ error: FastJSONSyntaxError) -> DecodingError {
        DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: [], debugDescription: "The given data was not valid JSON.", underlyingError: error))
    }

    static func configuredJSONDecoder(_ options: FastJSONOptions) -> JSONDecoder {
        let decoder = JSONDecoder()
        switch options.keyStrategy {
        case .useDefaultKeys: decoder.keyDecodingStrategy = .useDefaultKeys
        case .convertFromSnakeCase: decoder.keyDecodingStrategy = .convertFromSnakeCase
        case .custom(let convert): decoder.keyDecodingStrategy = .custom(convert)
        }
        switch options.dateStrategy {
        case .deferredToDate: decoder.dateDecodingStrategy = .deferredToDate
        case .secondsSince1970: decoder.dateDecodingStrategy = .secondsSince1970
        case .millisecondsSince1970: decoder.dateDecodingStrategy = .millisecondsSince1970
        case .iso8601: decoder.dateDecodingStrategy = .iso8601
        case .custom(let decode): decoder.dateDecodingStrategy = .custom(decode)
        }
        switch options.dataStrategy {
        case .deferredToData: decoder.dataDecodingStrategy = .deferredToData
        case .base64: decoder.dataDecodingStrategy = .base64
        case .custom(let decode): decoder.dataDecodingStrategy = .custom(decode)
        }
        if let names = options.nonConformingFloats {
            decoder.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: String(decoding: names.positiveInfinity, as: UTF8.self),
                negativeInfinity: String(decoding: names.negativeInfinity, as: UTF8.self),
                nan: String(decoding: names.nan, as: UTF8.self))
        }
        decoder.userInfo = options.userInfo
        return decoder
    }

    /// Hands `body` the input as UTF-8 without a byte order mark, detecting UTF-16 and UTF-32 (with or
    /// without a BOM) from the first bytes exactly as `JSONDecoder` does.
    static func withUTF8<R>(of data: Data, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        let count = data.count
        let start = data.startIndex
        let b0: UInt8? = count > 0 ? data[start] : nil
        let b1: UInt8? = count > 1 ? data[start + 1] : nil
        let b2: UInt8? = count > 2 ? data[start + 2] : nil
        let b3: UInt8? = count > 3 ? data[start + 3] : nil
        var encoding = String.Encoding.utf8
        var bomLength = 0
        switch (b0, b1, b2, b3) {
        case (0, 0, 0xFE, 0xFF): (encoding, bomLength) = (.utf32BigEndian, 4)
        case (0xFE, 0xFF, 0, 0): (encoding, bomLength) = (.utf32LittleEndian, 4)
        case (0xFE, 0xFF, _, _): (encoding, bomLength) = (.utf16BigEndian, 2)
        case (0xFF, 0xFE, _, _): (encoding, bomLength) = (.utf16LittleEndian, 2)
        case (0xEF, 0xBB, 0xBF, _): bomLength = 3
        case (0, 0, 0, .some(let nz)) where nz != 0: encoding = .utf32BigEndian
        case (0, .some(let nz1), 0, .some(let nz2)) where nz1 != 0 && nz2 != 0: encoding = .utf16BigEndian
        case (.some(let nz), 0, 0, 0) where nz != 0: encoding = .utf32LittleEndian
        case (.some(let nz1), 0, .some(let nz2), 0) where nz1 != 0 && nz2 != 0: encoding = .utf16LittleEndian
        case (0, .some(let nz), nil, nil) where nz != 0: encoding = .utf16BigEndian
        case (.some(let nz), 0, nil, nil) where nz != 0: encoding = .utf16LittleEndian
        default: break
        }
        if encoding == .utf8 {
            return try data.withUnsafeBytes { bytes in
                try body(UnsafeRawBufferPointer(rebasing: bytes[bomLength...]))
            }
        }
        guard let text = String(bytes: data.dropFirst(bomLength), encoding: encoding) else {
            throw FastJSONSyntaxError("Unable to convert data to a string using the detected encoding")
        }
        var utf8 = Array(text.utf8)
        return try utf8.withUnsafeMutableBytes { try body(UnsafeRawBufferPointer($0)) }
    }
}

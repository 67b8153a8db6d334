import Foundation

/// The parameters of a request: a dictionary, an array, or an `Encodable` value.
///
/// They are sent in the query string or as a JSON body depending on the method (see
/// ``NetworkingConfiguration/queryEncodedMethods``) or on ``ParameterEncoding``. Arrays and other
/// non-object values always go in the JSON body.
///
/// Dictionary and array literals may hold values of any of these types: `String`, `Bool`,
/// integers, `Double`, `Float`, `Decimal`, `Date` (ISO 8601), `URL`, `UUID`, `nil` (left out of a
/// query or form, `null` in a JSON body), ``JSONValue``,
/// nested arrays and `[String: any Sendable]` dictionaries, and any `Encodable & Sendable` value.
/// Anything else fails the call with ``RepositoryError/invalidRequest(reason:request:)``.
///
/// ```swift
/// .get("books", parameters: ["page": page, "genre": genre.rawValue])
/// .post("books/batch", parameters: [firstBook, secondBook])
/// ```
public struct Parameters: Sendable, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    enum Storage: @unchecked Sendable {
        // `Any` here only ever holds the `any Sendable` values the initializers accept.
        case dictionary([String: any Sendable])
        case array([any Sendable])
        case encodable(any Encodable & Sendable)
        case json(JSONValue)
    }

    let storage: Storage

    /// Parameters from a dictionary whose values are any of the supported types.
    public init(_ dictionary: [String: any Sendable]) { storage = .dictionary(dictionary) }

    /// Parameters from a dictionary variable of any `Sendable` value type, such as `[String: String]`.
    public init<Value: Sendable>(dictionary: [String: Value]) {
        storage = .dictionary(dictionary.mapValues { $0 as any Sendable })
    }

    /// Parameters from an array (sent as a JSON array body).
    public init(_ array: [any Sendable]) { storage = .array(array) }

    /// Parameters from an `Encodable` value, encoded with the configuration's `JSONEncoder`. In a
    /// JSON body the encoder's text is sent as it is (under the endpoint's root key, if any), so a
    /// `Decimal` or a `UInt64` keeps every digit, and the encoder's `outputFormatting` applies
    /// (the default encoder's sorted keys make bodies deterministic; without `.sortedKeys` a
    /// dictionary's members come in any order). In a query or a form, such a number is written
    /// with every digit too. Only a value given whole keeps them in a JSON body: one inside
    /// dictionary or array parameters goes through ``JSONValue``, where a `Decimal` is a `Double`.
    /// Make a `Decimal` with `Decimal(string:)`: a float literal (`3.133`) carries a `Double`'s
    /// error, which the encoder writes (`3.132999999999999488`).
    public init(_ value: some Encodable & Sendable) { storage = .encodable(value) }

    /// Parameters given directly as JSON.
    public init(json: JSONValue) { storage = .json(json) }

    public init(dictionaryLiteral elements: (String, any Sendable)...) {
        storage = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    public init(arrayLiteral elements: (any Sendable)...) { storage = .array(elements) }

    /// The parameters as JSON. `keepingDigits` is for values only ever written as text (a
    /// route's path variables, a query, a form): a `Decimal`, an integer beyond `Int`, or a
    /// fraction the encoder wrote without an exponent, is kept as its text rather than rounded.
    ///
    /// - Throws: a reason, when a value has an unsupported type or cannot be encoded.
    func json(encoder: JSONEncoder, keepingDigits: Bool = false) throws(ParameterError) -> JSONValue {
        switch storage {
        case .dictionary(let dictionary): return try Self.convert(dictionary, path: "", encoder: encoder, digits: keepingDigits)
        case .array(let array): return try Self.convert(array, path: "", encoder: encoder, digits: keepingDigits)
        case .encodable(let value): return try Self.encode(value, path: "", encoder: encoder, digits: keepingDigits)
        case .json(let value): return try Self.checked(value, path: "")
        }
    }

    /// A ``JSONValue`` given as is, refused when it holds an infinity or a NaN, as a `Double`
    /// parameter is: JSON cannot carry one (a body refused it, a query wrote `nan`, a multipart
    /// field `null`).
    private static func checked(_ value: JSONValue, path: String) throws(ParameterError) -> JSONValue {
        func isFinite(_ value: JSONValue) -> Bool {
            switch value {
            case .double(let number): number.isFinite
            case .array(let elements): elements.allSatisfy(isFinite)
            case .object(let members): members.values.allSatisfy(isFinite)
            case .null, .bool, .int, .string: true
            }
        }
        // Named by the first in key order, so that the error is the same every time.
        func firstNonFinite(_ value: JSONValue, _ path: String) -> (String, Double)? {
            switch value {
            case .double(let number): return number.isFinite ? nil : (path, number)
            case .array(let elements):
                for (index, element) in elements.enumerated() {
                    if let found = firstNonFinite(element, "\(path)[\(index)]") { return found }
                }
                return nil
            case .object(let members):
                for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                    if let found = firstNonFinite(member, path.isEmpty ? key : "\(path).\(key)") { return found }
                }
                return nil
            case .null, .bool, .int, .string: return nil
            }
        }
        if !isFinite(value), let (path, number) = firstNonFinite(value, path) { _ = try finite(number, path: path) }
        return value
    }

    /// The encoder's own text for an `Encodable` value, to send as a JSON body unchanged (parsed
    /// into a ``JSONValue`` and written again, a number beyond a `Double`'s digits would be
    /// rounded), inside an object for each of `rootKeys` (`{"book":` … `}`); `nil` for the other
    /// kinds of parameters.
    func verbatimJSON(encoder: JSONEncoder, under rootKeys: [String]) throws(ParameterError) -> Data? {
        guard case .encodable(let value) = storage else { return nil }
        do {
            var body = Data()
            for key in rootKeys {
                body.append(UInt8(ascii: "{"))
                body.append(try JSONValue.string(key).encoded())
                body.append(UInt8(ascii: ":"))
            }
            body.append(try encoder.encode(value))
            body.append(contentsOf: repeatElement(UInt8(ascii: "}"), count: rootKeys.count))
            return body
        } catch {
            throw ParameterError(reason: "\(Self.describe("")) of type \(type(of: value)) could not be encoded: \(error)")
        }
    }

    struct ParameterError: Error {
        let reason: String
    }

    /// An integer as an `Int` (or its digits, when kept), or why it cannot be sent.
    private static func whole(_ number: some BinaryInteger, path: String, digits: Bool) throws(ParameterError) -> JSONValue {
        if let int = Int(exactly: number) { return .int(int) }
        guard digits else { throw ParameterError(reason: "\(describe(path)) \(number) is too large") }
        return .string(String(number))
    }

    /// Whether `value` is a Foundation number object that is not one of the two booleans: from
    /// `JSONSerialization` or `UserDefaults`, a 0 or 1 also casts to `Bool`, and must be sent as
    /// the number it is. (Foundation's booleans are two shared objects, on every platform.)
    private static func isNumberObject(_ value: Any) -> Bool {
        guard type(of: value) is NSNumber.Type, let number = value as? NSNumber else { return false }
        return number !== NSNumber(value: true) && number !== NSNumber(value: false)
    }

    private static func convert(_ value: Any, path: String, encoder: JSONEncoder, digits: Bool) throws(ParameterError) -> JSONValue {
        switch value {
        case let json as JSONValue: return try checked(json, path: path)
        case let text as String: return .string(text)
        case let flag as Bool where !isNumberObject(value): return .bool(flag)
        case let number as Int: return .int(number)
        case let number as Int8: return .int(Int(number))
        case let number as Int16: return .int(Int(number))
        case let number as Int32: return .int(Int(number))
        // `Int(exactly:)` where a value may not fit: an `Int` has 32 bits on watchOS.
        case let number as Int64: return try whole(number, path: path, digits: digits)
        case let number as UInt8: return .int(Int(number))
        case let number as UInt16: return .int(Int(number))
        case let number as UInt32: return try whole(number, path: path, digits: digits)
        case let number as UInt: return try whole(number, path: path, digits: digits)
        case let number as UInt64: return try whole(number, path: path, digits: digits)
        case let number as Double: return try finite(number, path: path)
        // By its shortest text, as a `Float` in an `Encodable` model is written: widened, 0.1
        // would be sent as 0.10000000149011612.
        case let number as Float: return try finite(Double("\(number)") ?? Double(number), path: path)
        case let number as Decimal:
            if digits, !number.isNaN { return .string(Self.text(of: number)) }
            return try finite(NSDecimalNumber(decimal: number).doubleValue, path: path)
        case let date as Date: return .string(date.formatted(.iso8601))
        case let url as URL: return .string(url.absoluteString)
        case let uuid as UUID: return .string(uuid.uuidString)
        case let dictionary as [String: any Sendable]:
            var members: [String: JSONValue] = [:]
            for (key, member) in dictionary {
                members[key] = try convert(member, path: path.isEmpty ? key : "\(path).\(key)", encoder: encoder, digits: digits)
            }
            return .object(members)
        case let array as [any Sendable]:
            var elements: [JSONValue] = []
            for (index, element) in array.enumerated() {
                elements.append(try convert(element, path: "\(path)[\(index)]", encoder: encoder, digits: digits))
            }
            return .array(elements)
        case let encodable as any Encodable:
            if isNil(value) { return .null }
            return try encode(encodable, path: path, encoder: encoder, digits: digits)
        default:
            if isNil(value) { return .null }
            throw ParameterError(
                reason:
                    "\(describe(path)) has type \(type(of: value)), which cannot be sent; use a String, number, Bool, Date, array, dictionary or an Encodable value"
            )
        }
    }

    private static func encode(_ value: any Encodable, path: String, encoder: JSONEncoder, digits: Bool) throws(ParameterError) -> JSONValue
    {
        do {
            if digits { return try JSONTextParser.parse(encoder.encode(value), keepingDigits: true) }
            return try JSONValue(parsing: encoder.encode(value))
        } catch {
            throw ParameterError(reason: "\(describe(path)) of type \(type(of: value)) could not be encoded: \(error)")
        }
    }

    /// A `Decimal`'s digits; one made from a `Double` (a float literal: `3.133` is
    /// 3.132999999999999488) is written as that `Double`, its binary error left out.
    private static func text(of number: Decimal) -> String {
        // A Double's 15 significant digits, if the Decimal is that Double's (`Decimal(Double)`
        // is how a float literal becomes a Decimal, with the same error).
        guard let double = Double(number.description), double.isFinite else { return number.description }
        let short = String(format: "%.15g", double)
        guard let shortDouble = Double(short), Decimal(shortDouble) == number, let shortest = Decimal(string: short) else {
            return number.description
        }
        return shortest.description
    }

    private static func finite(_ number: Double, path: String) throws(ParameterError) -> JSONValue {
        guard number.isFinite else { throw ParameterError(reason: "\(describe(path)) is \(number), which JSON cannot carry") }
        return .double(number)
    }

    private static func isNil(_ value: Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    private static func describe(_ path: String) -> String {
        path.isEmpty ? "the parameter value" : "parameter \"\(path)\""
    }
}

/// Where a request's parameters go.
public enum ParameterEncoding: Sendable, Hashable {
    /// In the URL's query string.
    case query
    /// As a JSON body with `Content-Type: application/json`.
    case json
    /// As an `application/x-www-form-urlencoded` body (for OAuth token endpoints and forms).
    case form
    /// As the text fields of a `multipart/form-data` body (with the endpoint's ``Endpoint/form``
    /// parts, if any): strings as they are, numbers and booleans as text, arrays as one field per
    /// element, objects as JSON text; `null` members are left out. Parameters that are not a
    /// dictionary fail with ``RepositoryError/invalidRequest(reason:request:)``.
    case multipart
}

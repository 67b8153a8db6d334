import Foundation

/// The `Decoder` that models' `init(from:)` receive.
///
/// One instance serves a whole decode, as in `JSONDecoder`: before a nested value's `init(from:)`
/// runs, its frame is pointed at that value and coding path, and restored afterwards, so descending
/// into a value allocates nothing. `superDecoder()` makes separate instances. `JSONDecoder`'s special
/// cases (`Date`, `Data`, `URL`, `Decimal`, and `[String: Value]` under a key strategy) are handled in
/// `unwrap`, exactly where `JSONDecoder` handles them.
final class FastJSONDecoderImpl: Decoder, SingleValueDecodingContainer {
    /// The value this decoder currently stands for, and its coding path.
    struct Frame {
        var value: Int32
        var node: Int32
    }

    let session: FastJSONSession
    /// The session's memory as plain pointers (see `FastJSONReader`).
    let reader: FastJSONReader
    /// Mutable state behind a pointer: no exclusivity checks on the hot path.
    let frame: UnsafeMutablePointer<Frame>

    init(session: FastJSONSession, value: Int32, node: Int32) {
        self.session = session
        reader = session.reader
        frame = UnsafeMutablePointer<Frame>.allocate(capacity: 1)
        frame.initialize(to: Frame(value: value, node: node))
    }

    deinit {
        frame.deallocate()
    }

    var codingPath: [any CodingKey] { session.codingPath(frame.pointee.node) }

    var userInfo: [CodingUserInfoKey: Any] { session.userInfo }

    // MARK: - Containers

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let current = frame.pointee
        return try keyedContainer(Key.self, value: current.value, node: current.node)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let current = frame.pointee
        return try unkeyedContainer(value: current.value, node: current.node)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func keyedContainer<Key: CodingKey>(_ type: Key.Type, value: Int32, node: Int32) throws -> KeyedDecodingContainer<Key> {
        let kind = reader.tape.kind(value)
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
        return KeyedDecodingContainer(FastJSONKeyedContainer<Key>(decoder: self, object: value, node: node, table: table))
    }

    func unkeyedContainer(value: Int32, node: Int32) throws -> any UnkeyedDecodingContainer {
        let kind = reader.tape.kind(value)
        guard kind == FastJSONTape.array else {
            if kind == FastJSONTape.null {
                throw DecodingError.valueNotFound(
                    [Any].self,
                    DecodingError.Context(
                        codingPath: session.codingPath(node),
                        debugDescription: "Cannot get unkeyed decoding container -- found null value instead"))
            }
            throw DecodingError.typeMismatch(
                [Any].self,
                DecodingError.Context(
                    codingPath: session.codingPath(node),
                    debugDescription: "Expected to decode \([Any].self) but found \(FastJSONTape.describe(kind)) instead."))
        }
        return FastJSONUnkeyedContainer(decoder: self, array: value, node: node)
    }

    // MARK: - Nested values

    /// Runs `body` with this decoder standing for `value`, whose path is `parent` + `component`
    /// (just `parent` when nil); then restores the frame and drops the key tables and buffers the
    /// body left in scratch (path nodes stay: see `FastJSONScratch`).
    @inline(__always)
    func with<R>(value: Int32, parent: Int32, _ component: FastJSONPathNode.Component?, _ body: () throws -> R) rethrows -> R {
        let scratch = reader.scratch
        let marks = scratch.pointee.marks
        var node = parent
        if let component { node = scratch.pointee.pushNode(parent: parent, component) }
        let saved = frame.pointee
        frame.pointee = Frame(value: value, node: node)
        defer {
            frame.pointee = saved
            scratch.pointee.restore(marks)
        }
        return try body()
    }

    /// Decodes any `Decodable` at tape index `value`, whose coding path is `parent` + `component`:
    /// `JSONDecoder`'s `unwrap`.
    func unwrap<T: Decodable>(_ type: T.Type, value: Int32, parent: Int32, _ component: FastJSONPathNode.Component?) throws -> T {
        // Primitives skip init(from:) and its frame; the result and errors are the same.
        if T.self == String.self { return try primitive(String.self, value, parent, component) }
        if T.self == Int.self { return try primitive(Int.self, value, parent, component) }
        if T.self == Double.self { return try primitive(Double.self, value, parent, component) }
        if T.self == Bool.self { return try primitive(Bool.self, value, parent, component) }
        if T.self == Int64.self { return try primitive(Int64.self, value, parent, component) }
        if T.self == Float.self { return try primitive(Float.self, value, parent, component) }

        if T.self == Data.self { return try cast(data(value, parent, component)) }
        if T.self == Date.self { return try cast(date(value, parent, component)) }
        if T.self == URL.self { return try cast(url(value, parent, component)) }
        if T.self == Decimal.self { return try cast(decimal(value, parent, component)) }
        switch kind(of: T.self) {
        case 1:
            if let array = T.self as? any FastJSONArrayDecodable.Type, reader.tape.kind(value) == FastJSONTape.array {
                return try with(value: value, parent: parent, component) {
                    guard let result = try array.fastJSONDecode(self, value: value, node: frame.pointee.node) as? T else {
                        return try T(from: self)
                    }
                    return result
                }
            }
        case 2:
            if let dictionary = T.self as? any FastJSONStringKeyedDictionary.Type {
                return try stringKeyedDictionary(dictionary, as: T.self, value, parent, component)
            }
        default:
            break
        }
        return try with(value: value, parent: parent, component) { try T(from: self) }
    }

    /// How `unwrap` decodes `type`, remembered per decode (conformance checks are slow).
    @inline(__always) private func kind<T>(of type: T.Type) -> UInt8 {
        let identifier = ObjectIdentifier(type)
        let known = reader.scratch.pointee.typeKinds
        for index in 0..<known.count where known[index].type == identifier {
            return known[index].kind
        }
        return classify(type)
    }

    private func classify<T>(_ type: T.Type) -> UInt8 {
        var kind: UInt8 = 0
        if T.self is any FastJSONArrayDecodable.Type {
            kind = 1
        } else if !session.options.usesDefaultKeys, T.self is any FastJSONStringKeyedDictionary.Type {
            kind = 2
        }
        if reader.scratch.pointee.typeKinds.count < 16 {
            reader.scratch.pointee.typeKinds.append(FastJSONScratch.TypeKind(type: ObjectIdentifier(type), kind: kind))
        }
        return kind
    }

    /// Reinterprets a value whose type the caller has checked is `T`.
    @inline(__always) private func cast<Value, T>(_ value: Value) -> T {
        unsafeBitCast(value, to: T.self)
    }

    @inline(__always)
    private func primitive<Value: FastJSONPrimitive, T>(
        _ type: Value.Type, _ value: Int32, _ parent: Int32, _ component: FastJSONPathNode.Component?
    ) throws -> T {
        do {
            return cast(try Value.fastJSONRead(reader, value))
        } catch {
            throw session.error(error, Value.self, node: parent, component)
        }
    }

    private func checkNotNull(_ type: Any.Type, _ value: Int32, _ parent: Int32, _ component: FastJSONPathNode.Component?) throws {
        if reader.tape.kind(value) == FastJSONTape.null {
            throw session.error(.valueNotFound, type, node: parent, component)
        }
    }

    private func data(_ value: Int32, _ parent: Int32, _ component: FastJSONPathNode.Component?) throws -> Data {
        try checkNotNull(Data.self, value, parent, component)
        switch session.options.dataStrategy {
        case .deferredToData:
            return try with(value: value, parent: parent, component) { try Data(from: self) }
        case .base64:
            let text: String
            do {
                text = try reader.string(value)
            } catch {
                throw session.error(error, String.self, node: parent, component)
            }
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: session.codingPath(parent, component), debugDescription: "Encountered Data is not valid Base64."))
            }
            return data
        case .custom(let decode):
            return try with(value: value, parent: parent, component) { try decode(self) }
        }
    }

    private func date(_ value: Int32, _ parent: Int32, _ component: FastJSONPathNode.Component?) throws -> Date {
        try checkNotNull(Date.self, value, parent, component)
        switch session.options.dateStrategy {
        case .deferredToDate:
            return try with(value: value, parent: parent, component) { try Date(from: self) }
        case .secondsSince1970:
            let seconds: Double = try primitive(Double.self, value, parent, component)
            return Date(timeIntervalSince1970: seconds)
        case .millisecondsSince1970:
            let milliseconds: Double = try primitive(Double.self, value, parent, component)
            return Date(timeIntervalSince1970: milliseconds / 1000.0)
        case .iso8601:
            let text: String = try primitive(String.self, value, parent, component)
            guard let date = try? Date.ISO8601FormatStyle().parse(text) else {
                // JSONDecoder reports this at the decoder's own path, without the key.
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: codingPath, debugDescription: "Expected date string to be ISO8601-formatted."))
            }
            return date
        case .custom(let decode):
            return try with(value: value, parent: parent, component) { try decode(self) }
        }
    }

    private func url(_ value: Int32, _ parent: Int32, _ component: FastJSONPathNode.Component?) throws -> URL {
        try checkNotNull(URL.self, value, parent, component)
        let text: String = try primitive(String.self, value, parent, component)
        guard let url = URL(string: text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: session.codingPath(parent, component), debugDescription: "Invalid URL string."))
        }
        return url
    }

    private func decimal(_ value: Int32, _ parent: Int32, _ component: FastJSONPathNode.Component?) throws -> Decimal {
        do {
            return try reader.decimal(value)
        } catch {
            if case .typeMismatch = error {
                // JSONDecoder gives this mismatch no description.
                throw DecodingError.typeMismatch(
                    Decimal.self,
                    DecodingError.Context(
                        codingPath: session.codingPath(parent, component), debugDescription: ""))
            }
            throw session.error(error, Decimal.self, node: parent, component)
        }
    }

    private func stringKeyedDictionary<T>(
        _ dictionary: any FastJSONStringKeyedDictionary.Type, as type: T.Type,
        _ value: Int32, _ parent: Int32, _ component: FastJSONPathNode.Component?
    ) throws -> T {
        try checkNotNull([String: Any].self, value, parent, component)
        let kind = reader.tape.kind(value)
        guard kind == FastJSONTape.object else {
            throw session.error(.typeMismatch(found: kind), [String: Any].self, node: parent, component)
        }
        var node = parent
        if let component { node = session.scratch.pointee.pushNode(parent: parent, component) }
        let result = try dictionary.fastJSONDecode(self, value: value, node: node)
        guard let typed = result as? T else {
            throw DecodingError.typeMismatch(
                T.self,
                DecodingError.Context(
                    codingPath: session.codingPath(node), debugDescription: "Unexpected dictionary type."))
        }
        return typed
    }

    // MARK: - SingleValueDecodingContainer

    @inline(__always) private func single<Value: FastJSONPrimitive>(_ type: Value.Type) throws -> Value {
        let current = frame.pointee
        do {
            return try Value.fastJSONRead(reader, current.value)
        } catch {
            throw session.error(error, Value.self, node: current.node, nil)
        }
    }

    func decodeNil() -> Bool { reader.tape.kind(frame.pointee.value) == FastJSONTape.null }
    func decode(_ type: Bool.Type) throws -> Bool { try single(Bool.self) }
    func decode(_ type: String.Type) throws -> String { try single(String.self) }
    func decode(_ type: Double.Type) throws -> Double { try single(Double.self) }
    func decode(_ type: Float.Type) throws -> Float { try single(Float.self) }
    func decode(_ type: Int.Type) throws -> Int { try single(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try single(Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try single(Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try single(Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try single(Int64.self) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 { try single(Int128.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try single(UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try single(UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try single(UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try single(UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try single(UInt64.self) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 { try single(UInt128.self) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let current = frame.pointee
        return try unwrap(T.self, value: current.value, parent: current.node, nil)
    }

}

/// An unkeyed container over one JSON array, with `JSONDecoder`'s results and errors (including its
/// quirks: `decodeIfPresent` at the end returns nil and still advances `currentIndex`).
///
/// Three 32-bit indices and a reference: small enough to live inside the `any
/// UnkeyedDecodingContainer` existential without a heap box.
struct FastJSONUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: FastJSONDecoderImpl
    /// The array's tape index.
    private let array: Int32
    /// The tape index of the next element (the value after the array once all are read).
    private var position: Int32
    private var index: Int32 = 0
    private let node: Int32

    init(decoder: FastJSONDecoderImpl, array: Int32, node: Int32) {
        self.decoder = decoder
        self.array = array
        position = array &+ 1
        self.node = node
    }

    private var session: FastJSONSession { decoder.session }

    var codingPath: [any CodingKey] { session.codingPath(node) }
    var count: Int? { decoder.reader.tape.elementCount(array) }
    var isAtEnd: Bool { Int(index) >= decoder.reader.tape.elementCount(array) }
    var currentIndex: Int { Int(index) }

    /// Whether an element is left to read (unlike `isAtEnd`, unaffected by `decodeIfPresent` past the end).
    @inline(__always) private var hasNext: Bool { position < decoder.reader.tape.next(array) }

    @inline(__always) private mutating func advance() {
        if hasNext { position = decoder.reader.tape.next(position) }
        index &+= 1
    }

    private func atEnd(_ type: Any.Type, _ message: String = "Unkeyed container is at end.") -> DecodingError {
        DecodingError.valueNotFound(
            type,
            DecodingError.Context(
                codingPath: session.codingPath(node, .index(Int(index))), debugDescription: message))
    }

    /// The next element's tape index, or `JSONDecoder`'s error for `type` at the end.
    @inline(__always) private func next(_ type: Any.Type) throws -> Int32 {
        guard hasNext else { throw atEnd(type) }
        return position
    }

    mutating func decodeNil() throws -> Bool {
        let value = try next(Never.self)
        guard decoder.reader.tape.kind(value) == FastJSONTape.null else { return false }
        advance()
        return true
    }

    @inline(__always)
    private mutating func read<Value: FastJSONPrimitive>(_ type: Value.Type) throws -> Value {
        let value = try next(Value.self)
        do {
            let result = try Value.fastJSONRead(decoder.reader, value)
            advance()
            return result
        } catch {
            throw decoder.session.error(error, Value.self, node: node, .index(Int(index)))
        }
    }

    @inline(__always)
    private mutating func readIfPresent<Value: FastJSONPrimitive>(_ type: Value.Type) throws -> Value? {
        guard hasNext, decoder.reader.tape.kind(position) != FastJSONTape.null else {
            advance()
            return nil
        }
        do {
            let result = try Value.fastJSONRead(decoder.reader, position)
            advance()
            return result
        } catch {
            throw decoder.session.error(error, Value.self, node: node, .index(Int(index)))
        }
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try read(Bool.self) }
    mutating func decode(_ type: String.Type) throws -> String { try read(String.self) }
    mutating func decode(_ type: Double.Type) throws -> Double { try read(Double.self) }
    mutating func decode(_ type: Float.Type) throws -> Float { try read(Float.self) }
    mutating func decode(_ type: Int.Type) throws -> Int { try read(Int.self) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try read(Int8.self) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try read(Int16.self) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try read(Int32.self) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try read(Int64.self) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try read(Int128.self) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try read(UInt.self) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try read(UInt8.self) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try read(UInt16.self) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try read(UInt32.self) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try read(UInt64.self) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try read(UInt128.self) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try next(T.self)
        let result = try decoder.unwrap(T.self, value: value, parent: node, .index(Int(index)))
        advance()
        return result
    }

    mutating func decodeIfPresent(_ type: Bool.Type) throws -> Bool? { try readIfPresent(Bool.self) }
    mutating func decodeIfPresent(_ type: String.Type) throws -> String? { try readIfPresent(String.self) }
    mutating func decodeIfPresent(_ type: Double.Type) throws -> Double? { try readIfPresent(Double.self) }
    mutating func decodeIfPresent(_ type: Float.Type) throws -> Float? { try readIfPresent(Float.self) }
    mutating func decodeIfPresent(_ type: Int.Type) throws -> Int? { try readIfPresent(Int.self) }
    mutating func decodeIfPresent(_ type: Int8.Type) throws -> Int8? { try readIfPresent(Int8.self) }
    mutating func decodeIfPresent(_ type: Int16.Type) throws -> Int16? { try readIfPresent(Int16.self) }
    mutating func decodeIfPresent(_ type: Int32.Type) throws -> Int32? { try readIfPresent(Int32.self) }
    mutating func decodeIfPresent(_ type: Int64.Type) throws -> Int64? { try readIfPresent(Int64.self) }
    mutating func decodeIfPresent(_ type: UInt.Type) throws -> UInt? { try readIfPresent(UInt.self) }
    mutating func decodeIfPresent(_ type: UInt8.Type) throws -> UInt8? { try readIfPresent(UInt8.self) }
    mutating func decodeIfPresent(_ type: UInt16.Type) throws -> UInt16? { try readIfPresent(UInt16.self) }
    mutating func decodeIfPresent(_ type: UInt32.Type) throws -> UInt32? { try readIfPresent(UInt32.self) }
    mutating func decodeIfPresent(_ type: UInt64.Type) throws -> UInt64? { try readIfPresent(UInt64.self) }

    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        guard hasNext, decoder.reader.tape.kind(position) != FastJSONTape.null else {
            advance()
            return nil
        }
        let result = try decoder.unwrap(T.self, value: position, parent: node, .index(Int(index)))
        advance()
        return result
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let value = try next(KeyedDecodingContainer<NestedKey>.self)
        let nested = session.scratch.pointee.pushNode(parent: node, .index(Int(index)))
        let container = try decoder.keyedContainer(NestedKey.self, value: value, node: nested)
        advance()
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let value = try next((any UnkeyedDecodingContainer).self)
        let nested = session.scratch.pointee.pushNode(parent: node, .index(Int(index)))
        let container = try decoder.unkeyedContainer(value: value, node: nested)
        advance()
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        guard hasNext else { throw atEnd((any Decoder).self, "Cannot get superDecoder() -- unkeyed container is at end.") }
        let nested = session.scratch.pointee.pushNode(parent: node, .index(Int(index)))
        let decoder = FastJSONDecoderImpl(session: session, value: position, node: nested)
        advance()
        return decoder
    }
}

/// A keyed container over one JSON object, with `JSONDecoder`'s results and errors.
///
/// Keys are found by comparing the coding key's UTF-8 with the object's (converted) keys in the
/// key table made when the container was made (`FastJSONSession.makeKeyTable`), starting after the
/// last key found, so models that read keys in document order find each one at the first try.
struct FastJSONKeyedContainer<K: CodingKey>: KeyedDecodingContainerProtocol {
    typealias Key = K

    let decoder: FastJSONDecoderImpl
    let object: Int32
    let node: Int32
    let table: FastJSONKeyTable

    init(decoder: FastJSONDecoderImpl, object: Int32, node: Int32, table: FastJSONKeyTable) {
        self.decoder = decoder
        self.object = object
        self.node = node
        self.table = table
    }

    /// A `let` of a final class: read without retaining, unlike a copy held in a local.
    private var session: FastJSONSession { decoder.session }

    var codingPath: [any CodingKey] { session.codingPath(node) }

    var allKeys: [K] {
        session.keys(of: table, object: object, node: node).compactMap { K(stringValue: $0) }
    }

    /// The tape index of the value for `key`, or -1.
    ///
    /// Keys match as in `JSONDecoder`, as Swift strings. A key found by its bytes is the answer; a
    /// miss is final when the key and every member are ASCII (the usual case); otherwise
    /// `findEquivalent` compares strings.
    @inline(__always) private func find(_ key: some CodingKey) -> Int32 {
        var name = key.stringValue
        let reader = decoder.reader
        let table = table
        guard reader.isIntact(table) else {
            return decoder.session.find(name, in: table, object: object, node: node)
        }
        var found: Int32 = -1
        let isFinal = name.withUTF8 { bytes -> Bool in
            found = reader.findFast(bytes, in: table)
            return found >= 0 || (!table.hasNonASCIIKeys && FastJSONReader.isASCII(bytes))
        }
        return isFinal ? found : reader.findEquivalent(name, in: table)
    }

    @inline(__always) private func value(for key: K) throws -> Int32 {
        let value = find(key)
        guard value >= 0 else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return value
    }

    func contains(_ key: K) -> Bool { find(key) >= 0 }

    func decodeNil(forKey key: K) throws -> Bool {
        decoder.reader.tape.kind(try value(for: key)) == FastJSONTape.null
    }

    @inline(__always)
    private func read<Value: FastJSONPrimitive>(_ type: Value.Type, _ key: K) throws -> Value {
        let value = try value(for: key)
        do {
            return try Value.fastJSONRead(decoder.reader, value)
        } catch {
            throw decoder.session.error(error, Value.self, node: node, .key(key))
        }
    }

    @inline(__always)
    private func readIfPresent<Value: FastJSONPrimitive>(_ type: Value.Type, _ key: K) throws -> Value? {
        let value = find(key)
        guard value >= 0, decoder.reader.tape.kind(value) != FastJSONTape.null else { return nil }
        do {
            return try Value.fastJSONRead(decoder.reader, value)
        } catch {
            throw decoder.session.error(error, Value.self, node: node, .key(key))
        }
    }

    func decode(_ type: Bool.Type, forKey key: K) throws -> Bool { try read(Bool.self, key) }
    func decode(_ type: String.Type, forKey key: K) throws -> String { try read(String.self, key) }
    func decode(_ type: Double.Type, forKey key: K) throws -> Double { try read(Double.self, key) }
    func decode(_ type: Float.Type, forKey key: K) throws -> Float { try read(Float.self, key) }
    func decode(_ type: Int.Type, forKey key: K) throws -> Int { try read(Int.self, key) }
    func decode(_ type: Int8.Type, forKey key: K) throws -> Int8 { try read(Int8.self, key) }
    func decode(_ type: Int16.Type, forKey key: K) throws -> Int16 { try read(Int16.self, key) }
    func decode(_ type: Int32.Type, forKey key: K) throws -> Int32 { try read(Int32.self, key) }
    func decode(_ type: Int64.Type, forKey key: K) throws -> Int64 { try read(Int64.self, key) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type, forKey key: K) throws -> Int128 { try read(Int128.self, key) }
    func decode(_ type: UInt.Type, forKey key: K) throws -> UInt { try read(UInt.self, key) }
    func decode(_ type: UInt8.Type, forKey key: K) throws -> UInt8 { try read(UInt8.self, key) }
    func decode(_ type: UInt16.Type, forKey key: K) throws -> UInt16 { try read(UInt16.self, key) }
    func decode(_ type: UInt32.Type, forKey key: K) throws -> UInt32 { try read(UInt32.self, key) }
    func decode(_ type: UInt64.Type, forKey key: K) throws -> UInt64 { try read(UInt64.self, key) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type, forKey key: K) throws -> UInt128 { try read(UInt128.self, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: K) throws -> T {
        try decoder.unwrap(T.self, value: try value(for: key), parent: node, .key(key))
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: K) throws -> Bool? { try readIfPresent(Bool.self, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: K) throws -> String? { try readIfPresent(String.self, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: K) throws -> Double? { try readIfPresent(Double.self, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: K) throws -> Float? { try readIfPresent(Float.self, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: K) throws -> Int? { try readIfPresent(Int.self, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: K) throws -> Int8? { try readIfPresent(Int8.self, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: K) throws -> Int16? { try readIfPresent(Int16.self, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: K) throws -> Int32? { try readIfPresent(Int32.self, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: K) throws -> Int64? { try readIfPresent(Int64.self, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: K) throws -> UInt? { try readIfPresent(UInt.self, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: K) throws -> UInt8? { try readIfPresent(UInt8.self, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: K) throws -> UInt16? { try readIfPresent(UInt16.self, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: K) throws -> UInt32? { try readIfPresent(UInt32.self, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: K) throws -> UInt64? { try readIfPresent(UInt64.self, key) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: K) throws -> T? {
        let value = find(key)
        guard value >= 0, decoder.reader.tape.kind(value) != FastJSONTape.null else { return nil }
        return try decoder.unwrap(T.self, value: value, parent: node, .key(key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: K) throws -> KeyedDecodingContainer<NestedKey> {
        let value = try value(for: key)
        let nested = session.scratch.pointee.pushNode(parent: node, .key(key))
        return try decoder.keyedContainer(NestedKey.self, value: value, node: nested)
    }

    func nestedUnkeyedContainer(forKey key: K) throws -> any UnkeyedDecodingContainer {
        let value = try value(for: key)
        let nested = session.scratch.pointee.pushNode(parent: node, .key(key))
        return try decoder.unkeyedContainer(value: value, node: nested)
    }

    func superDecoder() throws -> any Decoder {
        // A missing key gives a decoder for null, as in JSONDecoder.
        let value = find(FastJSONCodingKey.superKey)
        let nested = session.scratch.pointee.pushNode(parent: node, .superKey)
        return FastJSONDecoderImpl(session: session, value: value >= 0 ? value : session.tape.nullIndex, node: nested)
    }

    func superDecoder(forKey key: K) throws -> any Decoder {
        let value = find(key)
        let nested = session.scratch.pointee.pushNode(parent: node, .key(key))
        return FastJSONDecoderImpl(session: session, value: value >= 0 ? value : session.tape.nullIndex, node: nested)
    }
}

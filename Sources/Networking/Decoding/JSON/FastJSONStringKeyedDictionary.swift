/// Marks `[String: Value]`, which `JSONDecoder` decodes itself — without converting its keys —
/// whenever a key decoding strategy other than `useDefaultKeys` is set.
protocol FastJSONStringKeyedDictionary {
    /// Decodes the object at `value`; `node` is the dictionary's own coding path.
    static func fastJSONDecode(_ decoder: FastJSONDecoderImpl, value: Int32, node: Int32) throws -> Self
}

extension Dictionary: FastJSONStringKeyedDictionary where Key == String, Value: Decodable {
    static func fastJSONDecode(_ decoder: FastJSONDecoderImpl, value: Int32, node: Int32) throws -> Self {
        let session = decoder.session
        let memberCount = session.tape.elementCount(value)
        var result: [String: Value] = [:]
        result.reserveCapacity(fastJSONReservation(count: memberCount, stride: MemoryLayout<(String, Value)>.stride))
        var key = value &+ 1
        for _ in 0..<memberCount {
            let member = key &+ 1
            key = session.tape.next(member)
            let name = try decoder.reader.stringContents(member &- 1)
            let element = try decoder.unwrap(Value.self, value: member, parent: node, .key(FastJSONCodingKey(stringValue: name)))
            // The first of equal keys wins, as in JSONDecoder.
            if result[name] == nil { result[name] = element }
        }
        return result
    }
}

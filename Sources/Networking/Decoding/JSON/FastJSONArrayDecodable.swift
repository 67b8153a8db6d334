/// Marks `Array`, whose elements the decoder reads directly instead of through the standard
/// library's `init(from:)` and an `UnkeyedDecodingContainer` existential: same calls in the same
/// order, so the same values and errors, minus the dynamic dispatch and the reallocations (the
/// element count is known).
protocol FastJSONArrayDecodable {
    /// Decodes the array at `value` (which must be an array); `node` is the array's coding path.
    static func fastJSONDecode(_ decoder: FastJSONDecoderImpl, value: Int32, node: Int32) throws -> Self
}

extension Array: FastJSONArrayDecodable where Element: Decodable {
    static func fastJSONDecode(_ decoder: FastJSONDecoderImpl, value: Int32, node: Int32) throws -> Self {
        let tape = decoder.reader.tape
        let count = tape.elementCount(value)
        var result: [Element] = []
        result.reserveCapacity(fastJSONReservation(count: count, stride: MemoryLayout<Element>.stride))
        var element = value &+ 1
        for index in 0..<count {
            result.append(try decoder.unwrap(Element.self, value: element, parent: node, .index(index)))
            element = tape.next(element)
        }
        return result
    }
}

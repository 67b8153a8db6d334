extension JSONValue {
    /// The value the library's decoder stands at, read from its tape by kind, without recursion.
    ///
    /// By kind: trying each type in turn, as `init(from:)` must with another decoder, builds an
    /// error with the whole coding path for every miss, which a large, deeply nested error body
    /// makes take minutes. Without recursion: decoding nested containers through `init(from:)`
    /// takes several stack frames per level, so a body nested to the decoder's limit (512) would
    /// need more stack than a thread of Swift's cooperative pool has on Apple platforms (512 KiB)
    /// — and error bodies are parsed into a `JSONValue` for error mapping, whatever they hold.
    init(fastJSON fast: FastJSONDecoderImpl) throws {
        do {
            self = try Self.tree(fast.reader, at: fast.frame.pointee.value)
        } catch {
            throw fast.session.error(error, JSONValue.self, node: fast.frame.pointee.node, nil)
        }
    }

    /// One array or object being built: its elements or members so far, how many are left, and
    /// the key of the member whose value comes next.
    private struct OpenContainer {
        var elements: [JSONValue] = []
        var members: [String: JSONValue] = [:]
        let isObject: Bool
        var remaining: Int
        var key = ""
    }

    /// The value at `root` and everything in it, read in document order with an explicit stack of
    /// the containers still open.
    private static func tree(_ reader: FastJSONReader, at root: Int32) throws(FastJSONValueFailure) -> JSONValue {
        let tape = reader.tape
        var open: [OpenContainer] = []
        var index = root
        while true {
            var value: JSONValue
            let kind = tape.kind(index)
            if kind == FastJSONTape.array || kind == FastJSONTape.object {
                let count = tape.elementCount(index)
                index &+= 1
                if count > 0 {
                    var container = OpenContainer(isObject: kind == FastJSONTape.object, remaining: count)
                    let reserved = fastJSONReservation(count: count, stride: MemoryLayout<(String, JSONValue)>.stride)
                    if container.isObject {
                        container.members.reserveCapacity(reserved)
                        container.key = try key(reader, at: index)
                        index &+= 1
                    } else {
                        container.elements.reserveCapacity(reserved)
                    }
                    open.append(container)
                    continue
                }
                value = kind == FastJSONTape.object ? .object([:]) : .array([])
            } else {
                value = try scalar(reader, at: index)
                index &+= 1
            }
            // Hands the value to the innermost open container, and each container it completes
            // to the one around it.
            while let last = open.indices.last {
                if open[last].isObject {
                    // The first of equal keys wins, as in `JSONDecoder`.
                    if open[last].members[open[last].key] == nil { open[last].members[open[last].key] = value }
                } else {
                    open[last].elements.append(value)
                }
                open[last].remaining -= 1
                if open[last].remaining > 0 {
                    if open[last].isObject {
                        open[last].key = try key(reader, at: index)
                        index &+= 1
                    }
                    break
                }
                let done = open.removeLast()
                value = done.isObject ? .object(done.members) : .array(done.elements)
            }
            if open.isEmpty { return value }
        }
    }

    private static func key(_ reader: FastJSONReader, at index: Int32) throws(FastJSONValueFailure) -> String {
        do {
            return try reader.stringContents(index)
        } catch {
            throw .syntax(error)
        }
    }

    /// A value that is not an array or an object.
    private static func scalar(_ reader: FastJSONReader, at value: Int32) throws(FastJSONValueFailure) -> JSONValue {
        switch reader.tape.kind(value) {
        case FastJSONTape.null: return .null
        case FastJSONTape.true: return .bool(true)
        case FastJSONTape.false: return .bool(false)
        case FastJSONTape.number:
            if reader.tape.flags(value) & FastJSONTape.plainInteger != 0, let integer = try? reader.integer(value, as: Int.self) {
                return .int(integer)
            }
            if let double = try? reader.double(value) {
                // A whole number written with a fraction or an exponent is an integer while a
                // double holds it exactly, as a `JSONDecoder` reads it; past 2^53 it stays a
                // double (`JSONDecoder` reads it exactly through `Decimal`, at a cost per value a
                // hostile body would multiply).
                let exact = double.magnitude < 9_007_199_254_740_992 ? Int(exactly: double) : nil
                return exact.map { .int($0) } ?? .double(double)
            }
            if let integer = try? reader.integer(value, as: Int.self) {
                return .int(integer)  // a number that underflows a double (1e-400) is 0
            }
            return .double(try reader.double(value))
        default:
            // A decoder told to read non-conforming floats from strings ("nan") reads them so.
            if let special = try? reader.double(value) { return .double(special) }
            return .string(try reader.string(value))
        }
    }
}

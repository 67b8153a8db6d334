/// The types every container reads directly (`Bool`, `String`, the integers, `Double`, `Float`),
/// with the reader for each, so containers can share one generic, closure-free read path
/// that the compiler specializes per type.
protocol FastJSONPrimitive {
    static func fastJSONRead(_ reader: FastJSONReader, _ value: Int32) throws(FastJSONValueFailure) -> Self
}

extension Bool: FastJSONPrimitive {
    @inline(__always) static func fastJSONRead(_ reader: FastJSONReader, _ value: Int32) throws(FastJSONValueFailure) -> Bool {
        try reader.bool(value)
    }
}

extension String: FastJSONPrimitive {
    @inline(__always) static func fastJSONRead(_ reader: FastJSONReader, _ value: Int32) throws(FastJSONValueFailure) -> String {
        try reader.string(value)
    }
}

extension Double: FastJSONPrimitive {
    @inline(__always) static func fastJSONRead(_ reader: FastJSONReader, _ value: Int32) throws(FastJSONValueFailure) -> Double {
        try reader.double(value)
    }
}

extension Float: FastJSONPrimitive {
    @inline(__always) static func fastJSONRead(_ reader: FastJSONReader, _ value: Int32) throws(FastJSONValueFailure) -> Float {
        try reader.float(value)
    }
}

/// Integers share `FastJSONSession.integer`.
protocol FastJSONIntegerPrimitive: FastJSONPrimitive, FixedWidthInteger, Decodable {}

extension FastJSONIntegerPrimitive {
    @inline(__always) static func fastJSONRead(_ reader: FastJSONReader, _ value: Int32) throws(FastJSONValueFailure) -> Self {
        try reader.integer(value, as: Self.self)
    }
}

extension Int: FastJSONIntegerPrimitive {}
extension Int8: FastJSONIntegerPrimitive {}
extension Int16: FastJSONIntegerPrimitive {}
extension Int32: FastJSONIntegerPrimitive {}
extension Int64: FastJSONIntegerPrimitive {}
extension UInt: FastJSONIntegerPrimitive {}
extension UInt8: FastJSONIntegerPrimitive {}
extension UInt16: FastJSONIntegerPrimitive {}
extension UInt32: FastJSONIntegerPrimitive {}
extension UInt64: FastJSONIntegerPrimitive {}
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension Int128: FastJSONIntegerPrimitive {}
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension UInt128: FastJSONIntegerPrimitive {}

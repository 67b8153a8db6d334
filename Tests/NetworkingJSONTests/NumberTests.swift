import Foundation
import Testing

/// Numbers at and past every limit, in every width, as JSONDecoder reads them.
@Suite struct NumberTests {
    static let integerTexts = [
        "0", "-0", "1", "-1", "7", "00", "01", "-01", "-", "--1", "1-", "1-2", "+1", "1.", ".1", "1.0", "1.5", "-1.5", "1e2", "1E2",
        "1e+2", "1e-2", "1.0e2", "10e-1", "1e", "1e+", "1.e2", "0.0", "-0.0", "0e5", "0.5e1", "1.2.3", "1e2e3", "1e2.5", "1..2",
        "127", "128", "-128", "-129", "255", "256", "32767", "32768", "-32768", "-32769", "65535", "65536",
        "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
        "18446744073709551615", "18446744073709551616", "-18446744073709551615", "99999999999999999999999",
        "9007199254740992", "9007199254740993", "9007199254740993.0", "9007199254740992.5", "9223372036854775807.0",
        "9223372036854775806.9", "1.8446744073709552e19", "9.223372036854775807e18", "1e18", "1e19", "1e20", "-1e18", "1e400",
        "-1e400", "1e-400", "1.0000000000000001", "0.99999999999999999", "123456789012345678901234567890e-10",
        "4.5e15", "4.5e-1", "2e0", "1E-0", "100000000000000000000e-2", "170141183460469231731687303715884105727",
        "170141183460469231731687303715884105728", "-170141183460469231731687303715884105728",
        "340282366920938463463374607431768211455", "340282366920938463463374607431768211456", "1.5e38",
        "\"1\"", "null", "true", "[]", "{}",
    ]

    @Test(arguments: integerTexts)
    func integers(_ text: String) {
        assertSameAsJSONDecoder(Int.self, text)
        assertSameAsJSONDecoder(Int8.self, text)
        assertSameAsJSONDecoder(Int16.self, text)
        assertSameAsJSONDecoder(Int32.self, text)
        assertSameAsJSONDecoder(Int64.self, text)
        assertSameAsJSONDecoder(UInt.self, text)
        assertSameAsJSONDecoder(UInt8.self, text)
        assertSameAsJSONDecoder(UInt16.self, text)
        assertSameAsJSONDecoder(UInt32.self, text)
        assertSameAsJSONDecoder(UInt64.self, text)
        assertSameAsJSONDecoder(Int128.self, text)
        assertSameAsJSONDecoder(UInt128.self, text)
        assertSameAsJSONDecoder([Int].self, "[\(text)]")
        assertSameAsJSONDecoder([UInt8?].self, "[\(text)]")
        assertSameAsJSONDecoder([Int16].self, "[1,\(text)]")
        assertSameAsJSONDecoder([UInt128].self, "[\(text)]")
        let fields = ["int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64"]
        for field in fields {
            let object = "{" + fields.map { "\"\($0)\":\($0 == field ? text : "1")" }.joined(separator: ",") + "}"
            assertSameAsJSONDecoder(Integers.self, object)
        }
        assertSameAsJSONDecoder(OptionalIntegers.self, #"{"int":"# + text + #","uint8":"# + text + "}")
        assertSameAsJSONDecoder(Decimal.self, text)
        assertSameAsJSONDecoder([Decimal?].self, "[\(text)]")
    }

    static let floatingTexts = [
        "0", "-0", "0.0", "-0.0", "0e1", "0e5", "0E1", "0e-1", "-0e1", "0e0", "0.0e1", "0.00e1", "0.0e12", "0e12", "00e1", "0.0000e-400",
        "0e10", "-0e-10", "0.000", "1", "-1", "1.5", "0.1", "0.2", "0.3", "3.14159", "2.718281828459045",
        "1e308", "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "1e309", "-1e309",
        "5e-324", "4.9406564584124654e-324", "2.4703282292062328e-324", "2.4703282292062327e-324", "1e-323", "1e-400", "-1e-400",
        "2.2250738585072014e-308", "2.2250738585072011e-308", "123456789012345678901234567890", "0.1e1", "1e22", "1e23", "9e22",
        "8.98846567431158e307", "9007199254740993", "9007199254740993.0", "18014398509481985", "0.30000000000000004",
        "3.4028234663852886e38", "3.4028235e38", "3.4028236e38", "3.5e38", "1.17549435e-38", "1.4e-45", "7e-46", "1e-46",
        "1.00000005960464477539062499", "1.000000059604644775390625", "1.00000005960464477539062501",
        "0.1000000000000000055511151231257827021181583404541015625", "12345678901234567890e-30", "1E+2", "1e-7", "100e-2",
        "01", "-", "1.", ".5", "1e", "+1", "1.2.3", "\"1\"", "null", "true", "\"NaN\"", "\"Infinity\"", "\"-Infinity\"",
        "\"inf\"", "\"\\u0049nfinity\"",
    ]

    @Test(arguments: floatingTexts)
    func floatingPoint(_ text: String) {
        let nonConforming = Configuration(name: "convertFromString") {
            $0.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        }
        for configuration in [Configuration.default, nonConforming] {
            assertSameAsJSONDecoder(ExactDouble.self, text, configuration)
            assertSameAsJSONDecoder(ExactFloat.self, text, configuration)
            assertSameAsJSONDecoder([ExactDouble].self, "[\(text)]", configuration)
            assertSameAsJSONDecoder(Wrapper<ExactFloat>.self, #"{"value":"# + text + "}", configuration)
            // Compared by description: NaN is not equal to itself.
            let object = Data((#"{"double":"# + text + #","float":"# + text + "}").utf8)
            let diff = difference(OptionalIntegers.self, object, configuration) { String(reflecting: $0) == String(reflecting: $1) }
            #expect(diff == nil, "\(text) [\(configuration)]: \(diff ?? "")")
        }
        assertSameAsJSONDecoder(Decimal.self, text)
        assertSameAsJSONDecoder(Int.self, text)
    }

    /// Random decimal texts near the edges of exact representation (rounding must be identical).
    @Test func randomDoubles() {
        var generator = SplitMix64(seed: 0xD0B1E)
        var failures = 0
        for _ in 0..<20_000 {
            let digits = Int.random(in: 1...25, using: &generator)
            var text = (0..<digits).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
            while text.count > 1, text.hasPrefix("0") { text.removeFirst() }
            if Bool.random(using: &generator) {
                let point = Int.random(in: 1...text.count, using: &generator)
                if point < text.count { text.insert(".", at: text.index(text.startIndex, offsetBy: point)) }
            }
            if Bool.random(using: &generator) { text += "e\(Int.random(in: -340...320, using: &generator))" }
            if Bool.random(using: &generator) { text = "-" + text }
            let data = Data(text.utf8)
            if let diff = difference(ExactDouble.self, data) {
                failures += 1
                Issue.record("Double \(text): \(diff)")
            }
            if let diff = difference(ExactFloat.self, data) {
                failures += 1
                Issue.record("Float \(text): \(diff)")
            }
            if let diff = difference(Int64.self, data) {
                failures += 1
                Issue.record("Int64 \(text): \(diff)")
            }
            if failures > 20 { break }
        }
    }
}

/// A small deterministic random number generator, so failures can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

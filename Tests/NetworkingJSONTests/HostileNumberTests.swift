import Foundation
import Testing

@testable import Networking

/// Valid numbers at the edges of JSONDecoder's parsers: integers it reads through `Decimal`, and
/// exponents too long to read digit by digit.
@Suite struct HostileNumberTests {
    struct Identified: Decodable {
        let id: Int
    }

    /// Whole numbers of 2^53 or more, written with so many digits (or so many zeros after the point)
    /// that `Decimal`'s parser gives up. JSONDecoder traps on them (`preconditionFailure` in
    /// `JSONScanner.validateNumber`), so it is never asked for them as integers here.
    static let decimalOverflows = [
        "9007199254740994" + String(repeating: "0", count: 200) + "e-200",
        "-9007199254740994" + String(repeating: "0", count: 200) + "e-200",
        "9007199254740994" + String(repeating: "0", count: 300) + "e-300",
        "9007199254740994" + String(repeating: "0", count: 180) + ".5e-180",
        "0." + String(repeating: "0", count: 283) + "9007199254740994e299",
        "0." + String(repeating: "0", count: 200) + "18446744073709551615e220",
    ]

    @Test("An integer Decimal cannot parse is not representable, instead of a trap", arguments: decimalOverflows)
    func integerBeyondDecimal(_ number: String) {
        let decoder = FastJSONDecoder()
        let json = Data("{\"id\": \(number)}".utf8)
        expectNotRepresentable(number) { _ = try decoder.decode(Identified.self, from: json) }
        expectNotRepresentable(number) { _ = try decoder.decode([Int].self, from: Data("[\(number)]".utf8)) }
        expectNotRepresentable(number) { _ = try decoder.decode(Int64.self, from: Data(number.utf8)) }
        expectNotRepresentable(number) { _ = try decoder.decode(Int128.self, from: Data(number.utf8)) }
        expectNotRepresentable(number) { _ = try decoder.decode(UInt64.self, from: Data(number.utf8)) }
        expectNotRepresentable(number) { _ = try decoder.decode(UInt128.self, from: Data(number.utf8)) }
        expectNotRepresentable(number) { _ = try decoder.decode(Int.self, from: Data(number.utf8), at: "") }
        // The same numbers as floating point or Decimal do not go through that path in JSONDecoder.
        assertSameAsJSONDecoder(ExactDouble.self, number)
        assertSameAsJSONDecoder([ExactDouble].self, "[\(number)]")
        assertSameAsJSONDecoder(Decimal.self, number)
    }

    /// Whole numbers of 2^53 or more that `Decimal` parses (so JSONDecoder answers without trapping),
    /// with fewer digits than any version of its parser gives up at.
    @Test("Numbers Decimal still parses keep JSONDecoder's integer results")
    func integerWithinDecimal() {
        let numbers = [
            "9007199254740993.0", "9007199254740993" + String(repeating: "0", count: 20) + "e-20",
            "9007199254740994" + String(repeating: "0", count: 100) + "e-100", "9007199254740994." + String(repeating: "0", count: 60),
            "-9223372036854775808.0", "9223372036854775807.0", "1.8446744073709551615e19", "1e30", "1.5e17",
        ]
        for number in numbers {
            assertSameAsJSONDecoder(Int.self, number)
            assertSameAsJSONDecoder(Int64.self, number)
            assertSameAsJSONDecoder(UInt64.self, number)
            assertSameAsJSONDecoder(Int128.self, number)
            assertSameAsJSONDecoder(UInt128.self, number)
            assertSameAsJSONDecoder([Int].self, "[\(number)]")
        }
    }

    /// Exponents with more digits than the fast path reads: the value must come from the correctly
    /// rounded parser, not from a capped exponent that happens to cancel the fraction's zeros.
    static let longExponents = [
        "0." + String(repeating: "0", count: 99_999) + "1e1000000",
        "-0." + String(repeating: "0", count: 99_999) + "1e1000000",
        "0." + String(repeating: "0", count: 99_999) + "1e100000",
        "0." + String(repeating: "0", count: 99_999) + "1e100001",
        "0." + String(repeating: "0", count: 99_999) + "12e1000000",
        "0." + String(repeating: "0", count: 99_999) + "1e-1000000",
        "1e1000000", "1e-1000000", "1e0000000000000000000001", "0e1000000", "0.0e-1000000", "1e400", "1e-400", "-1e400",
        "-1e-400", "1e308", "1e-323", "1.5e0000000000000000000000000000000000002",
    ]

    @Test("An exponent too long to read exactly gives JSONDecoder's result", arguments: longExponents)
    func longExponent(_ number: String) {
        assertSameAsJSONDecoder(ExactDouble.self, number)
        assertSameAsJSONDecoder([ExactDouble].self, "[\(number)]")
        assertSameAsJSONDecoder(ExactFloat.self, number)
        assertSameAsJSONDecoder(Int.self, number)
        assertSameAsJSONDecoder([Int].self, "[\(number)]")
        assertSameAsJSONDecoder(Wrapper<Int>.self, #"{"value":"# + number + "}")
    }

    @Test("A capped exponent no longer reads as one")
    func cappedExponentValue() throws {
        let overflowing = "[0." + String(repeating: "0", count: 99_999) + "1e1000000]"
        #expect(throws: DecodingError.self) { try FastJSONDecoder().decode([Double].self, from: Data(overflowing.utf8)) }
        #expect(throws: DecodingError.self) { try FastJSONDecoder().decode([Int].self, from: Data(overflowing.utf8)) }
        let exact = "[0." + String(repeating: "0", count: 99_999) + "1e100001]"
        #expect(try FastJSONDecoder().decode([Double].self, from: Data(exact.utf8)) == [10])
        // A seven-digit exponent that the fraction cancels exactly (a megabyte of zeros).
        let cancelled = "[0." + String(repeating: "0", count: 999_999) + "1e1000001]"
        #expect(try FastJSONDecoder().decode([Double].self, from: Data(cancelled.utf8)) == [10])
        assertSameAsJSONDecoder([ExactDouble].self, cancelled)
        assertSameAsJSONDecoder([Int].self, cancelled)
    }

    @Test("Documents handed whole to JSONDecoder are screened for the numbers it traps on", arguments: decimalOverflows)
    func screenedBeforeJSONDecoder(_ number: String) throws {
        let json5 = JSONDecoder()
        json5.allowsJSON5 = true
        expectNotRepresentable(number) { _ = try FastJSONDecoder(json5).decode(Identified.self, from: Data("{id: \(number)}".utf8)) }
        expectNotRepresentable(number) { _ = try FastJSONDecoder(json5).decode([Double].self, from: Data("[\(number)]".utf8)) }
        // A line comment ends at a carriage return too.
        expectNotRepresentable(number) {
            _ = try FastJSONDecoder(json5).decode(Identified.self, from: Data("{// x\r\"id\": \(number)}".utf8))
        }
        let topLevel = JSONDecoder()
        topLevel.assumesTopLevelDictionary = true
        expectNotRepresentable(number) { _ = try FastJSONDecoder(topLevel).decode(Identified.self, from: Data("\"id\": \(number)".utf8)) }
        let foundation = BodyDecoder(jsonDecoder: JSONDecoder(), usesFoundation: true)
        let document = Data("{\"data\": {\"id\": \(number)}}".utf8)
        expectNotRepresentable(number) { _ = try foundation.decode(Identified.self, from: document, keyPath: "data") }
        expectNotRepresentable(number) { _ = try foundation.decode(Identified.self, from: Data("{\"id\": \(number)}".utf8), keyPath: nil) }
        // In UTF-16 too, which JSONDecoder reads after converting it.
        let utf16 = try #require("{\"id\": \(number)}".data(using: .utf16BigEndian))
        expectNotRepresentable(number) { _ = try foundation.decode(Identified.self, from: utf16, keyPath: nil) }
        // The parsed JSON value, read for logs and error descriptions, holds it as a double.
        let value = try JSONValue(parsing: Data("[\(number)]".utf8))
        #expect(value == .array([.double(try #require(Double(number)))]))
    }

    @Test(
        "JSON5 hexadecimal numbers JSONDecoder would read as a whole Double of 2^53 or more, and then trap on, are screened",
        arguments: [
            "0x20000000000000.0", "0X20000000000000.5", "+0x20000000000000.0", "-0x8000000000000001", "-0x8000000000000400",
            "-0x80000000000000000000000000000001",
        ])
    func hexadecimalScreenedBeforeJSONDecoder(_ number: String) throws {
        let json5 = JSONDecoder()
        json5.allowsJSON5 = true
        expectNotRepresentable(number) { _ = try FastJSONDecoder(json5).decode(Identified.self, from: Data("{id: \(number)}".utf8)) }
    }

    @Test("JSON5 hexadecimal numbers JSONDecoder reads without trapping pass the screen and decode as it decodes them")
    func hexadecimalPassesTheScreen() throws {
        let json5 = JSONDecoder()
        json5.allowsJSON5 = true
        let decoder = FastJSONDecoder(json5)
        #expect(
            try decoder.decode([Int].self, from: Data("[0x1F, 0x1F.0, -0x8000000000000000, 0x20000000000000]".utf8))
                == [31, 31, Int.min, 1 << 53])
        #expect(try decoder.decode([UInt64].self, from: Data("[0xFFFFFFFFFFFFFFFF]".utf8)) == [UInt64.max])
        // Out of Int's range: an error, no trap, as JSONDecoder gives; a document merely holding
        // such a number decodes.
        #expect(throws: DecodingError.self) { try decoder.decode([Int].self, from: Data("[0x8000000000000000]".utf8)) }
        #expect(throws: DecodingError.self) { try decoder.decode([Int].self, from: Data("[-0x8000000000000401]".utf8)) }
        #expect(try decoder.decode(Identified.self, from: Data("{id: 1, hash: 0x10000000000000000}".utf8)).id == 1)
        // Identifiers holding an x are no numbers.
        #expect(
            try decoder.decode([String: Int].self, from: Data("{x0x20000000000000: 1, max: 2}".utf8)) == ["x0x20000000000000": 1, "max": 2])
    }

    @Test("The screen passes over strings, comments, identifiers and numbers JSONDecoder reads")
    func screenPassesTheRest() throws {
        let number = Self.decimalOverflows[0]
        struct Noted: Decodable, Equatable {
            let id: Int
            let note: String
        }
        let foundation = BodyDecoder(jsonDecoder: JSONDecoder(), usesFoundation: true)
        let inString = Data("{\"id\": 1, \"note\": \"\\\"\(number)\"}".utf8)
        #expect(try foundation.decode(Noted.self, from: inString, keyPath: nil) == Noted(id: 1, note: "\"" + number))
        let json5 = JSONDecoder()
        json5.allowsJSON5 = true
        let identifier = String(repeating: "9", count: 60) + "e5"
        let commented = Data("{id: 1, // \(number)\n /* \(number) */ note: '\(number)', a\(identifier): 2}".utf8)
        #expect(try FastJSONDecoder(json5).decode(Noted.self, from: commented) == Noted(id: 1, note: number))
        // Whole numbers Decimal gives up on but too small or too large for any integer type: no trap.
        for harmless in [
            "1" + String(repeating: "0", count: 200) + "e-200", "0." + String(repeating: "0", count: 300) + "1",
            "9" + String(repeating: "0", count: 200) + ".5",
        ] {
            #expect(throws: Never.self) { _ = try foundation.decode([Double].self, from: Data("[\(harmless)]".utf8), keyPath: nil) }
            #expect(throws: Never.self) { _ = try FastJSONDecoder(json5).decode([Double].self, from: Data("[\(harmless)]".utf8)) }
        }
    }

    /// Expects JSONDecoder's error for a number it cannot represent: invalid JSON at the root, whose
    /// underlying error names the number.
    private func expectNotRepresentable(
        _ number: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) {
        do {
            try body()
            Issue.record("\(number.prefix(40))… decoded", sourceLocation: sourceLocation)
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.isEmpty, sourceLocation: sourceLocation)
            #expect(context.debugDescription == "The given data was not valid JSON.", sourceLocation: sourceLocation)
            let underlying = context.underlyingError.map { "\($0)" } ?? ""
            #expect(underlying == "Number \(number) is not representable in Swift.", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }
}

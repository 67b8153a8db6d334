import Foundation
import Testing

@testable import Networking

@Suite("Parameters")
struct ParametersTests {
    private let encoder = NetworkingConfiguration.makeDefaultEncoder()

    private func json(_ parameters: Parameters) throws -> JSONValue {
        try parameters.json(encoder: encoder)
    }

    private func reason(_ parameters: Parameters) -> String? {
        do {
            let value = try parameters.json(encoder: encoder)
            Issue.record("expected a failure, got \(value)")
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("Every supported scalar type becomes the matching JSON value")
    func scalars() throws {
        // Given
        let date = Date(timeIntervalSince1970: 0)
        let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        let parameters: Parameters = [
            "string": "text", "bool": true, "int": -1, "int8": Int8(-8), "int16": Int16(16), "int32": Int32(32),
            "int64": Int64(64), "uint": UInt(1), "uint8": UInt8(8), "uint16": UInt16(16), "uint32": UInt32(32),
            "uint64": UInt64(64), "double": 1.5, "float": Float(0.5), "float-tenth": Float(0.1), "decimal": Decimal(string: "12.25")!,
            "date": date, "url": URL(string: "https://example.com/a?b=c")!, "uuid": uuid, "json": JSONValue.array([1]),
        ]
        // When
        let value = try json(parameters)
        // Then
        #expect(
            value == [
                "string": "text", "bool": true, "int": -1, "int8": -8, "int16": 16, "int32": 32, "int64": 64,
                "uint": 1, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64, "double": 1.5, "float": 0.5, "float-tenth": 0.1,
                "decimal": 12.25, "date": "1970-01-01T00:00:00Z", "url": "https://example.com/a?b=c",
                "uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "json": [1],
            ])
    }

    @Test("Foundation's numbers (JSONSerialization's, UserDefaults') are sent as numbers, even 0 and 1; its booleans as booleans")
    func foundationNumbers() throws {
        // Given: what JSONSerialization reads, where a 0 or a 1 also casts to Bool
        let read = try #require(
            try JSONSerialization.jsonObject(with: Data(#"{"one": 1, "zero": 0, "yes": true, "no": false, "half": 0.5}"#.utf8))
                as? [String: any Sendable])
        // When
        let value = try json(Parameters(read))
        let made = try json(["one": NSNumber(value: 1), "flag": NSNumber(value: true)])
        // Then
        #expect(value == ["one": 1, "zero": 0, "yes": true, "no": false, "half": 0.5])
        #expect(made == ["one": 1, "flag": true])
    }

    @Test("Optionals are their value when present and null when absent")
    func optionals() throws {
        // Given
        let present: Int? = 3
        let absent: String? = nil
        let absentDate: Date? = nil
        struct Opaque: Sendable {}
        let absentOpaque: Opaque? = nil
        // When
        let value = try json([
            "present": present as any Sendable, "absent": absent as any Sendable,
            "absentDate": absentDate as any Sendable, "opaque": absentOpaque as any Sendable,
        ])
        // Then
        #expect(value == ["present": 3, "absent": nil, "absentDate": nil, "opaque": nil])
    }

    @Test("Nested dictionaries, arrays and Encodable values are converted all the way down")
    func nesting() throws {
        // Given
        let parameters: Parameters = [
            "filter": ["genres": ["fiction", "history"], "range": ["from": 1960, "to": 1970.5] as [String: any Sendable]]
                as [String: any Sendable],
            "books": [NewBook(title: "Dune", genre: .fiction)],
            "matrix": [[1, 2], [3]],
        ]
        // When
        let value = try json(parameters)
        // Then
        #expect(
            value == [
                "filter": ["genres": ["fiction", "history"], "range": ["from": 1960, "to": 1970.5]],
                "books": [["title": "Dune", "genre": "fiction"]],
                "matrix": [[1, 2], [3]],
            ])
    }

    @Test("Encodable values, arrays and JSON can be the whole parameters")
    func otherShapes() throws {
        #expect(try json(Parameters(NewBook(title: "Dune", genre: .fiction))) == ["title": "Dune", "genre": "fiction"])
        #expect(try json([1, "two", Int?.none as any Sendable]) == [1, "two", nil])
        #expect(try json(Parameters(json: ["a": [true]])) == ["a": [true]])
        #expect(try json(Parameters(["k": "v"])) == ["k": "v"])
    }

    @Test("A repeated literal key keeps the last value")
    func repeatedKeys() throws {
        #expect(try json(["a": 1, "a": 2]) == ["a": 2])
    }

    @Test("An unsupported type is rejected, naming the parameter and the type")
    func unsupportedType() {
        // Given
        struct Opaque: Sendable {}
        // When
        let top = reason(["owner": Opaque()])
        let nested = reason(["filter": ["owners": [1, Opaque()] as [any Sendable]] as [String: any Sendable]])
        let inArray = reason([Opaque()])
        // Then
        #expect(top?.contains("parameter \"owner\" has type Opaque") == true, "\(top ?? "nil")")
        #expect(nested?.contains("parameter \"filter.owners[1]\"") == true, "\(nested ?? "nil")")
        #expect(inArray?.contains("parameter \"[0]\"") == true, "\(inArray ?? "nil")")
    }

    @Test(
        "Numbers JSON cannot carry are rejected, naming the parameter",
        arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteNumbers(number: Double) {
        // Given / When
        let double = reason(["ratio": number])
        let float = reason(["ratio": Float(number)])
        // Then
        for text in [double, float] {
            #expect(text?.contains("parameter \"ratio\"") == true, "\(text ?? "nil")")
            #expect(text?.contains("which JSON cannot carry") == true)
        }
    }

    @Test("A NaN inside an Encodable value is rejected, naming the parameter")
    func nanInsideEncodable() {
        // Given
        struct Reading: Encodable, Sendable { var value: Double }
        // When
        let text = reason(["reading": Reading(value: .nan)])
        // Then
        #expect(text?.contains("parameter \"reading\" of type Reading could not be encoded") == true, "\(text ?? "nil")")
    }

    @Test("An unsigned value too large for Int is rejected")
    func hugeUnsigned() {
        let text = reason(["big": UInt64.max])
        #expect(text?.contains("parameter \"big\" \(UInt64.max) is too large") == true, "\(text ?? "nil")")
    }

    @Test("Through the request builder, a bad parameter becomes invalidRequest with the request")
    func invalidRequestThroughBuilder() throws {
        // Given
        let builder = RequestBuilder(configuration: try makeConfiguration())
        // When
        #expect {
            try builder.build(Endpoint<Void>.post("books", parameters: ["price": Double.nan]))
        } throws: { error in
            // Then
            guard case .invalidRequest(let reason, let request) = error as? RepositoryError else { return false }
            return reason.contains("parameter \"price\"") && request?.url.absoluteString == "http://api.test/api/v1/books"
        }
    }
}

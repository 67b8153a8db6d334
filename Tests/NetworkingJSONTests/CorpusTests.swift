import Foundation
import Testing

@testable import Networking

/// Runs the differential fuzz check on every input under Corpus/: hand-picked edge cases, inputs
/// the random tests produced, and what libFuzzer found.
@Suite struct CorpusTests {
    static let files: [URL] = {
        guard let directory = corpusURL(),
            let names = try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        else { return [] }
        return names.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }()

    @Test func corpusIsThere() {
        #expect(Self.files.count >= 50)
    }

    @Test(arguments: files)
    func corpusFile(_ file: URL) async throws {
        let data = try Data(contentsOf: file)
        let differences = await HostileInputTests.onLargeStack { fastJSONDifferentialCheck(data) }
        #expect(differences.isEmpty, "\(file.lastPathComponent):\n\(differences.joined(separator: "\n"))")
        assertSameAsJSONDecoder(StrictJSONValue.self, data: data)
        assertSameAsJSONDecoder(StrictJSONValue.self, data: data, .snakeCase)
        assertSameAsJSONDecoder(JSONAnyValue.self, data: data)
    }
}

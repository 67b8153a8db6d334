import Foundation

@testable import Networking

/// A randomly built form and the parts a parser should read back from it.
struct RandomForm {
    var form: MultipartFormData
    var expectedParts: [MultipartParser.Part] = []
    /// The unescaped name, file name and content of each part, for parsers that unescape.
    var originals: [(name: String, fileName: String?, contentType: String?, content: [UInt8])] = []

    /// Characters for names: plain ones, the three the WHATWG algorithm escapes, and non-ASCII.
    static let nameCharacters: [String] = ["a", "B", "7", " ", "-", "_", ".", "\"", "\r", "\n", "é", "日", "📄"]

    init(generator: inout SeededGenerator, directory: TemporaryDirectory, tag: String, partCount: Int? = nil) throws {
        form = MultipartFormData()
        let count = partCount ?? Int.random(in: 0...6, using: &generator)
        for index in 0..<count {
            let name = Self.randomName(&generator) + "\(index)"
            let content = generator.bytes(Int.random(in: 0...2000, using: &generator))
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                let value = String(decoding: content, as: UTF8.self)
                form.append(value, name: name)
                record(name: name, fileName: nil, contentType: nil, content: Array(value.utf8))
            case 1:
                let fileName = Bool.random(using: &generator) ? Self.randomName(&generator) + ".bin" : nil
                let contentType = Bool.random(using: &generator) ? "application/x-test" : nil
                form.append(Data(content), name: name, fileName: fileName, contentType: contentType)
                record(name: name, fileName: fileName, contentType: contentType ?? "application/octet-stream", content: content)
            default:
                let file = try directory.file("\(tag)-\(index).json", contents: Data(content))
                try form.append(fileAt: file, name: name)
                record(name: name, fileName: file.lastPathComponent, contentType: "application/json", content: content)
            }
        }
    }

    private mutating func record(name: String, fileName: String?, contentType: String?, content: [UInt8]) {
        expectedParts.append(
            MultipartParser.Part(
                name: Self.escaped(name), fileName: fileName.map(Self.escaped), contentType: contentType, content: content))
        originals.append((name, fileName, contentType, content))
    }

    static func randomName(_ generator: inout SeededGenerator) -> String {
        (0..<Int.random(in: 1...8, using: &generator)).map { _ in nameCharacters.randomElement(using: &generator) ?? "a" }.joined()
    }

    /// The WHATWG escaping, written independently of the library's.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: result += "%22"
            case 0x0D: result += "%0D"
            case 0x0A: result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

// swift-format-ignore-file
// The documentation's code, kept as the articles and the README show it (their drift tests compare
// line by line), so the formatter leaves this folder alone.
import Foundation

/// Reads documentation pages and the compiled samples beside the calling test file.
///
/// NetworkingTests, NetworkingCacheTests and NetworkingOfflineTests each hold a copy of this file
/// (Documentation/DocumentationPages.swift): test targets share no code without a target of its own.
enum DocumentationPages {
    /// One non-empty line of a code block, trimmed, with its 1-based line number in the page.
    struct Line {
        let number: Int
        let text: String
    }

    /// The package's folder: the first folder above the caller's file that holds `Package.swift`.
    static func packageRoot(from file: String = #filePath) throws -> URL {
        var folder = URL(fileURLWithPath: file).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
            guard folder.pathComponents.count > 1 else { throw CocoaError(.fileNoSuchFile) }
            folder.deleteLastPathComponent()
        }
        return folder
    }

    /// The `.md` files of a documentation catalog, sorted.
    static func markdownFiles(in catalog: URL) throws -> [URL] {
        let names = try FileManager.default.contentsOfDirectory(atPath: catalog.path)
        let pages = names.filter { $0.hasSuffix(".md") }.sorted().map { catalog.appendingPathComponent($0) }
        guard !pages.isEmpty else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: catalog.path]) }
        return pages
    }

    /// The text of every Swift file in the caller's folder: the compiled samples.
    static func samples(besides file: String = #filePath) throws -> String {
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent()
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
            .map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }
            .joined(separator: "\n")
    }

    /// The non-empty lines of each ```swift block of a Markdown page.
    static func swiftBlocks(of page: URL) throws -> [[Line]] {
        var blocks: [[Line]] = []
        var current: [Line]?
        let lines = try String(contentsOf: page, encoding: .utf8).components(separatedBy: "\n")
        for (index, raw) in lines.enumerated() {
            let text = raw.trimmingCharacters(in: .whitespaces)
            if current == nil {
                if text == "```swift" { current = [] }
            } else if text == "```" {
                blocks.append(current ?? [])
                current = nil
            } else if !text.isEmpty {
                current?.append(Line(number: index + 1, text: text))
            }
        }
        return blocks
    }

    /// The text of the first ```json block of a page.
    static func firstJSONBlock(of page: URL) throws -> String {
        let text = try String(contentsOf: page, encoding: .utf8)
        guard let start = text.range(of: "```json\n"), let end = text.range(of: "\n```", range: start.upperBound..<text.endIndex) else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: page.path])
        }
        return String(text[start.upperBound..<end.lowerBound])
    }
}

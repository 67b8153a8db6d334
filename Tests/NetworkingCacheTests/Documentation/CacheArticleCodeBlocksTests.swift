// swift-format-ignore-file
// The documentation's code, kept as the articles and the README show it (their drift tests compare
// line by line), so the formatter leaves this folder alone.
import Foundation
import Testing

// The documentation's Swift code must be code that compiles: every non-empty line of every ```swift
// block of the NetworkingCache catalog must appear in one of the sample files of this folder, which
// the test target compiles. An article edited without its sample — or a sample changed without its
// article — fails here, naming the page and the line.
@Suite("Cache article code blocks")
struct CacheArticleCodeBlocksTests {
    @Test("every line of the cache articles' Swift code is in the compiled samples")
    func articlesMatchTheCompiledSamples() throws {
        let root = try DocumentationPages.packageRoot()
        let pages = try DocumentationPages.markdownFiles(in: root.appendingPathComponent("Sources/NetworkingCache/NetworkingCache.docc"))
        let samples = try DocumentationPages.samples()
        var blocks = 0
        for page in pages {
            for block in try DocumentationPages.swiftBlocks(of: page) {
                blocks += 1
                for line in block where !samples.contains(line.text) {
                    Issue.record("\(page.path.dropFirst(root.path.count + 1)):\(line.number): not in the compiled samples (Tests/NetworkingCacheTests/Documentation): \(line.text)")
                }
            }
        }
        #expect(blocks >= 2, "expected the articles' Swift blocks, found \(blocks)")
    }
}

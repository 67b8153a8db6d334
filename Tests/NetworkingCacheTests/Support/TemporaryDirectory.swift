import Foundation

/// A fresh folder under the system's temporary folder, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cache-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The names of the files in the folder (or in `subfolder`), sorted, but the disk tier's
    /// format marker (`.format-2`).
    func files(in subfolder: String? = nil) -> [String] {
        let folder = subfolder.map { url.appendingPathComponent($0) } ?? url
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".format-") }.sorted()
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

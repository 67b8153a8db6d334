import Foundation

/// Resident memory of this process, from `/proc/self/status` (Linux; zero elsewhere).
enum ResidentMemory {
    /// `VmRSS` (current) and `VmHWM` (peak) in kB.
    static func current() -> (rss: Int, peak: Int) {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        func value(_ key: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return 0 }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return (value("VmRSS"), value("VmHWM"))
    }

    /// Sets the peak (`VmHWM`) back to the current size, so that a case's peak is its own
    /// (`/proc/self/clear_refs`, Linux 4.0 and later); returns whether it could.
    @discardableResult
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }
}

import Foundation

/// Runs the reference tools (openssl, gzip, python3) that the tests compare against. Tests that
/// need a tool are skipped when it is not installed.
enum Subprocess {
    /// The executable called `name` on the `PATH`, if any.
    static func find(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Whether `python3` exists and can import every module in `modules`.
    static func pythonHas(_ modules: [String]) -> Bool {
        guard let python = find("python3") else { return false }
        let script = modules.map { "import \($0)" }.joined(separator: "; ")
        return (try? runBlocking(python, ["-c", script]))?.status == 0
    }

    /// Runs `executable` with `arguments`, feeding `input` on standard input (through a temporary
    /// file, so large inputs and outputs cannot deadlock on pipes), and returns the exit status and
    /// standard output. Standard error is discarded.
    static func run(_ executable: URL, _ arguments: [String], input: Data = Data()) async throws -> (status: Int32, output: Data) {
        try await onPlainThread { Result { try runBlocking(executable, arguments, input: input) } }.get()
    }

    /// ``run(_:_:input:)`` on the calling thread, for the checks that decide whether a test runs.
    static func runBlocking(_ executable: URL, _ arguments: [String], input: Data = Data()) throws -> (status: Int32, output: Data) {
        let inputFile = FileManager.default.temporaryDirectory.appendingPathComponent("subprocess-\(UUID().uuidString)")
        try input.write(to: inputFile)
        defer { try? FileManager.default.removeItem(at: inputFile) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = try FileHandle(forReadingFrom: inputFile)
        process.standardError = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }
}

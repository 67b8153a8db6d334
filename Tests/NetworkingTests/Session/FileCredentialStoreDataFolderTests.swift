import Foundation
import Networking
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `FileCredentialStore.defaultDataFolder` reads `XDG_DATA_HOME` from the process environment,
/// which tests running in parallel must not change. So the variable is changed only in a child
/// process — this test binary again, running nothing but `followsEnvironment` — which writes the
/// folder it finds for each value to a file that the parent checks.
@Suite("FileCredentialStore.defaultDataFolder", .timeLimit(.minutes(1)))
struct FileCredentialStoreDataFolderTests {
    /// Set only in the child: where it writes what it found.
    static let outputKey = "NETWORKING_TEST_DATA_FOLDER_OUTPUT"

    /// The values of `XDG_DATA_HOME` tried in the child (`nil`: unset), by name.
    static let settings: [(name: String, value: String?)] = [
        ("absolute", "/tmp/networking-xdg-data"), ("unset", nil), ("empty", ""), ("relative", "relative/data"),
    ]

    @Test("defaultDataFolder follows this process's XDG_DATA_HOME, else ~/.local/share")
    func followsEnvironment() throws {
        // Given this process's environment
        let environment = ProcessInfo.processInfo.environment
        // When
        let folder = FileCredentialStore.defaultDataFolder
        // Then
        #if !canImport(Darwin)
            if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
                #expect(folder.standardizedFileURL.path == URL(fileURLWithPath: xdg).standardizedFileURL.path)
            } else {
                #expect(folder.path == NSHomeDirectory() + "/.local/share")
            }
        #endif
        #if os(Linux)
            // In the child process, where this is the only test running: try each value.
            if let output = environment[Self.outputKey] {
                var lines: [String] = []
                for (name, value) in Self.settings {
                    if let value { setenv("XDG_DATA_HOME", value, 1) } else { unsetenv("XDG_DATA_HOME") }
                    lines.append("\(name)=\(FileCredentialStore.defaultDataFolder.path)")
                }
                try lines.joined(separator: "\n").write(toFile: output, atomically: true, encoding: .utf8)
            }
        #endif
    }

    #if os(Linux)
        @Test("In a child process: $XDG_DATA_HOME when it is an absolute path, ~/.local/share when unset, empty or relative")
        func childProcess() async throws {
            // Given
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let output = folder.url.appendingPathComponent("folders.txt").path
            var environment = ProcessInfo.processInfo.environment
            environment[Self.outputKey] = output
            let home = NSHomeDirectory() + "/.local/share"
            // When
            let status = try await runThisTestBinary(filter: "followsEnvironment", environment: environment)
            // Then
            #expect(status == 0, "the child's own checks failed")
            let found = Dictionary(
                uniqueKeysWithValues: try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map { line in
                    let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                    return (parts[0], parts.count > 1 ? parts[1] : "")
                })
            #expect(found["absolute"] == "/tmp/networking-xdg-data")
            #expect(found["unset"] == home)
            #expect(found["empty"] == home)
            #expect(found["relative"] == home, "the XDG spec says a relative path is invalid and must be ignored")
        }

        /// Runs this test binary with Swift Testing and `filter`; its exit status (or -1 when it
        /// did not end within 30 seconds).
        private func runThisTestBinary(filter: String, environment: [String: String]) async throws -> Int32 {
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let ended = DispatchSemaphore(value: 0)
            process.terminationHandler = { _ in ended.signal() }
            try process.run()
            let finished = await onPlainThread { ended.wait(timeout: .now() + 30) == .success }
            guard finished else {
                process.terminate()
                return -1
            }
            return process.terminationStatus
        }
    #endif
}

import Foundation

extension FileCredentialStore {
    /// The folder where an application keeps its data, per platform:
    /// - Linux (and other non-Apple systems): `$XDG_DATA_HOME`, or `~/.local/share` when it is
    ///   not set (the XDG Base Directory specification);
    /// - Apple platforms: the user's Application Support folder (inside the app's container on
    ///   iOS, tvOS, watchOS and visionOS). On tvOS the system may purge it when space runs low,
    ///   so a session kept there can vanish: prefer `KeychainCredentialStore` on tvOS.
    public static var defaultDataFolder: URL {
        #if canImport(Darwin)
            // `urls(for:in:)` is available on every Apple platform; `homeDirectoryForCurrentUser` is macOS-only.
            if let folder = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first {
                return folder
            }
            return URL(fileURLWithPath: NSHomeDirectory(), isDirectory: true)
                .appendingPathComponent("Library/Application Support", isDirectory: true)
        #else
            let environment = ProcessInfo.processInfo.environment
            // The XDG spec: a relative value is invalid and ignored.
            if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return URL(fileURLWithPath: xdg, isDirectory: true) }
            return URL(fileURLWithPath: NSHomeDirectory(), isDirectory: true).appendingPathComponent(".local/share", isDirectory: true)
        #endif
    }
}

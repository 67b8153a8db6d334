import Foundation
import Networking

extension ResponseCache {
    /// What a ``ResponseCache`` keeps, where, and how much: a `Sendable` value validated when the
    /// cache is made.
    ///
    /// ```swift
    /// var settings = ResponseCache.Configuration()
    /// settings.diskFolder = cachesFolder.appendingPathComponent("responses")
    /// settings.servesStaleOnConnectivityFailure = true
    /// let cache = try ResponseCache(configuration: settings)
    /// ```
    public struct Configuration: Sendable {
        /// The most bytes the memory tier holds (bodies, headers and bookkeeping). Default
        /// 10 MiB; `0` turns the memory tier off.
        public var memoryByteLimit: Int
        /// The most entries the memory tier holds. Default 1,000; `0` turns it off.
        public var memoryEntryLimit: Int
        /// The folder of the disk tier, created (mode 0700) when missing; `nil` (the default)
        /// keeps answers in memory only. Several processes may share one folder.
        public var diskFolder: URL?
        /// The most bytes of files the disk tier keeps (per process sharing the folder).
        /// Default 100 MiB.
        public var diskByteLimit: Int
        /// The most files the disk tier keeps (per process sharing the folder). Default 20,000.
        public var diskEntryLimit: Int
        /// The largest body stored, in bytes; larger answers pass through unstored. Default 5 MiB.
        public var maximumBodyBytes: Int
        /// Whether each file is `fsync`ed before it is renamed into place, and its folder after,
        /// so that a power loss keeps either the old entry or the new one; and whether the folder
        /// is synced after invalidations and ``ResponseCache/removeEntries(for:)``, so that what
        /// they removed stays removed. Default `true`. Without
        /// it a crash of the machine (not of the process) may leave a damaged file, which is
        /// detected by its checksum and dropped.
        public var synchronizesDiskWrites: Bool
        /// Whether a stale answer may stand in, marked `ResponseSource.stale`, when
        /// the server cannot be reached; a ``CachePolicy`` may say otherwise per call. Never for
        /// answers marked `must-revalidate` or `no-cache`. Default `false`.
        public var servesStaleOnConnectivityFailure: Bool
        /// Whether concurrent identical `GET`s share one exchange with the server. Default `true`.
        public var coalescesRequests: Bool
        /// Whose answers a call reads and writes: entries are kept apart per discriminator, so
        /// switching users never shows one user's answers to another. `nil` (the default) uses
        /// the session's `SessionAuthorizing.sessionIdentity`; a function given here
        /// replaces it (return `nil` for answers everybody shares).
        ///
        /// A call the session will sign is never answered from, nor stored in, the cache when
        /// its discriminator is `nil`: nobody is logged in, or the session does not say who.
        public var discriminator: (@Sendable (RequestContext) -> String?)?
        /// The time source for ages and freshness. Default `NetworkingClock.live`;
        /// tests inject `NetworkingTestSupport`'s `TestClock`.
        public var clock: NetworkingClock

        /// Creates a configuration; every argument has the documented default.
        public init(
            memoryByteLimit: Int = 10 * 1024 * 1024, memoryEntryLimit: Int = 1_000, diskFolder: URL? = nil,
            diskByteLimit: Int = 100 * 1024 * 1024, diskEntryLimit: Int = 20_000, maximumBodyBytes: Int = 5 * 1024 * 1024,
            synchronizesDiskWrites: Bool = true, servesStaleOnConnectivityFailure: Bool = false, coalescesRequests: Bool = true,
            discriminator: (@Sendable (RequestContext) -> String?)? = nil, clock: NetworkingClock = .live
        ) {
            self.memoryByteLimit = memoryByteLimit
            self.memoryEntryLimit = memoryEntryLimit
            self.diskFolder = diskFolder
            self.diskByteLimit = diskByteLimit
            self.diskEntryLimit = diskEntryLimit
            self.maximumBodyBytes = maximumBodyBytes
            self.synchronizesDiskWrites = synchronizesDiskWrites
            self.servesStaleOnConnectivityFailure = servesStaleOnConnectivityFailure
            self.coalescesRequests = coalescesRequests
            self.discriminator = discriminator
            self.clock = clock
        }

        /// What is wrong with the configuration, or `nil`.
        var problem: String? {
            for (name, value) in [
                ("memoryByteLimit", memoryByteLimit), ("memoryEntryLimit", memoryEntryLimit), ("diskByteLimit", diskByteLimit),
                ("diskEntryLimit", diskEntryLimit), ("maximumBodyBytes", maximumBodyBytes),
            ] where value < 0 {
                return "\(name) must be zero or more, not \(value)"
            }
            if let diskFolder, !diskFolder.isFileURL { return "diskFolder must be a file URL, not \(diskFolder.absoluteString)" }
            return nil
        }
    }
}

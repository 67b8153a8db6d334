#if canImport(Darwin)
    import Darwin

    extension OfflineJournal {
        /// Writes a file's data through to the storage. On Apple platforms `fsync` leaves it in
        /// the drive's cache, which a power loss empties; `F_FULLFSYNC` asks the drive to write
        /// it (as SQLite does for a durable commit). A file system that refuses it gets `fsync`.
        static func durableSync(_ descriptor: Int32) -> Int32 {
            fcntl(descriptor, F_FULLFSYNC) == 0 ? 0 : fsync(descriptor)
        }
    }
#endif

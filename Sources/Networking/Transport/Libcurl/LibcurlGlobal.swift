#if os(Linux) && canImport(CCurl)
    import CCurl

    /// libcurl's process-wide state, set up once.
    enum LibcurlGlobal {
        /// Whether `curl_global_init` succeeded. Swift initialises a static `let` exactly once,
        /// thread-safely, on first use; libcurl 7.84+ also counts its own initialisations, so
        /// FoundationNetworking's call does not conflict.
        static let isInitialized: Bool = curl_global_init(networking_curl_global_default) == CURLE_OK
    }
#endif

/// The transport repositories use when they are given none.
public enum DefaultTransport {
    /// A process-wide transport: ``LibcurlTransport/shared`` on Linux (faster, and it can pin
    /// certificates), ``URLSessionTransport/shared`` elsewhere.
    public static var shared: any Transport {
        #if os(Linux) && canImport(CCurl)
            LibcurlTransport.shared
        #else
            URLSessionTransport.shared
        #endif
    }
}

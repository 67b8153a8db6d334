/// The transport repositories use when they are given none.
public enum DefaultTransport {
    /// A process-wide transport: ``URLSessionTransport/shared``.
    public static var shared: any Transport { URLSessionTransport.shared }
}

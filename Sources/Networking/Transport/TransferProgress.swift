/// How far an exchange has come: bytes of the request body sent and of the response body
/// received, with the totals when they are known.
public struct TransferProgress: Sendable, Hashable, CustomStringConvertible {
    /// Request body bytes sent so far.
    public var bytesSent: Int64
    /// The request body's size, or `nil` when there is no body or its size is not known before it
    /// is sent: a stream without a length, or a gzipped body sent as it is compressed (libcurl).
    /// A transport that stages a body in a file first (URLSession) knows it, compressed.
    public var totalBytesToSend: Int64?
    /// Response body bytes received so far.
    public var bytesReceived: Int64
    /// The response body's size from `Content-Length`, or `nil` when the server did not say.
    /// For a compressed response it counts compressed bytes, while ``bytesReceived`` may count
    /// decompressed ones. For a download to a file that resumes, both count the whole file,
    /// the bytes already on disk included.
    public var totalBytesToReceive: Int64?

    /// Creates a progress value.
    public init(bytesSent: Int64 = 0, totalBytesToSend: Int64? = nil, bytesReceived: Int64 = 0, totalBytesToReceive: Int64? = nil) {
        self.bytesSent = bytesSent
        self.totalBytesToSend = totalBytesToSend
        self.bytesReceived = bytesReceived
        self.totalBytesToReceive = totalBytesToReceive
    }

    /// The share of the upload done, from 0 to 1, when its size is known.
    public var uploadFraction: Double? {
        guard let total = totalBytesToSend, total > 0 else { return nil }
        return min(1, Double(bytesSent) / Double(total))
    }

    /// The share of the download done, from 0 to 1, when its size is known.
    public var downloadFraction: Double? {
        guard let total = totalBytesToReceive, total > 0 else { return nil }
        return min(1, Double(bytesReceived) / Double(total))
    }

    public var description: String {
        "sent \(bytesSent)/\(totalBytesToSend.map(String.init) ?? "-") received \(bytesReceived)/\(totalBytesToReceive.map(String.init) ?? "?")"
    }
}

/// Told about a request's progress, from a transport's thread, possibly often: keep it quick.
/// It is never called after the request finished or was cancelled.
///
/// Each attempt reports its own progress: when a call is sent again (a retry after a 503, a
/// replay after a token refresh), the counts start again from zero, or from a download's resume
/// offset, as the bytes go out again.
public typealias ProgressHandler = @Sendable (TransferProgress) -> Void

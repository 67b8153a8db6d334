import Foundation

/// A file a download wrote: where it is and what the server said.
public struct DownloadedFile: Sendable, Hashable {
    /// Where the file is now (the destination, or a new file in the temporary folder).
    public let url: URL
    /// Its size in bytes.
    public let size: Int64
    /// How many bytes the file held when this call's answers began to add to them: a partial file
    /// kept by an earlier call, or what an earlier attempt of this call wrote before a retry (0
    /// when the file came whole from its first byte). With a server that caps its ranges, where
    /// the first part went; ``statusCode`` and ``headers`` are then the last part's.
    public let resumedFrom: Int64
    /// The hex SHA-256 of the file, when a checksum was asked for (and matched).
    public let sha256: String?
    /// The final response's status: 200, 206 after a resume, or 416 when the kept partial file
    /// was already complete.
    public let statusCode: Int
    /// The final response's header fields.
    public let headers: HTTPHeaders
}

/// Where and how a download is written (see ``Endpoint/downloading(to:resumable:expectedSHA256:maximumSize:)``).
public struct DownloadOptions: Sendable, Hashable {
    /// The file to write, or `nil` for a new file in the temporary folder named after the URL
    /// (`<name>.<random>.<extension>`, WebApiClient's `saveAsResource`). A file URL naming a
    /// file, in a folder that exists.
    public var destination: URL?
    /// Whether a failed or cancelled download keeps its partial file (beside the destination,
    /// hidden) to be resumed by the next download to the same destination. Default `false`:
    /// nothing is left behind. Needs a destination.
    public var resumable: Bool
    /// The hex SHA-256 the file must have (64 digits, either case); a mismatch fails the download
    /// and removes the file. A value that is not 64 hexadecimal digits fails the call before
    /// anything is sent.
    public var expectedSHA256: String?
    /// The largest file accepted, in bytes, resumed ones included; `nil` (the default) for no
    /// limit. A body goes to the file, not to memory, so the transport's `maximumResponseSize`
    /// does not bound it: set this when a server you do not control could send an endless body or
    /// fill the disk. A larger size the server announces fails the download before anything is
    /// written; a body that goes past the limit fails it when it does (a resumable download keeps
    /// what it wrote), both with ``DownloadFailure/tooLarge(limit:announced:)``. The limit counts
    /// the bytes written: those of a compressed body once decoded. Below 0 counts as 0.
    public var maximumSize: Int64?

    /// Creates options; every argument has the documented default.
    public init(destination: URL? = nil, resumable: Bool = false, expectedSHA256: String? = nil, maximumSize: Int64? = nil) {
        self.destination = destination
        self.resumable = resumable
        self.expectedSHA256 = expectedSHA256?.lowercased()
        self.maximumSize = maximumSize
    }
}

/// Why a download to a file failed: before anything was sent (the destination in use, a hidden
/// file that is a link or not a plain file), or after the server answered.
public enum DownloadFailure: Sendable, Hashable, CustomStringConvertible {
    /// A file could not be written, moved or read (the reason says which).
    case fileSystem(String)
    /// The file's SHA-256 is not the expected one; it was removed.
    case checksumMismatch(expected: String, actual: String)
    /// The file is shorter than its announced size: the body ended early, or a server capping
    /// its ranges sent too many small parts for one call (call again to go on, when resumable).
    case incomplete(received: Int64, expected: Int64)
    /// Another download to the same destination is running, in this process or another: this
    /// one sent nothing and left that one's files alone.
    case destinationInUse(path: String)
    /// The file would be larger than ``DownloadOptions/maximumSize``: the size the server
    /// announced (`announced`), or the bytes that came. Nothing past the limit was written.
    case tooLarge(limit: Int64, announced: Int64?)

    public var description: String {
        switch self {
        case .fileSystem(let reason): reason
        case .checksumMismatch(let expected, let actual):
            "the file's SHA-256 is \(actual), not the expected \(expected); it was removed"
        case .incomplete(let received, let expected): "the file is incomplete: \(received) of \(expected) bytes came"
        case .destinationInUse(let path): "another download to \(path) is running"
        case .tooLarge(let limit, let announced?):
            "the file is \(announced) bytes, more than the download's maximumSize of \(limit) bytes"
        case .tooLarge(let limit, nil): "the file is larger than the download's maximumSize of \(limit) bytes"
        }
    }
}

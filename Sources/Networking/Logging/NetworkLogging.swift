import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How much network activity is logged.
///
/// - `off`: nothing.
/// - `error`: failed attempts only: `✗ METHOD url [0.1234 s]: error` without an answer,
///   `✗ 503 METHOD url [0.1234 s]` for a status outside 2xx.
/// - `info`: a line per request and per response: `→ METHOD url`, `← STATUS METHOD url [0.1234 s]`.
/// - `debug`: as `info`, plus headers and bodies (JSON pretty-printed, truncated).
///
/// Credentials are redacted at every level: `Authorization`, cookies, tokens, passwords and the
/// configuration's secret fields never reach a logger.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    /// Nothing is logged.
    case off
    /// Failed requests only.
    case error
    /// A line per request and per response.
    case info
    /// As ``info``, plus headers and bodies.
    case debug

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One log line (possibly with indented detail lines) and what it is about.
public struct LogRecord: Sendable {
    /// The level the record was written at: `.error` for failures and non-2xx answers, else
    /// `.info`. The library's records are never `.debug`: at that level,
    /// the same records carry headers and bodies. Interceptors of your own may write any level.
    public let level: LogLevel
    /// The text, already redacted.
    public let message: String
    /// The request it is about.
    public let request: RequestSummary
    /// The response status, when there is one.
    public let statusCode: Int?
    /// Seconds since the request was sent, for responses and failures.
    public let duration: TimeInterval?

    /// Creates a record.
    public init(level: LogLevel, message: String, request: RequestSummary, statusCode: Int? = nil, duration: TimeInterval? = nil) {
        self.level = level
        self.message = message
        self.request = request
        self.statusCode = statusCode
        self.duration = duration
    }
}

/// Where log records go. Implement it to bridge to swift-log, OSLog or a file; it is called from
/// many tasks at once and must be thread-safe.
public protocol NetworkLogging: Sendable {
    /// Writes one record.
    func log(_ record: LogRecord)
}

/// Writes records to standard error, one `[Networking] …` line each, unbuffered.
public struct StandardErrorLogger: NetworkLogging {
    /// Creates the logger.
    public init() {}

    /// Writes the record's message as one or more lines; control characters other than line
    /// breaks and tabs, and the bidirectional controls, are written escaped (`\u{1B}`,
    /// `\u{202E}`), so a server's body cannot move the terminal's cursor, rewrite a line, change
    /// its colours or show its text reordered.
    public func log(_ record: LogRecord) {
        var line = "[Networking] \(Self.escapingControls(record.message))\n"
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(STDERR_FILENO, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}

extension StandardErrorLogger {
    /// The text with control characters other than `\n` and `\t`, and bidirectional controls,
    /// written as `\u{…}`.
    static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isEscaped) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isEscaped(scalar) {
                escaped.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    private static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        (scalar != "\n" && scalar != "\t" && scalar.properties.generalCategory == .control) || scalar.properties.isBidiControl
    }
}

/// What to log, where, and which fields are secret.
public struct LoggingConfiguration: Sendable {
    /// How much to log. Default `.off`.
    public var level: LogLevel
    /// Where records go. Default ``StandardErrorLogger``.
    public var logger: any NetworkLogging
    /// The most body bytes shown at `.debug`. Default 4096.
    public var bodyLimit: Int

    /// Creates a logging configuration; every argument has the documented default.
    public init(level: LogLevel = .off, logger: any NetworkLogging = StandardErrorLogger(), bodyLimit: Int = 4096) {
        self.level = level
        self.logger = logger
        self.bodyLimit = bodyLimit
    }

    /// No logging.
    public static let off = LoggingConfiguration()
}

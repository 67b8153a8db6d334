import Foundation
import Networking
import Synchronization
import Testing

// Helpers for the routing tests: reading the reason out of a refusal, and a transport that
// answers everything, for tests that look at the exact request a route produced.

/// The reason of the ``RepositoryError/invalidConfiguration(reason:)`` that `body` throws; records
/// an issue (and returns "") when it throws anything else or nothing.
func invalidConfigurationReason(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws(RepositoryError) -> Void
) -> String {
    do {
        try body()
        Issue.record("expected .invalidConfiguration, but nothing was thrown", sourceLocation: sourceLocation)
    } catch {
        if case .invalidConfiguration(let reason) = error { return reason }
        Issue.record("expected .invalidConfiguration, got \(error)", sourceLocation: sourceLocation)
    }
    return ""
}

/// The reason a route file is refused with (see ``invalidConfigurationReason(sourceLocation:_:)``).
func routeFileRefusal(
    _ json: String, source: String = "routes.json", keyPath: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) -> String {
    invalidConfigurationReason(sourceLocation: sourceLocation) { () throws(RepositoryError) in
        _ = try RouteTable(json: Data(json.utf8), source: source, keyPath: keyPath)
    }
}

/// The reason of a result's ``RepositoryError/invalidRequest(reason:request:)``; records an issue
/// (and returns "") for a success or another error.
func invalidRequestReason<T>(_ result: Result<T, RepositoryError>, sourceLocation: SourceLocation = #_sourceLocation) -> String {
    if case .invalidRequest(let reason, _)? = result.failure { return reason }
    Issue.record("expected .invalidRequest, got \(result)", sourceLocation: sourceLocation)
    return ""
}

/// The failure of a result's ``RepositoryError/decodeError(_:)``, or `nil` (recording an issue).
func decodeFailure<T>(_ result: Result<T, RepositoryError>, sourceLocation: SourceLocation = #_sourceLocation) -> DecodingFailure? {
    if case .decodeError(let failure)? = result.failure { return failure }
    Issue.record("expected .decodeError, got \(result)", sourceLocation: sourceLocation)
    return nil
}

/// `http://api.test/api/v1` with these routes.
func routedConfiguration(_ routes: RouteTable, decodingFailureHandler: DecodingFailureHandler? = nil) throws
    -> NetworkingConfiguration
{
    var configuration = try makeConfiguration(decodingFailureHandler: decodingFailureHandler)
    configuration.routes = routes
    return configuration
}

/// A transport that answers every request with the same status and JSON body, and records the
/// requests: for tests about the exact URL, headers and body a route produced (``StubTransport``
/// matches decoded paths, which would hide how a path was encoded).
final class AnsweringTransport: Transport {
    private let status: Int
    private let body: String
    private let recorded = Mutex<[TransportRequest]>([])

    init(status: Int = 200, json body: String = "{}") {
        self.status = status
        self.body = body
    }

    var requests: [TransportRequest] { recorded.withLock { $0 } }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        recorded.withLock { $0.append(request) }
        return TransportResponse(
            statusCode: status, headers: ["Content-Type": "application/json"], body: Data(body.utf8), url: request.url)
    }
}

extension TransportRequest {
    /// The URL as sent, still percent-encoded, after the configuration's base URL.
    var pathAfterBase: String {
        let text = url.absoluteString
        guard let range = text.range(of: "://api.test/api/v1/") else { return text }
        return String(text[range.upperBound...])
    }
}

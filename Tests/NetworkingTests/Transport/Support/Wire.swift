import Foundation
import Testing

@testable import Networking

/// Small helpers for sending requests in transport tests.
enum Wire {
    /// A `GET` request; fails the test when the text is not a URL.
    static func request(
        _ text: String, headers: HTTPHeaders = [:], timeout: TimeInterval = 60, security: TransportSecurity = .default
    ) throws -> TransportRequest {
        try request(.get, text, headers: headers, timeout: timeout, security: security)
    }

    /// A request; fails the test when the text is not a URL.
    static func request(
        _ method: HTTPMethod, _ text: String, headers: HTTPHeaders = [:], body: Data? = nil,
        timeout: TimeInterval = 60, security: TransportSecurity = .default
    ) throws -> TransportRequest {
        let url = try #require(URL(string: text), "\(text) is not a URL")
        return TransportRequest(method: method, url: url, headers: headers, body: body, timeout: timeout, security: security)
    }

    /// Sends and returns the outcome as a `Result`, so tests can assert on either side.
    static func send(_ request: TransportRequest, over transport: any Transport) async -> Result<TransportResponse, TransportError> {
        do {
            return .success(try await transport.send(request))
        } catch {
            return .failure(error)
        }
    }

    /// Sends and returns the response; a transport error fails the test.
    static func response(_ request: TransportRequest, over transport: any Transport) async throws -> TransportResponse {
        try await send(request, over: transport).get()
    }

    /// The test API's `/echo` answer.
    struct Echo: Decodable {
        let method: String
        let path: String
        let query: String
        let headers: [String: String]
        let data: String

        /// The value of a request header as the server saw it (names compared case-insensitively).
        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    /// The response body decoded as the test API's echo.
    static func echo(_ response: TransportResponse) throws -> Echo {
        try JSONDecoder().decode(Echo.self, from: response.body)
    }
}

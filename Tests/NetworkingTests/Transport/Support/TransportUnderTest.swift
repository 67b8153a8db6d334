import Foundation
import Testing

@testable import Networking

/// The transports the shared transport suite runs against: every test with
/// `@Test(arguments: TransportUnderTest.all)` runs once per transport.
enum TransportUnderTest: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case libcurl
    case urlSession

    /// The transports available on this platform (libcurl where the system library is linked).
    static var all: [TransportUnderTest] {
        #if canImport(CCurl)
            [.libcurl, .urlSession]
        #else
            [.urlSession]
        #endif
    }

    /// The transports that survive a server flooding them with an endless body without stalling
    /// the process: URLSession on Linux does not (see `TransportFailureTests.hugeBody`).
    static var withoutFloodStall: [TransportUnderTest] {
        #if os(Linux)
            all.filter { $0 != .urlSession }
        #else
            all
        #endif
    }

    var testDescription: String { rawValue }

    /// Whether this is URLSession on Linux, which cannot pin or trust a certificate authority file.
    var cannotEvaluateTrust: Bool {
        #if canImport(Security)
            false
        #else
            self == .urlSession
        #endif
    }

    /// A transport shared by the tests of this kind (connections are reused across tests).
    var shared: any Transport {
        switch self {
        case .libcurl: Self.sharedLibcurl
        case .urlSession: Self.sharedURLSession
        }
    }

    /// A new transport of this kind with its own limits.
    func make(maximumResponseSize: Int = 100 * 1024 * 1024, maximumRedirects: Int = 10) -> any Transport {
        switch self {
        case .libcurl:
            #if canImport(CCurl)
                LibcurlTransport(maximumResponseSize: maximumResponseSize, maximumRedirects: maximumRedirects)
            #else
                URLSessionTransport(maximumResponseSize: maximumResponseSize, maximumRedirects: maximumRedirects)
            #endif
        case .urlSession:
            URLSessionTransport(maximumResponseSize: maximumResponseSize, maximumRedirects: maximumRedirects)
        }
    }

    #if canImport(CCurl)
        private static let sharedLibcurl: any Transport = LibcurlTransport()
    #else
        private static let sharedLibcurl: any Transport = URLSessionTransport()
    #endif
    private static let sharedURLSession: any Transport = URLSessionTransport()
}

/// Small helpers for sending requests in transport tests.
enum Wire {
    /// A `GET` request; fails the test when the text is not a URL.
    static func request(
        _ text: String, headers: HTTPHeaders = [:], timeout: TimeInterval = 20, security: TransportSecurity = .default
    ) throws -> TransportRequest {
        try request(.get, text, headers: headers, timeout: timeout, security: security)
    }

    /// A request; fails the test when the text is not a URL.
    static func request(
        _ method: HTTPMethod, _ text: String, headers: HTTPHeaders = [:], body: Data? = nil,
        timeout: TimeInterval = 20, security: TransportSecurity = .default
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

import Foundation
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// URLSession's error codes as the transport reports them. Only a network failure keeps an
/// offline queue waiting; what sending again cannot help must not read as one.
@Suite("URLSession error mapping")
struct URLSessionTransportErrorsTests {
    static func map(_ code: Int) -> TransportError {
        URLSessionTransportErrors.map(NSError(domain: NSURLErrorDomain, code: code, userInfo: [NSLocalizedDescriptionKey: "m"]))
    }

    @Test(
        "No network for the app (none, mobile data off, roaming, a call on) is notConnected",
        arguments: [NSURLErrorNotConnectedToInternet, NSURLErrorDataNotAllowed, NSURLErrorInternationalRoamingOff, NSURLErrorCallIsActive])
    func notConnected(code: Int) {
        #expect(Self.map(code) == .network(.notConnected))
    }

    @Test(
        "App Transport Security, a bad URL and a body's file that cannot be read are invalid requests",
        arguments: [
            NSURLErrorAppTransportSecurityRequiresSecureConnection, NSURLErrorBadURL, NSURLErrorFileDoesNotExist,
            NSURLErrorFileIsDirectory, NSURLErrorNoPermissionsToReadFile,
        ])
    func invalidRequests(code: Int) {
        guard case .invalidRequest = Self.map(code) else {
            Issue.record("expected invalidRequest, got \(Self.map(code))")
            return
        }
    }

    @Test(
        "A body that cannot be decoded or is too large is an invalid response",
        arguments: [NSURLErrorCannotDecodeContentData, NSURLErrorCannotDecodeRawData, NSURLErrorDataLengthExceedsMaximum])
    func invalidResponses(code: Int) {
        guard case .invalidResponse = Self.map(code) else {
            Issue.record("expected invalidResponse, got \(Self.map(code))")
            return
        }
    }

    @Test(
        "The code URLSession on Apple platforms gives a GET with a body is an invalid request, saying why; for a POST, a response too large"
    )
    func getWithABody() throws {
        let error = NSError(domain: NSURLErrorDomain, code: NSURLErrorDataLengthExceedsMaximum, userInfo: [NSLocalizedDescriptionKey: "m"])
        let url = try #require(URL(string: "https://api.example.com/search"))
        let get = TransportRequest(method: .get, url: url, body: .data(Data("q=1".utf8)))
        let post = TransportRequest(method: .post, url: url, body: .data(Data("q=1".utf8)))
        guard case .invalidRequest(let reason) = URLSessionTransportErrors.map(error, sending: get) else {
            Issue.record("expected invalidRequest")
            return
        }
        #expect(reason.contains("does not send a GET with a body"))
        guard case .invalidResponse = URLSessionTransportErrors.map(error, sending: post) else {
            Issue.record("expected invalidResponse")
            return
        }
    }
}

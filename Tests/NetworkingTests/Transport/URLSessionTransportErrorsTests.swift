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
        "App Transport Security and a bad URL are invalid requests",
        arguments: [NSURLErrorAppTransportSecurityRequiresSecureConnection, NSURLErrorBadURL])
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
}

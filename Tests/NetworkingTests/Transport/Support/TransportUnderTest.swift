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
        #if os(Linux) && canImport(CCurl)
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
            #if os(Linux) && canImport(CCurl)
                LibcurlTransport(maximumResponseSize: maximumResponseSize, maximumRedirects: maximumRedirects)
            #else
                URLSessionTransport(maximumResponseSize: maximumResponseSize, maximumRedirects: maximumRedirects)
            #endif
        case .urlSession:
            URLSessionTransport(maximumResponseSize: maximumResponseSize, maximumRedirects: maximumRedirects)
        }
    }

    #if os(Linux) && canImport(CCurl)
        private static let sharedLibcurl: any Transport = LibcurlTransport()
    #else
        private static let sharedLibcurl: any Transport = URLSessionTransport()
    #endif
    private static let sharedURLSession: any Transport = URLSessionTransport()
}

import Foundation
import Testing

@testable import Networking

/// A request is `Codable` so that it can be kept (the offline queue's journal) and read back.
@Suite("Transport request coding")
struct TransportRequestCodingTests {
    @Test("A request without a time limit (timeout and idle timeout .infinity) encodes with JSONEncoder and reads back the same")
    func noTimeLimitRoundTrips() throws {
        var request = TransportRequest(
            method: .post, url: URL(string: "https://api.example.com/uploads")!, headers: ["Content-Type": "text/plain"],
            body: Data("hello".utf8), timeout: .infinity)
        request.idleTimeout = .infinity
        let encoded = try JSONEncoder().encode(request)
        let decoded = try JSONDecoder().decode(TransportRequest.self, from: encoded)
        #expect(decoded.timeout == .infinity)
        #expect(decoded.idleTimeout == nil, "no idle limit either way")
        #expect(decoded.method == .post && decoded.url == request.url && decoded.headers == request.headers && decoded.body == request.body)
        #expect(!String(decoding: encoded, as: UTF8.self).contains("imeout"))
    }

    @Test("A timeout of -infinity, passed already, is kept as 0: read back, it is not a request without a time limit")
    func passedTimeoutStaysPassed() throws {
        let request = TransportRequest(method: .get, url: URL(string: "https://api.example.com/books")!, timeout: -.infinity)
        let decoded = try JSONDecoder().decode(TransportRequest.self, from: try JSONEncoder().encode(request))
        #expect(decoded.timeout == 0)
    }

    @Test("Finite timeouts are written as numbers, as before, and read back the same")
    func finiteTimeoutsAreUnchanged() throws {
        var request = TransportRequest(method: .get, url: URL(string: "https://api.example.com/books")!, timeout: 30)
        request.idleTimeout = 5
        let encoded = try JSONEncoder().encode(request)
        let text = String(decoding: encoded, as: UTF8.self)
        #expect(text.contains(#""timeout":30"#) && text.contains(#""idleTimeout":5"#))
        #expect(try JSONDecoder().decode(TransportRequest.self, from: encoded) == request)
    }
}

import Foundation
import Testing

@testable import Networking

/// TLS over every transport against the test API's HTTPS servers, whose leaf certificates are
/// signed by the test CA (`NETWORKING_TEST_CA_FILE`), which no system trusts.
///
/// URLSession on Linux cannot evaluate trust (FoundationNetworking never delivers the
/// server-trust challenge): there, each test asserts the clear error it gives instead —
/// ``TransportError/pinningUnsupported(transport:)`` for pins or a CA file.
@Suite("Transport TLS and pinning")
struct TransportTLSTests {
    private func security(_ servers: TestServers, pins: [String] = []) throws -> TransportSecurity {
        TransportSecurity(pinnedPublicKeys: try pins.map { try PublicKeyPin($0) }, certificateAuthorityFile: servers.caFile)
    }

    private func expectPinningUnsupported(_ result: Result<TransportResponse, TransportError>) {
        guard case .failure(.pinningUnsupported(let transport)) = result else {
            Issue.record("URLSession on Linux must refuse with pinningUnsupported, got \(result)")
            return
        }
        #expect(transport.contains("URLSessionTransport"))
    }

    @Test("A certificate from an unknown authority is untrustedCertificate", arguments: TransportUnderTest.all)
    func untrustedCertificate(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let result = await Wire.send(try Wire.request(servers.apiTLSURL + "/health"), over: transport.shared)
        guard case .failure(.tls(.untrustedCertificate)) = result else {
            Issue.record("expected tls(untrustedCertificate), got \(result)")
            return
        }
    }

    @Test("A certificate authority file makes the private CA trusted", arguments: TransportUnderTest.all)
    func customAuthority(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let request = try Wire.request(servers.apiTLSURL + "/health", security: try security(servers))
        let result = await Wire.send(request, over: transport.shared)
        if transport.cannotEvaluateTrust { return expectPinningUnsupported(result) }
        #expect((try? result.get())?.statusCode == 200)
    }

    @Test("HTTP/2 is negotiated over TLS (nginx answers with the protocol it was asked in)", arguments: TransportUnderTest.all)
    func http2(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let request = try Wire.request(servers.h2URL + "/protocol", security: try security(servers))
        let result = await Wire.send(request, over: transport.shared)
        if transport.cannotEvaluateTrust { return expectPinningUnsupported(result) }
        #expect((try? result.get()).map { String(decoding: $0.body, as: UTF8.self) } == "HTTP/2.0")
    }

    @Test("An expired certificate and one for another host fail with their own TLS errors", arguments: TransportUnderTest.all)
    func expiredAndWrongHost(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let expired = await Wire.send(
            try Wire.request(servers.expiredTLSURL + "/health", security: try security(servers)), over: transport.shared)
        let wrongHost = await Wire.send(
            try Wire.request(servers.wrongHostTLSURL + "/health", security: try security(servers)), over: transport.shared)
        if transport.cannotEvaluateTrust {
            expectPinningUnsupported(expired)
            expectPinningUnsupported(wrongHost)
            // Without the CA file, Linux URLSession can only say "untrusted" for both.
            let plain = await Wire.send(try Wire.request(servers.expiredTLSURL + "/health"), over: transport.shared)
            guard case .failure(.tls) = plain else {
                Issue.record("expected a TLS error, got \(plain)")
                return
            }
            return
        }
        guard case .failure(.tls(.expiredCertificate)) = expired else {
            Issue.record("expected expiredCertificate, got \(expired)")
            return
        }
        guard case .failure(.tls(.hostnameMismatch)) = wrongHost else {
            Issue.record("expected hostnameMismatch, got \(wrongHost)")
            return
        }
    }

    @Test("The server's pin is accepted, alone or among rotated pins", arguments: TransportUnderTest.all)
    func pinMatch(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        for pins in [[servers.serverPin], [servers.otherPin, servers.serverPin], [servers.serverPin, servers.otherPin]] {
            let request = try Wire.request(servers.apiTLSURL + "/health", security: try security(servers, pins: pins))
            let result = await Wire.send(request, over: transport.shared)
            if transport.cannotEvaluateTrust {
                expectPinningUnsupported(result)
            } else {
                #expect((try? result.get())?.statusCode == 200, "pins \(pins)")
            }
        }
    }

    @Test("A wrong pin fails with pinMismatch naming the host, and nothing reaches the server", arguments: TransportUnderTest.all)
    func pinMismatch(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let key = "pin-\(UUID().uuidString)"
        let wrong = try Wire.request(
            .post, servers.apiTLSURL + "/poll/\(key)",
            headers: ["Authorization": "Bearer must-not-leak", "Content-Type": "application/json"],
            body: Data(#"{"secret":1}"#.utf8), security: try security(servers, pins: [servers.otherPin]))
        let result = await Wire.send(wrong, over: transport.shared)
        if transport.cannotEvaluateTrust { return expectPinningUnsupported(result) }
        #expect(result.failure == .pinMismatch(host: "127.0.0.1"))
        // The server recorded no request under the key.
        let history = try await Wire.response(
            try Wire.request(servers.apiTLSURL + "/test/poll/\(key)", security: try security(servers)), over: transport.shared)
        #expect(history.json?["attempts"] == .int(0))
        // The repository reports it as pinningFailed with the host.
        guard case .pinningFailed(let host, _) = RepositoryError(.pinMismatch(host: "127.0.0.1"), request: wrong.summary) else {
            Issue.record("pinMismatch must map to RepositoryError.pinningFailed")
            return
        }
        #expect(host == "127.0.0.1")
    }

    @Test("A connection opened without pins is not reused for a pinned request", arguments: TransportUnderTest.all)
    func pinnedRequestDoesNotReuseUnpinnedConnection(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let transport = transport.make()
        let open = await Wire.send(try Wire.request(servers.apiTLSURL + "/health", security: try security(servers)), over: transport)
        let pinned = await Wire.send(
            try Wire.request(servers.apiTLSURL + "/health", security: try security(servers, pins: [servers.otherPin])), over: transport)
        if self.cannotEvaluate(transport) {
            expectPinningUnsupported(open)
            return expectPinningUnsupported(pinned)
        }
        #expect((try? open.get())?.statusCode == 200)
        #expect(pinned.failure == .pinMismatch(host: "127.0.0.1"))
    }

    @Test("Pins on a plain http request are refused, never ignored", arguments: TransportUnderTest.all)
    func pinsOnPlainHTTP(transport: TransportUnderTest) async throws {
        let servers = try TestServers.require()
        let request = try Wire.request(servers.apiURL + "/health", security: try security(servers, pins: [servers.serverPin]))
        let result = await Wire.send(request, over: transport.shared)
        guard case .failure(.invalidRequest(let reason)) = result else {
            Issue.record("expected invalidRequest, got \(result)")
            return
        }
        #expect(reason.contains("https"))
    }

    private func cannotEvaluate(_ transport: any Transport) -> Bool {
        #if canImport(Security)
            false
        #else
            transport is URLSessionTransport
        #endif
    }
}

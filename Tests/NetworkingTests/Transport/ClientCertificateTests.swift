import Foundation
import Testing

@testable import Networking

/// Mutual TLS against the test API's server that requires a client certificate signed by the test
/// CA (`NETWORKING_TEST_MTLS_URL`; the files come from `script/testapi/make_certs.py`).
@Suite("Client certificates (mutual TLS)")
struct ClientCertificateTests {
    static let password = "client-secret"

    private func security(_ servers: TestServers, _ client: ClientCertificate?) -> TransportSecurity {
        TransportSecurity(certificateAuthorityFile: servers.caFile, clientCertificate: client)
    }

    /// `/echo` on the mutual-TLS server, presenting `client`.
    private func send(_ client: ClientCertificate?, over transport: any Transport, _ servers: TestServers) async throws
        -> Result<TransportResponse, TransportError>
    {
        await Wire.send(try Wire.request(servers.mtlsURL + "/echo", security: security(servers, client)), over: transport)
    }

    /// Each form must be presented (a 200) over `transport`.
    private func expectPresented(_ forms: [(String, ClientCertificate)], over transport: any Transport, _ servers: TestServers)
        async throws
    {
        for (form, client) in forms {
            let response = try await send(client, over: transport, servers)
            #expect((try? response.get())?.statusCode == 200, "\(form): \(response)")
        }
    }

    /// Sends `clients` in turn on one transport (libcurl keeps connections for reuse): `good` must
    /// pass, every other be refused — the handshake failing with a detail `refusal` accepts, or,
    /// under TLS 1.3, where the refusal comes after the handshake, a reset from a server quick to close.
    private func expectAlternation(
        _ clients: [ClientCertificate?], good: ClientCertificate, over transport: any Transport, _ servers: TestServers,
        refusal: (String) -> Bool
    ) async throws {
        for client in clients {
            let result = try await send(client, over: transport, servers)
            if client == good {
                #expect((try? result.get())?.statusCode == 200, "\(result)")
                continue
            }
            switch result {
            case .failure(.tls(.handshakeFailed(let detail))):
                #expect(refusal(detail), "\(detail)")
            case .failure(.network(.connectionLost)): break
            default: Issue.record("\(client?.description ?? "no certificate"): expected a refusal, got \(result)")
            }
        }
    }

    /// The bytes of a file `make_certs.py` wrote, for certificates in memory.
    private static func bytes(_ name: String, _ servers: TestServers) throws -> Data {
        try Data(contentsOf: servers.certificateFile(name))
    }

    /// The test CA's client certificate, with its key apart and unencrypted.
    private static func client(_ servers: TestServers) -> ClientCertificate {
        .pem(certificate: servers.certificateFile("client.pem"), privateKey: servers.certificateFile("client.key"))
    }

    private static func forms(_ servers: TestServers) -> [(String, ClientCertificate)] {
        [
            ("PEM, key apart", Self.client(servers)),
            (
                "PEM, encrypted key",
                .pem(
                    certificate: servers.certificateFile("client.pem"), privateKey: servers.certificateFile("client-encrypted.key"),
                    password: password)
            ),
            ("PKCS#12", .pkcs12(servers.certificateFile("client.p12"), password: password)),
        ]
    }

    #if os(Linux) && canImport(CCurl)
        @Test("LibcurlTransport presents a PEM certificate (its key apart, or encrypted) and a PKCS#12 archive")
        func presented() async throws {
            let servers = try TestServers.require()
            try await expectPresented(Self.forms(servers), over: LibcurlTransport(), servers)
        }

        @Test(
            "Without a certificate, or with one from an unknown authority, the server ends the handshake: handshakeFailed naming the client certificate; a connection made with a certificate never serves a request without one"
        )
        func refused() async throws {
            let servers = try TestServers.require()
            let stranger = ClientCertificate.pem(
                certificate: servers.certificateFile("stranger.pem"), privateKey: servers.certificateFile("stranger.key"))
            let good = Self.client(servers)
            try await expectAlternation([nil, good, nil, stranger, good, nil], good: good, over: LibcurlTransport(), servers) {
                $0.contains("refused this client's certificate")
            }
        }

        @Test(
            "A wrong password, a missing password for an encrypted key, or a missing file fails the handshake at once (never a prompt that stops the transport), saying the certificate could not be used"
        )
        func unusable() async throws {
            let servers = try TestServers.require()
            let transport = LibcurlTransport()
            let encryptedKey = servers.certificateFile("client-encrypted.key")
            let unusable: [ClientCertificate] = [
                .pkcs12(servers.certificateFile("client.p12"), password: "not-it"),
                .pem(certificate: servers.certificateFile("client.pem"), privateKey: encryptedKey, password: "not-it"),
                .pem(certificate: servers.certificateFile("client.pem"), privateKey: encryptedKey),
                .pem(certificate: servers.certificateFile("client.pem"), privateKey: servers.certificateFile("missing.key")),
            ]
            for client in unusable {
                let request = try Wire.request(servers.mtlsURL + "/echo", timeout: 10, security: security(servers, client))
                let result = await Wire.send(request, over: transport)
                guard case .failure(.tls(.handshakeFailed(let detail))) = result else {
                    Issue.record("\(client): expected tls(handshakeFailed), got \(result)")
                    continue
                }
                #expect(detail.contains("the client certificate could not be used"), "\(detail)")
                #expect(!detail.contains("not-it"), "the password never shows")
            }
            // The transport still serves others.
            let good = Self.client(servers)
            let request = try Wire.request(servers.mtlsURL + "/echo", security: security(servers, good))
            #expect((try? await Wire.send(request, over: transport).get())?.statusCode == 200)
        }

        @Test(
            "Certificates in memory are presented in every form (PEM with its key apart or after it, encrypted, PKCS#12); a connection made with one never serves another, nor a request without one"
        )
        func inMemory() async throws {
            let servers = try TestServers.require()
            func bytes(_ name: String) throws -> Data { try Self.bytes(name, servers) }
            let good = ClientCertificate.pem(certificate: try bytes("client.pem"), privateKey: try bytes("client.key"))
            let forms: [(String, ClientCertificate)] = [
                ("PEM, key apart", good),
                ("PEM, key after it", .pem(certificate: try bytes("client.pem") + bytes("client.key"))),
                (
                    "PEM, encrypted key",
                    .pem(certificate: try bytes("client.pem"), privateKey: try bytes("client-encrypted.key"), password: Self.password)
                ),
                ("PKCS#12", .pkcs12(try bytes("client.p12"), password: Self.password)),
            ]
            let transport = LibcurlTransport()
            try await expectPresented(forms, over: transport, servers)
            let stranger = ClientCertificate.pem(certificate: try bytes("stranger.pem"), privateKey: try bytes("stranger.key"))
            let clients: [ClientCertificate?] = [good, stranger, good, nil, good, .pem(certificate: Data("not PEM".utf8))]
            try await expectAlternation(clients, good: good, over: transport, servers) { _ in true }
        }

        @Test(
            "In memory, the key tells connections apart too: the same certificate with another key never rides a connection made with the right one"
        )
        func inMemoryKeyIsCompared() async throws {
            let servers = try TestServers.require()
            func bytes(_ name: String) throws -> Data { try Self.bytes(name, servers) }
            let transport = LibcurlTransport()
            let good = ClientCertificate.pem(certificate: try bytes("client.pem"), privateKey: try bytes("client.key"))
            let wrongKey = ClientCertificate.pem(certificate: try bytes("client.pem"), privateKey: try bytes("stranger.key"))
            let first = try await send(good, over: transport, servers)
            #expect((try? first.get())?.statusCode == 200, "\(first)")
            let second = try await send(wrongKey, over: transport, servers)
            guard case .failure(.tls(.handshakeFailed(let detail))) = second else {
                Issue.record("a key that does not fit the certificate must fail its own handshake, got \(second)")
                return
            }
            #expect(detail.contains("could not be used"), "\(detail)")
        }

        @Test("A PEM file holding the certificate and its key together is presented")
        func combinedFile() async throws {
            let servers = try TestServers.require()
            let folder = try TemporaryDirectory()
            defer { folder.remove() }
            let combined = try folder.file(
                "client-with-key.pem",
                contents: Data(contentsOf: servers.certificateFile("client.pem")) + Data(contentsOf: servers.certificateFile("client.key")))
            let request = try Wire.request(servers.mtlsURL + "/echo", security: security(servers, .pem(certificate: combined)))
            #expect((try? await Wire.send(request, over: LibcurlTransport()).get())?.statusCode == 200)
        }

        @Test(
            "Files are read by each new connection: a certificate that appears after the configuration was made (a secrets sidecar) is used by the next call"
        )
        func filesReadWhenNeeded() async throws {
            let servers = try TestServers.require()
            let folder = try TemporaryDirectory()
            defer { folder.remove() }
            let certificate = folder.url.appendingPathComponent("tls.crt")
            let key = folder.url.appendingPathComponent("tls.key")
            var configuration = try TestServers.configuration(servers.mtlsURL, caFile: servers.caFile)
            configuration.clientCertificate = .pem(certificate: certificate, privateKey: key)
            #expect(configuration.validationError == nil)
            let repository = TestAPI.Repository(configuration: configuration, transport: LibcurlTransport())
            let endpoint = Endpoint<TransportResponse>.get("echo").withoutSession()
            guard case .failure(.tlsError(.handshakeFailed(let detail), _)) = await repository.performRequest(endpoint) else {
                Issue.record("expected handshakeFailed while the files are missing")
                return
            }
            #expect(detail.contains("the client certificate could not be used"))
            try FileManager.default.copyItem(at: servers.certificateFile("client.pem"), to: certificate)
            try FileManager.default.copyItem(at: servers.certificateFile("client.key"), to: key)
            #expect(try await repository.performRequest(endpoint).get().statusCode == 200)
        }

        @Test("A repository presents its configuration's certificate (the seam every request goes through)")
        func throughARepository() async throws {
            let servers = try TestServers.require()
            var configuration = try TestServers.configuration(servers.mtlsURL, caFile: servers.caFile)
            configuration.clientCertificate = .pkcs12(servers.certificateFile("client.p12"), password: Self.password)
            let repository = TestAPI.Repository(configuration: configuration, transport: LibcurlTransport())
            let response = try await repository.performRequest(Endpoint<TransportResponse>.get("echo").withoutSession()).get()
            #expect(response.statusCode == 200)
        }
    #endif

    @Test("URLSessionTransport refuses a request with a PEM client certificate before sending it (on Linux, any client certificate)")
    func urlSessionRefuses() async throws {
        let servers = try TestServers.require()
        let pem = Self.client(servers)
        let request = try Wire.request(servers.mtlsURL + "/echo", security: security(servers, pem))
        guard case .failure(.pinningUnsupported(let transport)) = await Wire.send(request, over: URLSessionTransport()) else {
            Issue.record("expected pinningUnsupported")
            return
        }
        #expect(transport.contains("URLSessionTransport"))
    }

    @Test("The password is never encoded, described or dumped")
    func passwordStaysSecret() throws {
        let client = ClientCertificate.pkcs12(URL(fileURLWithPath: "/keys/client.p12"), password: "hunter2-secret")
        let request = TransportRequest(
            method: .post, url: URL(string: "https://api.example.com/x")!, security: TransportSecurity(clientCertificate: client))
        let encoded = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        #expect(!encoded.contains("hunter2") && !encoded.contains("client.p12"))
        #expect(try JSONDecoder().decode(TransportRequest.self, from: Data(encoded.utf8)).security.clientCertificate == nil)
        var dumped = ""
        dump(request, to: &dumped)
        #expect(!dumped.contains("hunter2") && !client.description.contains("hunter2") && !"\(request)".contains("hunter2"))
        #expect(client.description == "PKCS#12 client certificate /keys/client.p12, with a password")
        // The curl command names the files (curl asks for the password).
        #expect(request.cURLDescription.contains("--cert '/keys/client.p12'") && request.cURLDescription.contains("--cert-type P12"))
        #expect(!request.cURLDescription.contains("hunter2"))

        let key = "-----BEGIN PRIVATE KEY-----\nsecret-key-bytes\n-----END PRIVATE KEY-----\n"
        let inMemory = ClientCertificate.pem(certificate: Data("certificate".utf8), privateKey: Data(key.utf8), password: "pw")
        #expect(
            inMemory.description == "PEM client certificate in memory (11 bytes), key in memory (\(key.utf8.count) bytes), with a password")
        var memoryDump = ""
        dump(inMemory, to: &memoryDump)
        #expect(!memoryDump.contains("secret-key-bytes") && !memoryDump.contains("pw\""), "\(memoryDump)")
        let memoryRequest = TransportRequest(
            method: .get, url: URL(string: "https://api.example.com/x")!, security: TransportSecurity(clientCertificate: inMemory))
        let command = memoryRequest.cURLDescription
        #expect(
            command.contains("--cert '<in memory>'") && command.contains("--key '<in memory>'") && !command.contains("secret-key-bytes"))
    }

    @Test("Messages of a server's alert about the client's certificate are classified as its refusal, not as an untrusted server")
    func classification() {
        for message in [
            "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0",
            "OpenSSL SSL_read: error:0A000418:SSL routines::tlsv1 alert unknown ca, errno 0",
            "error:0A000412:SSL routines::sslv3 alert bad certificate",
        ] {
            guard case .handshakeFailed(let detail) = TLSFailure(classifying: message) else {
                Issue.record("\(message) is not handshakeFailed")
                continue
            }
            #expect(detail.contains("refused this client's certificate"))
        }
        guard case .untrustedCertificate = TLSFailure(classifying: "SSL certificate problem: unable to get local issuer certificate") else {
            Issue.record("the server's own untrusted certificate changed class")
            return
        }
    }
}

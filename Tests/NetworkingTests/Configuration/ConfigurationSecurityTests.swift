import Foundation
import Testing

@testable import Networking

/// What a configuration does with pins, certificate authority files, secrets in its base URL and
/// the extra secret names, before anything is sent.
@Suite("Configuration security settings")
struct ConfigurationSecurityTests {
    private let pin = "s9E+ccPCNuubiNHA4/2UfpBr4ra53YWcTV/1yP9QRaI="

    private func reason(_ make: () throws(RepositoryError) -> NetworkingConfiguration) -> String? {
        do {
            _ = try make()
            return nil
        } catch {
            guard case .invalidConfiguration(let reason) = error else { return "\(error)" }
            return reason
        }
    }

    private func file(_ contents: Data) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString).pem")
        try contents.write(to: url)
        return url
    }

    @Test("Pins turn pinning on unless it is turned off explicitly")
    func pinsTurnPinningOn() throws {
        let pins = [try PublicKeyPin(pin)]
        let implicit = try NetworkingConfiguration(domainURL: "api.example.com", pinnedPublicKeys: pins)
        #expect(implicit.usePinningCertificate && implicit.security.pinnedPublicKeys == pins)
        let off = try NetworkingConfiguration(domainURL: "api.example.com", usePinningCertificate: false, pinnedPublicKeys: pins)
        #expect(!off.usePinningCertificate && off.security == .default)
        #expect(!(try NetworkingConfiguration(domainURL: "api.example.com")).usePinningCertificate)
    }

    @Test("Pins set after the configuration is made turn pinning on too, unless it was chosen; removing them fails every request")
    func pinsSetLaterTurnPinningOn() throws {
        let pins = [try PublicKeyPin(pin)]
        var later = try NetworkingConfiguration(baseURL: "https://api.example.com")
        later.pinnedPublicKeys = pins
        #expect(later.usePinningCertificate && later.security.pinnedPublicKeys == pins)
        // An empty pin feed must not turn pinning off, for pins given to the initializer or set later.
        later.pinnedPublicKeys = []
        #expect(later.usePinningCertificate && later.validationError != nil)
        var given = try NetworkingConfiguration(domainURL: "api.example.com", pinnedPublicKeys: pins)
        given.pinnedPublicKeys = []
        #expect(given.usePinningCertificate && given.validationError != nil)
        var fromFile = try NetworkingConfiguration(baseURL: "https://api.example.com")
        fromFile.pinnedCertificateFiles = [try TestServers.require().serverCertificatePEM]
        #expect(fromFile.usePinningCertificate && fromFile.security.pinnedPublicKeys.count == 1)
        // Chosen (given or set), it stays as chosen.
        var chosen = try NetworkingConfiguration(domainURL: "api.example.com", usePinningCertificate: false)
        chosen.pinnedPublicKeys = pins
        #expect(!chosen.usePinningCertificate && chosen.security == .default)
        var setOff = try NetworkingConfiguration(domainURL: "api.example.com", pinnedPublicKeys: pins)
        setOff.usePinningCertificate = false
        setOff.pinnedPublicKeys = pins + pins
        #expect(!setOff.usePinningCertificate)
    }

    @Test("A certificate authority file must hold PEM certificates: garbage, DER, empty or a folder is refused")
    func certificateAuthorityFile() throws {
        let servers = try TestServers.require()
        let garbage = try file(Data("not a certificate".utf8))
        let empty = try file(Data())
        let folder = FileManager.default.temporaryDirectory
        defer { for url in [garbage, empty] { try? FileManager.default.removeItem(at: url) } }
        for (url, expected) in [
            (garbage, "certificateAuthorityFile"), (empty, "empty"), (folder, "certificateAuthorityFile"),
            (servers.serverCertificateDER, "is not PEM"),
        ] {
            let refused = reason { () throws(RepositoryError) in
                try NetworkingConfiguration(domainURL: "api.example.com", certificateAuthorityFile: url)
            }
            #expect(refused?.contains(expected) == true, "\(url.path): \(String(describing: refused))")
        }
        let authority = try file(Data(testAuthorityPEM.utf8))
        defer { try? FileManager.default.removeItem(at: authority) }
        for accepted in [servers.caFile, authority] {
            #expect(throws: Never.self) { try NetworkingConfiguration(domainURL: "api.example.com", certificateAuthorityFile: accepted) }
        }
    }

    @Test("A pin read from JSON is checked like one made from text")
    func decodedPins() throws {
        let good = try JSONEncoder().encode(try PublicKeyPin(pin))
        #expect(try JSONDecoder().decode(PublicKeyPin.self, from: good) == (try PublicKeyPin(pin)))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PublicKeyPin.self, from: Data(#"{"base64SHA256": "abc"}"#.utf8))
        }
    }

    @Test("A base URL's password or secret query value never appears in its error")
    func baseURLErrorsRedacted() {
        for text in ["https://ann:s3cret@api.example.com/v1", "https://api.example.com/v1?api_key=s3cret", "ftp://ann:s3cret@host"] {
            let refused = reason { () throws(RepositoryError) in try NetworkingConfiguration(baseURL: text) }
            #expect(refused != nil)
            #expect(refused?.contains("s3cret") == false, "\(String(describing: refused))")
        }
    }

    @Test(
        "Common credential names are secret; words that merely contain them are not",
        arguments: [
            ("key", true), ("sig", true), ("auth", true), ("pass", true), ("access_key", true), ("X-Access-Key", true),
            ("private_key", true), ("Ocp-Apim-Subscription-Key", true), ("credentials", true), ("pwd", true),
            ("monkey", false), ("author", false), ("design", false), ("passenger", false), ("keyword", false),
        ])
    func credentialNames(name: String, secret: Bool) {
        #expect(Redaction.standard.isSecret(name) == secret)
    }

    @Test("The configured secret names are redacted in a decoding failure's reason")
    func secretFieldsInReasons() throws {
        // Given: a configuration that calls `ssn` secret, and a body whose ssn does not decode
        let failures = Recorder<DecodingFailure>()
        var configuration = try makeConfiguration(decodingFailureHandler: { failures.record($0) })
        configuration.secretFields = ["ssn"]
        struct Person: Decodable { let ssn: Int }
        // When
        let result = Result { () throws(RepositoryError) in
            try ResponseDecoder(configuration: configuration).decode(
                Person.self, from: TransportResponse(statusCode: 200, body: Data(#"{"ssn": "123-45-6789"}"#.utf8)),
                request: RequestSummary(method: .get, url: configuration.baseURL), keyPath: nil)
        }
        // Then
        guard case .failure(.decodeError(let failure)) = result else {
            Issue.record("expected a decoding error, got \(result)")
            return
        }
        #expect(!failure.reason.contains("123-45"), "\(failure.reason)")
        #expect(!failure.bodyExcerpt.contains("123-45"))
        #expect(failures.all.count == 1)
    }
}

import Foundation
import Testing

@testable import Networking

/// Pins from certificate files, checked against the pin `script/server` computes with
/// `cryptography` for the test API's certificate (`NETWORKING_TEST_SERVER_PIN`).
@Suite("Certificate pins")
struct CertificatePinsTests {
    @Test("The PEM and DER files of the server certificate give the server's pin")
    func pemAndDER() throws {
        let servers = try TestServers.require()
        let expected = try PublicKeyPin(servers.serverPin)
        #expect(try PublicKeyPin.pins(fromCertificateFile: servers.serverCertificatePEM) == [expected])
        #expect(try PublicKeyPin.pins(fromCertificateFile: servers.serverCertificateDER) == [expected])
        #expect(try PublicKeyPin(certificateDER: Data(contentsOf: servers.serverCertificateDER)) == expected)
    }

    @Test("A PEM bundle gives one pin per certificate, in order")
    func pemBundle() throws {
        let servers = try TestServers.require()
        let bundle =
            try String(contentsOf: servers.serverCertificatePEM, encoding: .utf8)
            + "\n" + String(contentsOf: servers.caFile, encoding: .utf8)
        let pins = try CertificatePins.pins(inContents: Array(bundle.utf8))
        #expect(pins.count == 2)
        #expect(pins.first == (try PublicKeyPin(servers.serverPin)))
        #expect(pins.last != pins.first)
    }

    @Test("The configuration appends the pins of its certificate files")
    func configurationLoadsFiles() throws {
        let servers = try TestServers.require()
        let other = try PublicKeyPin(servers.otherPin)
        let configuration = try NetworkingConfiguration(
            domainURL: "127.0.0.1", usePinningCertificate: true, pinnedPublicKeys: [other],
            pinnedCertificateFiles: [servers.serverCertificatePEM])
        #expect(configuration.pinnedPublicKeys == [other])
        #expect(configuration.security.pinnedPublicKeys == [other, try PublicKeyPin(servers.serverPin)])
        let filesOnly = try NetworkingConfiguration(
            domainURL: "127.0.0.1", usePinningCertificate: true, pinnedCertificateFiles: [servers.serverCertificateDER])
        #expect(filesOnly.security.pinnedPublicKeys == [try PublicKeyPin(servers.serverPin)])
    }

    @Test("Pinning without pins is a configuration error")
    func pinningWithoutPins() {
        #expect(throws: RepositoryError.self) {
            try NetworkingConfiguration(domainURL: "127.0.0.1", usePinningCertificate: true)
        }
    }

    @Test("Unreadable and garbage certificate files are configuration errors naming the file")
    func badFiles() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let files: [(String, Data?)] = [
            ("missing.pem", nil),
            ("empty.der", Data()),
            ("garbage.der", Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 97) })),
            ("key.pem", Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8)),
            ("unterminated.pem", Data("-----BEGIN CERTIFICATE-----\nMIIB\n".utf8)),
            ("notbase64.pem", Data("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n".utf8)),
        ]
        for (name, contents) in files {
            let url = folder.appendingPathComponent(name)
            if let contents { try contents.write(to: url) }
            do {
                _ = try NetworkingConfiguration(domainURL: "127.0.0.1", usePinningCertificate: true, pinnedCertificateFiles: [url])
                Issue.record("\(name) was accepted")
            } catch {
                guard case .invalidConfiguration(let reason) = error else {
                    Issue.record("\(name): expected invalidConfiguration, got \(error)")
                    continue
                }
                #expect(reason.contains(url.path), "\(name): \(reason)")
            }
        }
    }

    @Test("Every truncation and corruption of a certificate fails cleanly")
    func truncatedAndCorrupted() throws {
        let servers = try TestServers.require()
        let der = [UInt8](try Data(contentsOf: servers.serverCertificateDER))
        for length in 0..<der.count {
            #expect(throws: DER.Failure.self) { try CertificatePins.pin(ofCertificate: Array(der[0..<length])) }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var corrupted = der
            corrupted[Int.random(in: 0..<min(64, der.count), using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            // Either a pin (the change hit a value) or an error: never a crash.
            _ = try? CertificatePins.pin(ofCertificate: corrupted)
        }
    }

    @Test("A certificate authority file that does not exist is a configuration error")
    func missingAuthorityFile() {
        #expect(throws: RepositoryError.self) {
            try NetworkingConfiguration(domainURL: "127.0.0.1", certificateAuthorityFile: URL(fileURLWithPath: "/nonexistent/ca.pem"))
        }
    }

    @Test("A certificate or authority file that is a device (/dev/zero) or larger than 16 MiB is refused without being read")
    func endlessFiles() throws {
        let endless = URL(fileURLWithPath: "/dev/zero")
        do {
            _ = try NetworkingConfiguration(domainURL: "127.0.0.1", usePinningCertificate: true, pinnedCertificateFiles: [endless])
            Issue.record("/dev/zero was accepted")
        } catch {
            #expect("\(error)".contains("certificate file /dev/zero cannot be read: it is not a plain file"), "\(error)")
        }
        #expect(CertificatePins.authorityProblem(inFile: endless)?.contains("not a plain file") == true)
        let huge = FileManager.default.temporaryDirectory.appendingPathComponent("huge-\(UUID().uuidString).pem")
        defer { try? FileManager.default.removeItem(at: huge) }
        #expect(FileManager.default.createFile(atPath: huge.path, contents: nil))
        #expect(truncate(huge.path, 16 * 1024 * 1024 + 1) == 0)
        #expect(CertificatePins.authorityProblem(inFile: huge)?.contains("is larger than 16777216 bytes") == true)
    }
}

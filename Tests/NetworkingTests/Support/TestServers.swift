import Foundation
import Networking

#if canImport(Glibc)
    import Glibc
#endif

/// The real servers the integration tests talk to, as started by `script/server start`.
///
/// Their addresses come from environment variables (`script/test` exports them), or else from
/// the `.servers/env` file that `script/server` writes at the package root. When neither names
/// servers that answer, `require()` throws, so integration tests fail with instructions instead
/// of passing silently.
struct TestServers: Sendable {
    let apiURL: String
    let apiTLSURL: String
    let httpbinURL: String
    let expiredTLSURL: String
    let wrongHostTLSURL: String
    let faultURL: String
    let h2URL: String
    /// The test API over TLS, requiring a client certificate signed by the test CA.
    let mtlsURL: String
    /// Forward proxies (`proxyserver.py`: HTTP and SOCKS5 on one port): open, requiring the
    /// credentials `proxyuser`/`proxy-secret`, and over TLS with the test CA's certificate.
    let proxyURL: String
    let proxyAuthURL: String
    let proxyTLSURL: String
    /// nginx over plain HTTP: static files with real Range/ETag handling, PUT uploads to `/uploads/`.
    let nginxURL: String
    /// The same nginx on a Unix domain socket (a file URL).
    let nginxSocket: URL
    let caFile: URL
    let serverCertificatePEM: URL
    let serverCertificateDER: URL
    let serverPin: String
    let otherPin: String

    /// A file `make_certs.py` wrote beside the test CA (`client.pem`, `client.p12`, `stranger.key`…).
    func certificateFile(_ name: String) -> URL { caFile.deletingLastPathComponent().appendingPathComponent(name) }

    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// The servers, or an error saying how to start them.
    static func require() throws -> TestServers { try cached.get() }

    private static let cached: Result<TestServers, Unavailable> = load()

    private static func load() -> Result<TestServers, Unavailable> {
        let hint = "Start the integration test servers with `script/server start` (or run everything with `script/test`)."
        var values = ProcessInfo.processInfo.environment.filter { $0.key.hasPrefix("NETWORKING_TEST_") }
        if values["NETWORKING_TEST_API_URL"] == nil, let file = try? String(contentsOf: envFile, encoding: .utf8) {
            for line in file.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { values[parts[0]] = unquoted(parts[1]) }
            }
        }
        func value(_ key: String) throws(Unavailable) -> String {
            guard let value = values["NETWORKING_TEST_\(key)"], !value.isEmpty else {
                throw Unavailable(description: "NETWORKING_TEST_\(key) is not set and \(envFile.path) does not name it. \(hint)")
            }
            return value
        }
        do throws(Unavailable) {
            let servers = TestServers(
                apiURL: try value("API_URL"), apiTLSURL: try value("API_TLS_URL"), httpbinURL: try value("HTTPBIN_URL"),
                expiredTLSURL: try value("TLS_EXPIRED_URL"), wrongHostTLSURL: try value("TLS_WRONG_HOST_URL"),
                faultURL: try value("FAULT_URL"), h2URL: try value("H2_URL"), mtlsURL: try value("MTLS_URL"),
                proxyURL: try value("PROXY_URL"), proxyAuthURL: try value("PROXY_AUTH_URL"),
                proxyTLSURL: try value("PROXY_TLS_URL"), nginxURL: try value("NGINX_URL"),
                nginxSocket: URL(fileURLWithPath: try value("NGINX_SOCKET")),
                caFile: URL(fileURLWithPath: try value("CA_FILE")),
                serverCertificatePEM: URL(fileURLWithPath: try value("SERVER_CERT_PEM")),
                serverCertificateDER: URL(fileURLWithPath: try value("SERVER_CERT_DER")),
                serverPin: try value("SERVER_PIN"), otherPin: try value("OTHER_PIN"))
            for url in [servers.apiURL, servers.httpbinURL, servers.faultURL] where !isListening(url) {
                throw Unavailable(description: "Nothing answers at \(url). \(hint)")
            }
            return .success(servers)
        } catch {
            return .failure(error)
        }
    }

    /// A value as the shell reads it from `.servers/env`, which quotes a path with a space in
    /// single quotes (`'/a b/ca.pem'`, a quote inside written `'"'"'`).
    private static func unquoted(_ text: String) -> String {
        guard text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") else { return text }
        return text.dropFirst().dropLast().replacingOccurrences(of: "'\"'\"'", with: "'")
    }

    /// `<package root>/.servers/env`.
    private static var envFile: URL {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) { break }
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent(".servers/env")
    }

    /// Whether a TCP connection to the URL's host and port succeeds.
    private static func isListening(_ text: String) -> Bool {
        guard let url = URL(string: text), let port = url.port else { return false }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(url.host ?? "127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// A configuration for one of the servers' base URLs.
    static func configuration(
        _ base: String, timeout: TimeInterval = 20, secondsBetweenPolls: TimeInterval = 0.05,
        maximumPollingRetries: Int? = nil, pins: [String] = [], caFile: URL? = nil, defaultHeaders: HTTPHeaders = [:],
        decodingFailureHandler: DecodingFailureHandler? = nil
    ) throws -> NetworkingConfiguration {
        guard let components = URLComponents(string: base), let host = components.host else {
            throw Unavailable(description: "\(base) is not a URL")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        let encoder = NetworkingConfiguration.makeDefaultEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return try NetworkingConfiguration(
            useSecureConnection: components.scheme == "https", domainURL: host, port: components.port,
            subdomainURL: components.path.isEmpty ? nil : components.path,
            usePinningCertificate: !pins.isEmpty, pinnedPublicKeys: try pins.map { try PublicKeyPin($0) },
            certificateAuthorityFile: caFile, timeout: timeout, secondsBetweenPolls: secondsBetweenPolls,
            maximumPollingRetries: maximumPollingRetries, defaultHeaders: defaultHeaders, jsonDecoder: decoder,
            jsonEncoder: encoder, decodingFailureHandler: decodingFailureHandler)
    }
}

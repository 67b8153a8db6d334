import Foundation
import Networking

#if canImport(Glibc)
    import Glibc
#endif

/// The real servers the integration tests talk to, as started by `script/server start` (a copy,
/// cut down, of the core tests' helper: this target does not depend on theirs).
///
/// Their addresses come from environment variables (`script/test` exports them), or else from the
/// `.servers/env` file that `script/server` writes at the package root. When neither names
/// servers that answer, `require()` throws, so integration tests fail with instructions instead
/// of passing silently.
struct TestServers: Sendable {
    /// The test API, `…/api/v1` (`script/testapi/app.py`).
    let apiURL: String
    /// httpbin.
    let httpbinURL: String
    /// nginx over plain HTTP: static files with real ETag / Last-Modified handling.
    let nginxURL: String
    /// The fault server: misbehaving responses (`script/testapi/faultserver.py`).
    let faultURL: String

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
                if parts.count == 2 { values[parts[0]] = parts[1] }
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
                apiURL: try value("API_URL"), httpbinURL: try value("HTTPBIN_URL"), nginxURL: try value("NGINX_URL"),
                faultURL: try value("FAULT_URL"))
            for url in [servers.apiURL, servers.httpbinURL, servers.nginxURL, servers.faultURL] where !isListening(url) {
                throw Unavailable(description: "Nothing answers at \(url). \(hint)")
            }
            return .success(servers)
        } catch {
            return .failure(error)
        }
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

    /// A configuration for one of the servers' base URLs with these interceptors (a cache), decoding
    /// snake_case keys.
    static func configuration(_ base: String, interceptors: [any Interceptor]) throws -> NetworkingConfiguration {
        guard let components = URLComponents(string: base), let host = components.host else {
            throw Unavailable(description: "\(base) is not a URL")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let encoder = NetworkingConfiguration.makeDefaultEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        var configuration = try NetworkingConfiguration(
            useSecureConnection: components.scheme == "https", domainURL: host, port: components.port,
            subdomainURL: components.path.isEmpty ? nil : components.path, timeout: 20, jsonDecoder: decoder, jsonEncoder: encoder)
        configuration.interceptors = interceptors
        return configuration
    }
}

import Foundation
import Networking

#if canImport(Glibc)
    import Glibc
#endif

/// The test API, as `script/server start` runs it: its address comes from the environment
/// (`script/test` exports it) or `.servers/env`. Without it, `require()` throws, so these tests
/// fail with instructions instead of passing silently.
enum OfflineTestServers {
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// The test API's base URL, such as `http://127.0.0.1:P/api/v1`.
    static func apiURL() throws -> URL { try url(of: "NETWORKING_TEST_API_URL", naming: "The test API") }

    /// The fault server's base URL (`/hang` never answers).
    static func faultURL() throws -> URL { try url(of: "NETWORKING_TEST_FAULT_URL", naming: "The fault server") }

    /// A server's URL from the environment variable `name` (or `.servers/env`), once it listens.
    private static func url(of name: String, naming server: String) throws -> URL {
        let hint = "Start the integration test servers with `script/server start` (or run everything with `script/test`)."
        var value = ProcessInfo.processInfo.environment[name]
        if value == nil, let file = try? String(contentsOf: root.appendingPathComponent(".servers/env"), encoding: .utf8) {
            value = file.split(separator: "\n").first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
        }
        guard let value, let url = URL(string: value), let port = url.port, isListening(port: port) else {
            throw Unavailable(description: "\(server) is not running. \(hint)")
        }
        return url
    }

    /// The package's root folder.
    static var root: URL {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/", !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
            folder.deleteLastPathComponent()
        }
        return folder
    }

    /// A configuration for `base` (http, the path as subdomain), with snake-case coders.
    static func configuration(_ base: URL, port: Int? = nil, timeout: TimeInterval = 10) throws -> NetworkingConfiguration {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try NetworkingConfiguration(
            useSecureConnection: false, domainURL: base.host ?? "127.0.0.1", port: port ?? base.port,
            subdomainURL: base.path.isEmpty ? nil : base.path, timeout: timeout, jsonDecoder: decoder)
    }

    private static func isListening(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// A fresh temporary folder.
func temporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offline-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// The user of the test API; `Identifiable`, so the session names it by its id.
struct APIUser: Codable, Sendable, Identifiable {
    let id: Int
    let name: String
}

struct APILogin: Decodable, Sendable {
    let user: APIUser
    let token: String
}

/// What `/journal/<stream>` holds.
struct Journal: Decodable, Sendable {
    struct Entry: Decodable, Sendable {
        let userId: Int?
        let body: JSONValue
        let idempotencyKey: String?
    }

    let entries: [Entry]
    let deliveries: Int
}

/// A repository for the test API.
final class APIRepository: AbstractRepository, @unchecked Sendable {
    func login() async throws -> APILogin {
        try await performAuthenticationRequest(
            .post("auth/login", parameters: ["email": "reader@example.com", "password": "secret123"])
        ).get()
    }

    func journal(_ stream: String) async throws -> Journal {
        try await performAuthenticationRequest(.get("journal/\(stream)")).get()
    }

    /// Has the server treat `token` as expired: it answers 401 to it from now on.
    func expire(_ token: String) async throws {
        try await performAuthenticationRequest(Endpoint<Void>.post("test/tokens/expire", parameters: ["token": token])).get()
    }

    func note(_ stream: String, _ body: [String: any Sendable]) -> Endpoint<Void> {
        .post("journal/\(stream)", parameters: Parameters(body))
    }

    /// A logged-in repository on the test API with two routes that write to a journal: `write`,
    /// signed, and `publicWrite`, which needs no session.
    static func withJournalRoutes(interceptors: [any Interceptor] = []) async throws -> APIRepository {
        var configuration = try OfflineTestServers.configuration(try OfflineTestServers.apiURL())
        configuration.interceptors = interceptors
        configuration.routes = try RouteTable([
            Route(name: "write", method: .post, path: "journal/{stream}"),
            Route(name: "publicWrite", method: .post, path: "journal/{stream}", requiresSession: false),
        ])
        let session = SessionManager<APIUser>()
        let repository = APIRepository(configuration: configuration, sessionManager: session)
        let login = try await repository.login()
        try session.login(user: login.user, token: login.token)
        return repository
    }
}

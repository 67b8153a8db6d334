import Foundation
import Networking
import NetworkingCache

/// The test API's HTTP caching fixtures (`/cache/resource/<key>`, `/cache/hits/<key>`, signup).
enum CacheFixtures {
    /// What `/cache/resource/<key>` answers.
    struct Resource: Decodable, Sendable, Equatable {
        let key: String
        let version: Int
        let servedAt: Double
        let user: Int?
        let varied: String?
    }

    /// What `/cache/hits/<key>` counts.
    struct Hits: Decodable, Sendable, Equatable {
        let requests: Int
        let conditional: Int
        let notModified: Int
    }

    struct User: Codable, Sendable, Identifiable {
        let id: Int
        let name: String
        let email: String
    }

    struct SignedUp: Decodable, Sendable {
        let user: User
        let token: String
    }

    /// A repository over the fixtures (`@unchecked Sendable` as every repository: no stored state of its own).
    final class Repository: AbstractRepository, @unchecked Sendable {
        /// `GET cache/resource/<key>` with `query` (as the fixture reads it) and `headers`.
        func resource(
            _ key: String, query: [String: String] = [:], headers: HTTPHeaders = [:], policy: CachePolicy? = nil,
            session: Bool = false
        ) async -> Result<RepositoryResponse<Resource>, RepositoryError> {
            var endpoint = Endpoint<RepositoryResponse<Resource>>.get(
                "cache/resource/\(key)", parameters: query.isEmpty ? nil : Parameters(dictionary: query), headers: headers)
            if !session { endpoint = endpoint.withoutSession() }
            if let policy { endpoint = endpoint.cachePolicy(policy) }
            return await performRequest(endpoint)
        }

        /// The server's counts for `key`, never from the cache.
        func hits(_ key: String) async throws -> Hits {
            try await performRequest(
                Endpoint<Hits>.get("cache/hits/\(key)").withoutSession().cachePolicy(CachePolicy(mode: .bypass))
            ).get()
        }

        /// Bumps the version of `key`.
        func touch(_ key: String) async throws {
            try await performRequest(Endpoint<Void>.post("cache/resource/\(key)/touch").withoutSession()).get()
        }

        /// A new user and its token.
        func signUp() async throws -> SignedUp {
            let email = "cache-\(UUID().uuidString.lowercased())@example.com"
            return try await performAuthenticationRequest(
                Endpoint<SignedUp>.post("auth/signup", parameters: ["name": "Cache Tester", "email": email, "password": "secret123"])
            ).get()
        }
    }

    /// A key no other test uses.
    static func uniqueKey(_ label: String) -> String { "\(label)-\(UUID().uuidString.prefix(8).lowercased())" }
}

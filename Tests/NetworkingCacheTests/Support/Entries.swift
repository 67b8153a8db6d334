import Foundation
import Networking

@testable import NetworkingCache

/// Entries and keys for store tests.
enum Entries {
    static func key(_ path: String, route: String = "books", user: String? = nil) -> CacheKey {
        CacheKey(
            method: .get, url: URL(string: "http://api.example.com/" + path) ?? URL(fileURLWithPath: "/"), routeName: route,
            discriminator: user, ignoresQuery: false)
    }

    static func entry(for key: CacheKey, body: Data = Data("{\"id\":1}".utf8), headers: HTTPHeaders = ["ETag": "\"v1\""])
        -> CacheEntry
    {
        CacheEntry(
            key: key.stored, method: "GET", url: "http://api.example.com/x?a=1", routeName: key.routeName,
            discriminator: key.discriminator, statusCode: 200, headers: headers, body: body,
            requestDate: Date(timeIntervalSince1970: 1_700_000_000.25), responseDate: Date(timeIntervalSince1970: 1_700_000_001.5),
            vary: [VaryField(name: "accept-language", value: "fr"), VaryField(name: "x-absent", value: nil)])
    }
}

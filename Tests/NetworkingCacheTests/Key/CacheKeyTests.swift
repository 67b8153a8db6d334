import Foundation
import Networking
import Testing

@testable import NetworkingCache

@Suite struct CacheKeyTests {
    private func key(_ url: String, route: String? = nil, user: String? = nil, ignoresQuery: Bool = false) throws -> CacheKey {
        CacheKey(method: .get, url: try #require(URL(string: url)), routeName: route, discriminator: user, ignoresQuery: ignoresQuery)
    }

    @Test func queryItemsThatConcatenateAlikeDoNotCollide() throws {
        // Given WebApiClient's collision: {a: "1b=2"} and {a: "1", b: "2"} both became "a=1b=2".
        var items = URLComponents(string: "https://api.example.com/books")
        items?.queryItems = [URLQueryItem(name: "a", value: "1b=2")]
        let single = try #require(items?.url)
        let pair = try #require(URL(string: "https://api.example.com/books?a=1&b=2"))
        // When both are keyed
        let first = CacheKey(method: .get, url: single, routeName: "books", discriminator: nil, ignoresQuery: false)
        let second = CacheKey(method: .get, url: pair, routeName: "books", discriminator: nil, ignoresQuery: false)
        // Then the keys and the stored names differ
        #expect(first.text != second.text)
        #expect(first.storeName != second.storeName)
        // Even with "=" left unescaped in the value
        let raw = try key("https://api.example.com/books?a=1b=2", route: "books")
        #expect(raw.text != second.text)
    }

    @Test("A count of query items followed by a name's length cannot read as another count: 11 items are not 1 item of 110 bytes")
    func theItemCountIsDelimited() throws {
        let names = ["aaaaaaaaaa"] + "bcdefghijk".map { String(repeating: $0, count: 7) }
        let eleven = try key("http://h/x?" + names.joined(separator: "&"))
        let one = try key("http://h/x?" + names[0] + names.dropFirst().map { "-7:" + $0 }.joined())
        #expect(eleven.text != one.text)
        #expect(eleven.storeName != one.storeName)
    }

    @Test("A field named like a token (X-Auth-Token, X-Session-Id) is a credential; a signature, CSRF token or API key is not")
    func tokenFieldsAreCredentials() throws {
        func request(_ headers: HTTPHeaders) throws -> TransportRequest {
            TransportRequest(method: .get, url: try #require(URL(string: "http://h/me")), headers: headers)
        }
        let alice = CacheKey.credential(of: try request(["X-Auth-Token": "alice"]))
        let bob = CacheKey.credential(of: try request(["x-auth-token": "bob"]))
        #expect(alice != nil && alice != bob)
        #expect(CacheKey.credential(of: try request(["X-Session-Id": "s1"])) != nil)
        #expect(CacheKey.credential(of: try request(["X-Session-Key": "s1"])) != nil)
        #expect(VaryRule.credentialAddedAfterTheCache(seen: [:], sent: ["X-Session-Key": "s1"]))
        #expect(CacheKey.credential(of: try request(["X-Signature": "s", "X-CSRF-Token": "c", "X-Request-Nonce": "n"])) == nil)
        #expect(CacheKey.credential(of: try request(["X-Api-Key": "k"])) == nil)
        #expect(CacheKey.secretFields(of: try request(["X-Api-Key": "k"])) != nil)
        // Added after the cache, such a field makes the answer an authorized one too.
        #expect(VaryRule.credentialAddedAfterTheCache(seen: [:], sent: ["X-Auth-Token": "alice"]))
        #expect(!VaryRule.credentialAddedAfterTheCache(seen: [:], sent: ["X-Request-Signature": "s"]))
    }

    @Test func orderOfDifferentNamesDoesNotMatterButOrderOfRepeatedNamesDoes() throws {
        #expect(try key("http://h/x?b=2&a=1").text == key("http://h/x?a=1&b=2").text)
        #expect(try key("http://h/x?a=1&a=2").text != key("http://h/x?a=2&a=1").text)
        #expect(try key("http://h/x?a").text != key("http://h/x?a=").text)
    }

    @Test func schemeHostAndDefaultPortAreNormalised() throws {
        #expect(try key("HTTP://API.Example.com:80/x").text == key("http://api.example.com/x").text)
        #expect(try key("https://api.example.com:443/x").text == key("https://api.example.com/x").text)
        #expect(try key("https://api.example.com:8443/x").text != key("https://api.example.com/x").text)
        #expect(try key("http://h").text == key("http://h/").text)
    }

    @Test func discriminatorRouteAndMethodSeparateEntries() throws {
        let url = try #require(URL(string: "http://h/me"))
        let anonymous = CacheKey(method: .get, url: url, routeName: "me", discriminator: nil, ignoresQuery: false)
        let empty = CacheKey(method: .get, url: url, routeName: "me", discriminator: "", ignoresQuery: false)
        let user1 = CacheKey(method: .get, url: url, routeName: "me", discriminator: "user:1", ignoresQuery: false)
        let user2 = CacheKey(method: .get, url: url, routeName: "me", discriminator: "user:2", ignoresQuery: false)
        let otherRoute = CacheKey(method: .get, url: url, routeName: "profile", discriminator: "user:1", ignoresQuery: false)
        let head = CacheKey(method: .head, url: url, routeName: "me", discriminator: "user:1", ignoresQuery: false)
        let texts = [anonymous, empty, user1, user2, otherRoute, head].map(\.text)
        #expect(Set(texts).count == texts.count)
        #expect(user1.storeName.discriminator != user2.storeName.discriminator)
        #expect(user1.storeName.route == user2.storeName.route)
        #expect(user1.storeName.resource == otherRoute.storeName.resource)
    }

    @Test func credentialsSeparateEntriesWithoutBeingKept() throws {
        let url = try #require(URL(string: "http://h/me"))
        let first = CacheKey(method: .get, url: url, routeName: nil, discriminator: nil, ignoresQuery: false, credential: "Bearer one")
        let second = CacheKey(method: .get, url: url, routeName: nil, discriminator: nil, ignoresQuery: false, credential: "Bearer two")
        #expect(first.text != second.text)
        #expect(!first.text.contains("Bearer"))
    }

    @Test(
        "A request's own credentials are its Authorization, Proxy-Authorization and Cookie fields and its URL's user: each tells requests apart"
    )
    func aRequestsOwnCredentials() throws {
        func credential(_ url: String, _ headers: HTTPHeaders = [:]) throws -> String? {
            CacheKey.credential(of: TransportRequest(method: .get, url: try #require(URL(string: url)), headers: headers))
        }
        #expect(try credential("https://api.example.com/me") == nil)
        #expect(try credential("https://api.example.com/me", ["Accept": "text/plain"]) == nil)
        let all = try [
            credential("https://api.example.com/me", ["Authorization": "Bearer a"]),
            credential("https://api.example.com/me", ["Proxy-Authorization": "Bearer a"]),
            credential("https://api.example.com/me", ["Cookie": "sid=a"]),
            credential("https://api.example.com/me", ["Cookie": "sid=b"]),
            credential("https://alice:pw1@api.example.com/me"),
            credential("https://bob:pw2@api.example.com/me"),
            credential("https://alice@api.example.com/me"),
        ]
        #expect(all.allSatisfy { $0 != nil })
        #expect(Set(all).count == all.count)
    }

    @Test("A client certificate (mutual TLS) is a credential: each certificate file, or certificate in memory, keys its own entries")
    func clientCertificates() throws {
        func credential(_ client: ClientCertificate?) throws -> String? {
            var request = TransportRequest(method: .get, url: try #require(URL(string: "https://api.example.com/me")))
            request.security.clientCertificate = client
            return CacheKey.credential(of: request)
        }
        let first = try credential(.pem(certificate: URL(fileURLWithPath: "/keys/a.pem")))
        let second = try credential(.pem(certificate: URL(fileURLWithPath: "/keys/b.pem")))
        #expect(first != nil && second != nil && first != second)
        #expect(try credential(nil) == nil)
        // In memory: told apart by the bytes' digest, never holding the bytes.
        let memoryA = try credential(.pem(certificate: Data("certificate A".utf8)))
        let memoryB = try credential(.pem(certificate: Data("certificate B".utf8)))
        let memoryAAgain = try credential(.pem(certificate: Data("certificate A".utf8)))
        #expect(memoryA != nil && memoryA != memoryB && memoryA == memoryAAgain)
        #expect(memoryA?.contains("certificate A") == false)
    }

    @Test func ignoringTheQuerySharesOneEntry() throws {
        #expect(try key("http://h/x?page=1", ignoresQuery: true).text == key("http://h/x?page=2", ignoresQuery: true).text)
        #expect(try key("http://h/x?page=1", ignoresQuery: true).text != key("http://h/x?page=1").text)
    }

    @Test func storeNamesRoundTripThroughFileNames() throws {
        let name = try key("http://h/x?page=1", route: "books", user: "user:1").storeName
        #expect(StoreName(fileName: name.description) == name)
        let variant = name.variant(VaryRule.variantTag([VaryField(name: "accept-language", value: "fr")]))
        #expect(StoreName(fileName: variant.description) == variant)
        #expect(variant.base == name)
        #expect(StoreName(fileName: ".tmp-1234") == nil)
        #expect(StoreName(fileName: "notes.txt") == nil)
        #expect(StoreName(fileName: String(repeating: "g", count: 12) + name.description.dropFirst(12)) == nil)
    }
}

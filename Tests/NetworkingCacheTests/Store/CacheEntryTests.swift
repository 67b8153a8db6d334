import Foundation
import Networking
import Testing

@testable import NetworkingCache

/// How a stored entry takes the header fields of a `304 Not Modified` (RFC 9111 §4.3.4).
@Suite struct CacheEntryTests {
    static let received = Date(timeIntervalSince1970: 1_700_003_600)
    static let url = URL(fileURLWithPath: "/")

    @Test("A 304's repeated field replaces every stored one, in the 304's order; its framing fields are not taken")
    func repeatedFieldsReplaceAndFramingFieldsStay() {
        // Given a stored answer with two Link fields, and a 304 with two other Link fields, its
        // own Date and its own Content-Length.
        var stored: HTTPHeaders = ["Content-Length": "120", "ETag": "\"v1\"", "Date": "Tue, 14 Nov 2023 22:13:20 GMT", "Age": "5"]
        stored.add(name: "Link", value: "</a>; rel=prev")
        stored.add(name: "Link", value: "</b>; rel=next")
        var notModified: HTTPHeaders = ["Content-Length": "0", "Date": "Tue, 14 Nov 2023 23:13:20 GMT"]
        notModified.add(name: "link", value: "</c>; rel=prev")
        notModified.add(name: "Link", value: "</d>; rel=next")
        let entry = Entries.entry(for: Entries.key("x"), headers: stored)

        // When the entry is refreshed with it.
        let refreshed = entry.refreshed(with: notModified, requestDate: Self.received, responseDate: Self.received)

        // Then the 304's Link fields replace the stored ones, its Date replaces the stored one,
        // the stored Age goes, and the stored Content-Length stays (the 304's describes the 304).
        #expect(refreshed.headers.values(for: "Link") == ["</c>; rel=prev", "</d>; rel=next"])
        #expect(refreshed.headers.values(for: "Date") == ["Tue, 14 Nov 2023 23:13:20 GMT"])
        #expect(refreshed.headers.values(for: "Content-Length") == ["120"])
        #expect(refreshed.headers["Age"] == nil)
        // The fields kept come first, then the 304's, grouped by name and spelled as the first of each name.
        #expect(refreshed.headers.map(\.name) == ["Content-Length", "ETag", "Date", "link", "link"])
    }

    @Test("Set-Cookie is neither taken from a 304 nor served from an entry stored before cookies were left out")
    func cookiesAreNeverServed() {
        let entry = Entries.entry(for: Entries.key("x"), headers: ["ETag": "\"v1\"", "Set-Cookie": "old=1"])
        #expect(entry.response(source: .cache, age: 0, url: Self.url).headers["Set-Cookie"] == nil)
        let refreshed = entry.refreshed(
            with: ["Set-Cookie": "sid=2", "ETag": "\"v1\""], requestDate: Self.received, responseDate: Self.received)
        #expect(refreshed.response(source: .revalidated, age: 0, url: Self.url).headers.values(for: "Set-Cookie").isEmpty)
        #expect(!refreshed.headers.values(for: "Set-Cookie").contains("sid=2"))
    }

    @Test("A field named like a credential (a CSRF token fetched with a GET) is never stored, nor a URL's path parameters")
    func credentialFieldsAreNeverStored() throws {
        let answer: HTTPHeaders = [
            "ETag": "\"v1\"", "X-CSRF-Token": "c-1", "X-Subject-Token": "s-1", "X-Request-Id": "r-1", "X-Next-Page-Token": "p-2",
        ]
        let stored = CacheEntry.storedFields(of: answer)
        #expect(stored.map(\.name) == ["ETag", "X-Request-Id", "X-Next-Page-Token"])
        let entry = Entries.entry(for: Entries.key("x"), headers: stored)
        let refreshed = entry.refreshed(with: ["X-Auth-Token": "a-1"], requestDate: Self.received, responseDate: Self.received)
        #expect(refreshed.headers["X-Auth-Token"] == nil)
        let url = try #require(URL(string: "https://u:p@h.test/app;jsessionid=j-1/items;v=2?token=t-1#f"))
        #expect(CacheKey.storedURL(of: url) == "https://h.test/app/items")
    }

    @Test("A 304 without Date or Age restarts the stored Date in its place and drops the stored Age")
    func missingDateAndAgeRestart() {
        let stored: HTTPHeaders = ["Date": "Tue, 14 Nov 2023 22:13:20 GMT", "ETag": "\"v1\"", "Age": "5"]
        let entry = Entries.entry(for: Entries.key("x"), headers: stored)

        let refreshed = entry.refreshed(with: ["ETag": "\"v1\""], requestDate: Self.received, responseDate: Self.received)

        #expect(refreshed.headers.map(\.name) == ["Date", "ETag"])
        #expect(refreshed.headers.values(for: "Date") == [HTTPDate.text(of: Self.received)])
        #expect(refreshed.headers["ETag"] == "\"v1\"")
    }

    @Test("Refreshing takes linear time, however many distinct header names a 304 carries", .timeLimit(.minutes(1)))
    func refreshIsLinear() {
        // Given a stored answer, and a 304 with 50,000 distinct names (one of them stored too).
        let stored: HTTPHeaders = ["ETag": "\"v1\"", "Cache-Control": "max-age=60", "X-H-7": "old"]
        let entry = Entries.entry(for: Entries.key("x"), headers: stored)
        let notModified = HTTPHeaders((0..<50_000).map { HTTPHeaders.Field(name: "X-H-\($0)", value: "v\($0)") })

        // When the entry is refreshed with it (a scan of every field per name would take ~10⁹ steps).
        let refreshed = entry.refreshed(with: notModified, requestDate: Self.received, responseDate: Self.received)

        // Then the merged fields are the stored ones not replaced, the Date received, and the 304's.
        #expect(refreshed.headers.count == 50_003)
        #expect(Array(refreshed.headers.map(\.name).prefix(4)) == ["ETag", "Cache-Control", "Date", "X-H-0"])
        #expect(refreshed.headers.values(for: "X-H-7") == ["v7"])
        #expect(refreshed.headers["x-h-49999"] == "v49999")
        #expect(refreshed.headers["Date"] == HTTPDate.text(of: Self.received))
        #expect(refreshed.directives == entry.directives)
    }
}

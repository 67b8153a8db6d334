import Networking
import Testing

@testable import NetworkingCache

@Suite struct CacheControlTests {
    @Test func readsDirectivesCaseInsensitivelyWithTokensAndQuotedStrings() {
        let directives = CacheControl(parsing: #"Max-Age=60, no-cache="Set-Cookie, X-Id", PRIVATE,must-revalidate"#)
        #expect(directives.maxAge == 60)
        #expect(directives.noCache)
        #expect(directives.isPrivate)
        #expect(directives.mustRevalidate)
        #expect(!directives.isPublic)
        #expect(!directives.noStore)
        // The comma inside the quoted string did not start a directive.
        #expect(!directives.contains("x-id\""))
        #expect(directives.directives.count == 4)
    }

    @Test func invalidOrConflictingAgesReadAsZero() {
        #expect(CacheControl(parsing: "max-age=abc").maxAge == 0)
        #expect(CacheControl(parsing: "max-age=").maxAge == 0)
        #expect(CacheControl(parsing: "max-age=-5").maxAge == 0)
        #expect(CacheControl(parsing: "max-age=10, max-age=20").maxAge == 0)
        #expect(CacheControl(parsing: "max-age=10, max-age=10").maxAge == 10)
        #expect(CacheControl(parsing: #"max-age="30""#).maxAge == 30)
        #expect(CacheControl(parsing: "max-age=99999999999999999999").maxAge == 2_147_483_648)
        // Leading zeros are not a value too large to hold.
        #expect(CacheControl(parsing: "max-age=00000000000").maxAge == 0)
        #expect(CacheControl(parsing: "max-age=000000000000060").maxAge == 60)
        #expect(CacheControl(parsing: "public").maxAge == nil)
    }

    @Test func readsEveryFieldAndPragmaForRequests() {
        var headers = HTTPHeaders()
        headers.add(name: "Cache-Control", value: "max-age=5")
        headers.add(name: "cache-control", value: "s-maxage=7, public")
        let response = CacheControl(headers)
        #expect(response.maxAge == 5)
        #expect(response.sharedMaxAge == 7)
        #expect(response.isPublic)
        #expect(CacheControl(["Pragma": "no-cache"], isRequest: true).noCache)
        #expect(!CacheControl(["Pragma": "no-cache"]).noCache)
        #expect(!CacheControl(["Pragma": "no-cache", "Cache-Control": "max-age=1"], isRequest: true).noCache)
        #expect(CacheControl(parsing: "max-stale").maxStale == .infinity)
        #expect(CacheControl(parsing: "max-stale=30").maxStale == 30)
        #expect(CacheControl(parsing: "only-if-cached, min-fresh=3").onlyIfCached)
        #expect(CacheControl(parsing: "min-fresh=3").minFresh == 3)
    }

    @Test func garbageNeverCrashes() {
        for text in ["", ",,,", "=", "==,=", "\"", "a=\"unterminated", "a=\"x\\", " , max-age = 5 ,", "\u{0}\u{1}=\u{2}"] {
            _ = CacheControl(parsing: text).maxAge
        }
        #expect(CacheControl(parsing: " , max-age = 5 ,").maxAge == 5)
    }
}

import Foundation
import Networking
import Testing

@testable import NetworkingCache

@Suite struct FreshnessTests {
    let received = Date(timeIntervalSince1970: 1_700_000_000)

    private func freshness(_ headers: HTTPHeaders, sentSecondsBefore delay: TimeInterval = 0, after elapsed: TimeInterval)
        -> Freshness
    {
        Freshness(
            headers: headers, directives: CacheControl(headers), requestDate: received.addingTimeInterval(-delay),
            responseDate: received, now: received.addingTimeInterval(elapsed))
    }

    private func date(_ offset: TimeInterval) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: received.addingTimeInterval(offset))
    }

    @Test func maxAgeAgainstResidentTime() {
        #expect(freshness(["Cache-Control": "max-age=60"], after: 59).isFresh)
        #expect(!freshness(["Cache-Control": "max-age=60"], after: 60).isFresh)
        #expect(freshness(["Cache-Control": "max-age=60"], after: 90).staleness == 30)
    }

    @Test func ageHeaderAndResponseDelayCount() {
        // Age: 50 plus a 5-second exchange leaves 5 seconds of a 60-second lifetime.
        let given = freshness(["Cache-Control": "max-age=60", "Age": "50"], sentSecondsBefore: 5, after: 4)
        #expect(given.age == 59)
        #expect(given.isFresh)
        #expect(!freshness(["Cache-Control": "max-age=60", "Age": "50"], sentSecondsBefore: 5, after: 5).isFresh)
        // An invalid Age is ignored.
        #expect(freshness(["Cache-Control": "max-age=60", "Age": "soon"], after: 1).age == 1)
    }

    @Test func apparentAgeFromADateInThePast() {
        // The server's clock says the response is already 30 seconds old.
        let given = freshness(["Cache-Control": "max-age=60", "Date": date(-30)], after: 0)
        #expect(given.age == 30)
    }

    @Test func expiresMinusDateWhenNoMaxAge() {
        #expect(freshness(["Expires": date(120), "Date": date(0)], after: 119).isFresh)
        #expect(!freshness(["Expires": date(120), "Date": date(0)], after: 121).isFresh)
        // Without Date, the time it arrived stands in.
        #expect(freshness(["Expires": date(120)], after: 100).lifetime == 120)
        // max-age wins over Expires.
        #expect(freshness(["Expires": date(3600), "Cache-Control": "max-age=10"], after: 11).isFresh == false)
        // An invalid Expires means already expired.
        #expect(freshness(["Expires": "0"], after: 0).lifetime == 0)
        #expect(!freshness(["Expires": "0"], after: 0).isFresh)
    }

    @Test func noExplicitLifetimeIsStale() {
        let given = freshness(["ETag": "\"x\""], after: 0)
        #expect(given.lifetime == nil)
        #expect(!given.isFresh)
    }
}

import Foundation
import Testing

@testable import NetworkingCache

@Suite struct HTTPDateParserTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test func readsTheThreeForms() {
        #expect(HTTPDateParser.date(from: "Sun, 06 Nov 1994 08:49:37 GMT", now: now) == expected)
        #expect(HTTPDateParser.date(from: "Sunday, 06-Nov-94 08:49:37 GMT", now: now) == expected)
        #expect(HTTPDateParser.date(from: "Sun Nov  6 08:49:37 1994", now: now) == expected)
        #expect(HTTPDateParser.date(from: "Mon, 01 Jan 2024 00:00:00 GMT", now: now) == Date(timeIntervalSince1970: 1_704_067_200))
        #expect(HTTPDateParser.date(from: "Thu, 29 Feb 2024 12:00:00 GMT", now: now) == Date(timeIntervalSince1970: 1_709_208_000))
    }

    @Test func refusesEverythingElse() {
        for text in [
            "0", "-1", "", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "Thu, 29 Feb 2023 12:00:00 GMT",
            "Sun, 06 Nov 1994 08:49 GMT", "tomorrow",
        ] {
            #expect(HTTPDateParser.date(from: text, now: now) == nil, "\(text)")
        }
    }

    @Test func placesTwoDigitYearsNearNow() {
        let inFuture = HTTPDateParser.date(from: "Friday, 01-Jan-60 00:00:00 GMT", now: now)
        #expect(inFuture.map { HTTPDateParser.year(of: $0) } == 2060)
        let inPast = HTTPDateParser.date(from: "Saturday, 01-Jan-99 00:00:00 GMT", now: now)
        #expect(inPast.map { HTTPDateParser.year(of: $0) } == 1999)
    }

    @Test func writesIMFFixdatesThatReadBack() {
        #expect(HTTPDateParser.text(of: Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDateParser.text(of: Date(timeIntervalSince1970: 1_709_208_000)) == "Thu, 29 Feb 2024 12:00:00 GMT")
        #expect(HTTPDateParser.text(of: Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDateParser.text(of: Date(timeIntervalSince1970: -86_400)) == "Wed, 31 Dec 1969 00:00:00 GMT")
        // Past 2038, where seconds no longer fit a 32-bit Int.
        for text in ["Thu, 31 Dec 2099 23:59:59 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 0001 00:00:00 GMT"] {
            let date = HTTPDateParser.date(from: text, now: now)
            #expect(date.map(HTTPDateParser.text(of:)) == text)
        }
    }
}

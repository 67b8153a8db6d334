import Foundation
import Testing

@testable import Networking

/// The HTTP date forms of `Retry-After`, read without `DateFormatter`.
@Suite("HTTPDate")
struct HTTPDateTests {
    /// 2026-11-22, for the RFC 850 form's two-digit year.
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test("the three forms of RFC 9110's example name the same instant")
    func threeForms() {
        for text in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            #expect(HTTPDate.parse(text, now: now) == Date(timeIntervalSince1970: 784_111_777), "\(text)")
        }
    }

    @Test("calendar edges: the epoch, leap days, the last representable second")
    func edges() {
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT", now: now) == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 12:00:00 GMT", now: now) == Date(timeIntervalSince1970: 951_825_600))
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 00:00:00 GMT", now: now) == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:59 GMT", now: now) == Date(timeIntervalSince1970: 253_402_300_799))
    }

    @Test("a two-digit year lands at most 50 years ahead")
    func twoDigitYears() {
        // now is in 2026: "76" is 2076 (50 years ahead), "77" is 1977.
        #expect(HTTPDate.parse("Wednesday, 01-Jan-76 00:00:00 GMT", now: now) == Date(timeIntervalSince1970: 3_345_062_400))
        #expect(HTTPDate.parse("Saturday, 01-Jan-77 00:00:00 GMT", now: now) == Date(timeIntervalSince1970: 220_924_800))
    }

    @Test(
        "anything else is nil",
        arguments: [
            "", "tomorrow", "Sun, 06 Nov 1994", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 29 Feb 2023 08:49:37 GMT",
            "Sun, 31 Apr 2023 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 0000 08:49:37 GMT",
            "Sun 06 Nov 1994 08:49:37 GMT", "1, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sun Nov 123 08:49:37 1994", "Sun, -6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov +994 08:49:37 GMT",
            "\u{3}suppbo:\"u\",\"\u{FFFD}\u{FFFD}\u{E}b\u{FFFD}\u{E}\u{1}S",  // the input that made DateFormatter leak
        ])
    func rejected(text: String) {
        #expect(HTTPDate.parse(text, now: now) == nil)
    }

    @Test("matches DateFormatter's reading of 2,000 instants in each form")
    func agreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        let formats = ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"]
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            for _ in 0..<2_000 {
                // 1977...2075, so that the two-digit years are unambiguous from now.
                let instant = Date(timeIntervalSince1970: TimeInterval(Int.random(in: 220_924_800..<3_313_526_400, using: &generator)))
                var text = formatter.string(from: instant)
                if format.hasPrefix("EEE MMM d ") {
                    // asctime pads a one-digit day with a space.
                    var parts = text.split(separator: " ").map(String.init)
                    if parts[2].count == 1 { parts[2] = " " + parts[2] }
                    text = parts.joined(separator: " ")
                }
                #expect(HTTPDate.parse(text, now: now) == instant, "\(text)")
            }
        }
    }
}

import Foundation
import Testing

@testable import Networking

/// HTTP dates (`Date`, `Expires`, `Last-Modified`, `Retry-After`), read and written without `DateFormatter`.
@Suite("HTTPDate")
struct HTTPDateTests {
    /// 2026-11-22, for the RFC 850 form's two-digit year.
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test("the three forms of RFC 9110's example name the same instant")
    func threeForms() {
        for text in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            #expect(HTTPDate.date(from: text, now: now) == Date(timeIntervalSince1970: 784_111_777), "\(text)")
        }
    }

    @Test("calendar edges: the epoch, leap days, the last representable second")
    func edges() {
        #expect(HTTPDate.date(from: "Thu, 01 Jan 1970 00:00:00 GMT", now: now) == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.date(from: "Tue, 29 Feb 2000 12:00:00 GMT", now: now) == Date(timeIntervalSince1970: 951_825_600))
        #expect(HTTPDate.date(from: "Thu, 29 Feb 2024 00:00:00 GMT", now: now) == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(HTTPDate.date(from: "Fri, 31 Dec 9999 23:59:59 GMT", now: now) == Date(timeIntervalSince1970: 253_402_300_799))
    }

    @Test("a two-digit year lands at most 50 years ahead")
    func twoDigitYears() {
        // now is in 2026: "76" is 2076 (50 years ahead), "77" is 1977.
        #expect(HTTPDate.date(from: "Wednesday, 01-Jan-76 00:00:00 GMT", now: now) == Date(timeIntervalSince1970: 3_345_062_400))
        #expect(HTTPDate.date(from: "Saturday, 01-Jan-77 00:00:00 GMT", now: now) == Date(timeIntervalSince1970: 220_924_800))
    }

    @Test("month names in any case, and UTC for GMT, are read; a leap second is the minute's last")
    func leniencies() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.date(from: "Sun, 06 NOV 1994 08:49:37 GMT", now: now) == expected)
        #expect(HTTPDate.date(from: "Sunday, 06-nov-94 08:49:37 UTC", now: now) == expected)
        #expect(HTTPDate.date(from: "Sun, 06 Nov 1994 08:49:60 GMT", now: now) == Date(timeIntervalSince1970: 784_111_799))
    }

    @Test("dates are written as IMF-fixdates that read back, past 2038 and at the calendar's ends")
    func writes() {
        #expect(HTTPDate.text(of: Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.text(of: Date(timeIntervalSince1970: 1_709_208_000.9)) == "Thu, 29 Feb 2024 12:00:00 GMT")
        #expect(HTTPDate.text(of: Date(timeIntervalSince1970: -86_400)) == "Wed, 31 Dec 1969 00:00:00 GMT")
        for text in ["Thu, 31 Dec 2099 23:59:59 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 0001 00:00:00 GMT"] {
            #expect(HTTPDate.date(from: text, now: now).map(HTTPDate.text(of:)) == text)
        }
        for outside in [Date(timeIntervalSince1970: 1e15), Date(timeIntervalSince1970: .infinity), Date(timeIntervalSince1970: -1e300)] {
            #expect(HTTPDate.text(of: outside) == "Thu, 01 Jan 1970 00:00:00 GMT")
        }
    }

    @Test(
        "anything else is nil",
        arguments: [
            "", "tomorrow", "Sun, 06 Nov 1994", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 PST", "0", "-1", "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 29 Feb 2023 08:49:37 GMT",
            "Sun, 31 Apr 2023 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 0000 08:49:37 GMT",
            "Sun 06 Nov 1994 08:49:37 GMT", "1, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sun Nov 123 08:49:37 1994", "Sun, -6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov +994 08:49:37 GMT",
            "\u{3}suppbo:\"u\",\"\u{FFFD}\u{FFFD}\u{E}b\u{FFFD}\u{E}\u{1}S",  // the input that made DateFormatter leak
        ])
    func rejected(text: String) {
        #expect(HTTPDate.date(from: text, now: now) == nil)
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
                #expect(HTTPDate.date(from: text, now: now) == instant, "\(text)")
            }
        }
    }
}

import Foundation

/// Reads the three HTTP date forms (RFC 9110 §5.6.7) found in `Date`, `Expires` and
/// `Last-Modified`: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
///
/// Strict and allocation-light, without `DateFormatter` (which on Linux costs far more and has
/// leaked on malformed input): anything else — including `Expires: 0` — is `nil`, which the
/// freshness rules read as "already expired".
enum HTTPDateParser {
    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The instant `text` names, or `nil`. `now` places the two-digit year of the RFC 850 form
    /// in the century that puts it at most 50 years ahead.
    static func date(from text: String, now: Date) -> Date? {
        let words = text.split(whereSeparator: { $0 == " " })
        switch words.count {
        case 6:  // IMF-fixdate
            guard words[0].hasSuffix(","), words[1].count == 2, words[3].count == 4, words[5] == "GMT",
                let day = number(words[1]), let month = month(words[2]), let year = number(words[3])
            else { return nil }
            return instant(year: year, month: month, day: day, time: words[4])
        case 4:  // RFC 850
            let date = words[1].split(separator: "-", omittingEmptySubsequences: false)
            guard words[0].hasSuffix(","), date.count == 3, date[0].count == 2, date[2].count == 2, words[3] == "GMT",
                let day = number(date[0]), let month = month(date[1]), let shortYear = number(date[2])
            else { return nil }
            let current = year(of: now)
            var year = current - current % 100 + shortYear
            if year > current + 50 { year -= 100 }
            return instant(year: year, month: month, day: day, time: words[2])
        case 5:  // asctime
            guard let month = month(words[1]), (1...2).contains(words[2].count), words[4].count == 4,
                let day = number(words[2]), let year = number(words[4])
            else { return nil }
            return instant(year: year, month: month, day: day, time: words[3])
        default:
            return nil
        }
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form a `Date` field takes.
    static func text(of date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds >= -62_135_596_800, seconds < 253_402_300_800 else { return "Thu, 01 Jan 1970 00:00:00 GMT" }
        let days = Int((seconds / 86_400).rounded(.down))
        let second = Int(seconds - TimeInterval(days) * 86_400)
        let year = year(of: date)
        var month = 12
        while month > 1, daysFromEpoch(year: year, month: month, day: 1) > days { month -= 1 }
        let day = days - daysFromEpoch(year: year, month: month, day: 1) + 1
        // 1970-01-01 was a Thursday.
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(weekday), \(two(day)) \(monthNames[month - 1].capitalized) \(yearText) "
            + "\(two(second / 3_600)):\(two(second % 3_600 / 60)):\(two(second % 60)) GMT"
    }

    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 4, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(text)
    }

    private static func month(_ text: Substring) -> Int? {
        guard text.count == 3 else { return nil }
        return monthNames.firstIndex(of: text.lowercased()).map { $0 + 1 }
    }

    private static func instant(year: Int, month: Int, day: Int, time: Substring) -> Date? {
        let parts = time.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }), let hour = number(parts[0]), let minute = number(parts[1]),
            let second = number(parts[2]), hour < 24, minute < 60, second <= 60, year >= 1, day >= 1,
            day <= daysIn(month: month, year: year)
        else { return nil }
        // In floating point: the seconds of years past 2038 do not fit a 32-bit `Int` (watchOS).
        let days = TimeInterval(daysFromEpoch(year: year, month: month, day: day))
        return Date(timeIntervalSince1970: days * 86_400 + TimeInterval(hour * 3_600 + minute * 60 + min(second, 59)))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a day of the proleptic Gregorian calendar, counting years from
    /// March so that the leap day ends a year (the usual civil-calendar arithmetic).
    private static func daysFromEpoch(year: Int, month: Int, day: Int) -> Int {
        let marchYear = month > 2 ? year : year - 1
        let era = marchYear / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        return era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
    }

    /// The UTC year of `date` (1970 for dates outside years 1...9999).
    static func year(of date: Date) -> Int {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds >= -62_135_596_800, seconds < 253_402_300_800 else { return 1970 }
        let days = Int((seconds / 86_400).rounded(.down))
        var year = 1970 + Int((Double(days) / 365.2425).rounded(.down))
        while daysFromEpoch(year: year + 1, month: 1, day: 1) <= days { year += 1 }
        while daysFromEpoch(year: year, month: 1, day: 1) > days { year -= 1 }
        return year
    }
}

import Foundation

/// Reads and writes HTTP dates (RFC 9110 §5.6.7), as servers send them in `Date`, `Expires`,
/// `Last-Modified` and `Retry-After`: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete
/// RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
///
/// A strict parser of its own rather than `DateFormatter`: the text comes from a server, and on
/// Linux `DateFormatter` leaks memory on some malformed values (found by `script/fuzz`), besides
/// costing far more. Anything that is not one of the three forms, or names a day that does not
/// exist, is `nil`. Two leniencies that real servers need: month names in any case, and `UTC`
/// where `GMT` belongs.
///
/// ```swift
/// let modified = response.headers["Last-Modified"].flatMap { HTTPDate.date(from: $0) }
/// let header = HTTPDate.text(of: Date())  // "Tue, 24 Nov 2026 09:12:45 GMT"
/// ```
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The instant `text` names, or `nil` when it is not an HTTP date.
    ///
    /// - Parameters:
    ///   - text: a header's value.
    ///   - now: places the RFC 850 form's two-digit year, in the century that puts it at most
    ///     50 years ahead of `now`.
    public static func date(from text: String, now: Date = Date()) -> Date? {
        let parts = text.split(separator: " ")
        switch parts.count {
        case 6:
            // IMF-fixdate: day-name "," SP day SP month SP year SP time SP "GMT"
            guard isDayName(parts[0], comma: true), parts[1].count == 2, parts[3].count == 4, isZone(parts[5]),
                let day = number(parts[1]), let month = month(parts[2]), let year = number(parts[3])
            else { return nil }
            return date(year: year, month: month, day: day, time: parts[4])
        case 4:
            // RFC 850: day-name-long "," SP day "-" month "-" 2DIGIT SP time SP "GMT"
            let pieces = parts[1].split(separator: "-", omittingEmptySubsequences: false)
            guard isDayName(parts[0], comma: true), pieces.count == 3, pieces[0].count == 2, pieces[2].count == 2,
                isZone(parts[3]), let day = number(pieces[0]), let month = month(pieces[1]), let twoDigits = number(pieces[2])
            else { return nil }
            let thisYear = year(of: now)
            var year = thisYear - thisYear % 100 + twoDigits
            if year > thisYear + 50 { year -= 100 }
            return date(year: year, month: month, day: day, time: parts[2])
        case 5:
            // asctime: day-name SP month SP ( 2DIGIT / ( SP 1DIGIT )) SP time SP year
            guard isDayName(parts[0], comma: false), (1...2).contains(parts[2].count), parts[4].count == 4,
                let month = month(parts[1]), let day = number(parts[2]), let year = number(parts[4])
            else { return nil }
            return date(year: year, month: month, day: day, time: parts[3])
        default:
            return nil
        }
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form HTTP sends, to the
    /// second below. A date outside years 1...9999 (a clock gone wrong) is written as the epoch.
    public static func text(of date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds >= -62_135_596_800, seconds < 253_402_300_800 else { return "Thu, 01 Jan 1970 00:00:00 GMT" }
        let days = Int((seconds / 86_400).rounded(.down))
        let second = Int(seconds - TimeInterval(days) * 86_400)
        let year = year(of: date)
        var month = 12
        while month > 1, daysSinceEpoch(year: year, month: month, day: 1) > days { month -= 1 }
        let day = days - daysSinceEpoch(year: year, month: month, day: 1) + 1
        // 1970-01-01 was a Thursday.
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(weekday), \(two(day)) \(months[month - 1].capitalized) \(yearText) "
            + "\(two(second / 3_600)):\(two(second % 3_600 / 60)):\(two(second % 60)) GMT"
    }

    private static func isDayName(_ text: Substring, comma: Bool) -> Bool {
        var name = text
        if comma {
            guard name.last == "," else { return false }
            name = name.dropLast()
        }
        return name.count >= 3 && name.allSatisfy { $0.isASCII && $0.isLetter }
    }

    private static func isZone(_ text: Substring) -> Bool { text == "GMT" || text == "UTC" }

    /// A run of ASCII digits as a number (at most 4, so it cannot overflow).
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 4 else { return nil }
        var value = 0
        for character in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(character) else { return nil }
            value = value * 10 + Int(character - UInt8(ascii: "0"))
        }
        return value
    }

    /// 1...12 for `Jan`...`Dec`, in any case.
    private static func month(_ text: Substring) -> Int? {
        guard text.count == 3 else { return nil }
        return months.firstIndex(of: text.lowercased()).map { $0 + 1 }
    }

    /// The instant of a day and an `HH:MM:SS` time in UTC, when both exist.
    private static func date(year: Int, month: Int, day: Int, time: Substring) -> Date? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
            let hour = number(clock[0]), let minute = number(clock[1]), let second = number(clock[2]),
            hour < 24, minute < 60, second <= 60, year >= 1, day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        // In floating point: the seconds of years past 2038 do not fit a 32-bit `Int` (watchOS).
        let days = TimeInterval(daysSinceEpoch(year: year, month: month, day: day))
        // A leap second (`23:59:60`) is read as the last second of its minute.
        return Date(timeIntervalSince1970: days * 86_400 + TimeInterval(hour * 3_600 + minute * 60 + min(second, 59)))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (year ≥ 1).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year  // years counted from March
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The UTC calendar year `date` falls in.
    static func year(of date: Date) -> Int {
        // Outside years 1...9999 (a clock gone wrong), any century will do.
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds >= -62_135_596_800, seconds < 253_402_300_800 else { return 1970 }
        let days = Int((seconds / 86_400).rounded(.down))
        // Search near the estimate instead of inverting daysSinceEpoch.
        var year = 1970 + Int((Double(days) / 365.2425).rounded(.down))
        while daysSinceEpoch(year: year + 1, month: 1, day: 1) <= days { year += 1 }
        while daysSinceEpoch(year: year, month: 1, day: 1) > days { year -= 1 }
        return year
    }
}

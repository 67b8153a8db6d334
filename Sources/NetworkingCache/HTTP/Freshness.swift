import Foundation
import Networking

/// How old a stored answer is and how long it stays fresh (RFC 9111 §4.2), from its headers
/// (`Cache-Control: max-age`, `Expires`, `Date`, `Age`) and when it was asked for and received.
///
/// No heuristic freshness (§4.2.2) is computed: an answer without `max-age` or `Expires` is stale
/// as soon as it is stored, so it is revalidated (with its `ETag` or `Last-Modified`) before use.
struct Freshness: Sendable, Hashable {
    /// The answer's current age in seconds (`current_age`, §4.2.3).
    let age: TimeInterval
    /// How long the answer is fresh from its creation, in seconds (`freshness_lifetime`,
    /// §4.2.1), or `nil` when the response gives no explicit lifetime.
    let lifetime: TimeInterval?

    /// Whether the answer is fresh: its lifetime is longer than its age.
    var isFresh: Bool { lifetime.map { $0 > age } ?? false }

    /// How long the answer has been stale, in seconds (0 while fresh).
    var staleness: TimeInterval { max(0, age - (lifetime ?? 0)) }

    /// The freshness of `entry` at `now`, from the dates it parsed when it was made.
    init(of entry: CacheEntry, now: Date) {
        self.init(
            dates: entry.dates, ageValue: entry.ageValue, directives: entry.directives, requestDate: entry.requestDate,
            responseDate: entry.responseDate, now: now)
    }

    /// The freshness of a response with these headers, asked for at `requestDate` and received
    /// at `responseDate`, at `now`.
    init(headers: HTTPHeaders, directives: CacheControl, requestDate: Date, responseDate: Date, now: Date) {
        self.init(
            dates: HeaderDates(headers, receivedAt: responseDate), ageValue: headers.age, directives: directives,
            requestDate: requestDate, responseDate: responseDate, now: now)
    }

    private init(
        dates: HeaderDates, ageValue: TimeInterval?, directives: CacheControl, requestDate: Date, responseDate: Date, now: Date
    ) {
        let date = dates.date ?? responseDate
        // §4.2.3: the age the response already had when it arrived, corrected for the delay of
        // the exchange, plus the time it has spent here.
        let apparentAge = max(0, responseDate.timeIntervalSince(date))
        let responseDelay = max(0, responseDate.timeIntervalSince(requestDate))
        let correctedInitialAge = max(apparentAge, (ageValue ?? 0) + responseDelay)
        let residentTime = max(0, now.timeIntervalSince(responseDate))
        age = correctedInitialAge + residentTime
        // §4.2.1: max-age wins over Expires; an Expires that is not a date (such as "0") means
        // already expired.
        if let maxAge = directives.maxAge {
            lifetime = maxAge
        } else {
            switch dates.expires {
            case .absent: lifetime = nil
            case .invalid: lifetime = 0
            case .date(let expires): lifetime = max(0, expires.timeIntervalSince(date))
            }
        }
    }

}

/// The `Date` and `Expires` fields of a response, parsed once.
struct HeaderDates: Sendable, Hashable {
    /// What `Expires` says.
    enum Expiry: Sendable, Hashable {
        case absent
        /// Present but not a date: already expired.
        case invalid
        case date(Date)
    }

    /// The `Date` field, when it is a valid date.
    let date: Date?
    /// The `Expires` field.
    let expires: Expiry

    /// The dates of `headers`, for a response received at `receivedAt` (which places two-digit years).
    init(_ headers: HTTPHeaders, receivedAt: Date) {
        date = headers["Date"].flatMap { HTTPDate.date(from: $0, now: receivedAt) }
        if let text = headers["Expires"] {
            expires = HTTPDate.date(from: text, now: receivedAt).map { .date($0) } ?? .invalid
        } else {
            expires = .absent
        }
    }
}

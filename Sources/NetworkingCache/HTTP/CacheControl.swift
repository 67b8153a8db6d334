import Foundation
import Networking

/// The directives of the `Cache-Control` fields of a request or a response (RFC 9111 §5.2),
/// read leniently: names are case-insensitive, values may be tokens or quoted strings (which may
/// hold commas), and anything unreadable is skipped rather than failing the call.
struct CacheControl: Sendable, Hashable {
    /// Every directive, by lowercase name, with its value (`nil` when it has none). A directive
    /// given twice keeps every value, in order.
    private(set) var directives: [String: [String?]] = [:]

    /// No directive.
    init() {}

    /// The directives of every `Cache-Control` field of `headers`; for a request without one,
    /// `Pragma: no-cache` counts as `no-cache` (RFC 9111 §5.4).
    init(_ headers: HTTPHeaders, isRequest: Bool = false) {
        for value in headers.values(for: "Cache-Control") { parse(value) }
        if isRequest, directives.isEmpty,
            headers.values(for: "Pragma").contains(where: { $0.lowercased().contains("no-cache") })
        {
            directives["no-cache"] = [nil]
        }
    }

    /// Directives parsed from one field value, such as `max-age=60, must-revalidate`.
    init(parsing value: String) {
        parse(value)
    }

    /// Whether the directive is present, with or without a value.
    func contains(_ name: String) -> Bool { directives[name] != nil }

    /// `max-age` (RFC 9111 §5.2.1.1, §5.2.2.1) in seconds: `nil` when absent, `0` when invalid
    /// or given twice with different values (the response is then treated as stale).
    var maxAge: TimeInterval? { seconds("max-age") }

    /// `s-maxage` in seconds, with the same rules as ``maxAge``. A private cache does not use it
    /// for freshness, but it explicitly allows storing an answer to an authorized request.
    var sharedMaxAge: TimeInterval? { seconds("s-maxage") }

    /// `min-fresh` of a request, in seconds.
    var minFresh: TimeInterval? { seconds("min-fresh") }

    /// `max-stale` of a request: `nil` when absent, `.infinity` without a value.
    var maxStale: TimeInterval? {
        guard let values = directives["max-stale"] else { return nil }
        if values.contains(where: { $0 == nil }) { return .infinity }
        return seconds("max-stale")
    }

    /// `no-store`.
    var noStore: Bool { contains("no-store") }
    /// `no-cache` (with or without field names: a private cache revalidates either way).
    var noCache: Bool { contains("no-cache") }
    /// `must-revalidate` (`proxy-revalidate` binds shared caches only, so it is not read).
    var mustRevalidate: Bool { contains("must-revalidate") }
    /// `public`.
    var isPublic: Bool { contains("public") }
    /// `private`.
    var isPrivate: Bool { contains("private") }
    /// `only-if-cached` of a request: answer from storage or not at all.
    var onlyIfCached: Bool { contains("only-if-cached") }

    /// A delta-seconds value (RFC 9111 §1.2.2): digits only; values too large to hold are
    /// 2^31 seconds, as the RFC asks. Invalid or conflicting values read as `0`.
    private func seconds(_ name: String) -> TimeInterval? {
        guard let values = directives[name] else { return nil }
        var result: TimeInterval?
        for value in values {
            guard let value, !value.isEmpty, value.utf8.allSatisfy({ (48...57).contains($0) }) else { return 0 }
            // Leading zeros say nothing: "00000000000" is 0, not a value too large to hold.
            let digits = value.drop { $0 == "0" }
            let parsed = digits.utf8.count > 10 ? 2_147_483_648 : min(TimeInterval(String(digits)) ?? 0, 2_147_483_648)
            if let result, result != parsed { return 0 }
            result = parsed
        }
        return result
    }

    private mutating func parse(_ text: String) {
        var scalars = Substring(text).unicodeScalars[...]
        while !scalars.isEmpty {
            // A directive name, up to '=', ',' or the end.
            var name = ""
            while let scalar = scalars.first, scalar != "=", scalar != "," {
                name.unicodeScalars.append(scalar)
                scalars.removeFirst()
            }
            var value: String?
            if scalars.first == "=" {
                scalars.removeFirst()
                while let scalar = scalars.first, scalar == " " || scalar == "\t" { scalars.removeFirst() }
                var read = ""
                if scalars.first == "\"" {
                    scalars.removeFirst()
                    while let scalar = scalars.first, scalar != "\"" {
                        scalars.removeFirst()
                        if scalar == "\\", let escaped = scalars.first {
                            read.unicodeScalars.append(escaped)
                            scalars.removeFirst()
                        } else {
                            read.unicodeScalars.append(scalar)
                        }
                    }
                    if !scalars.isEmpty { scalars.removeFirst() }  // the closing quote
                    // Skip anything up to the next comma.
                    while let scalar = scalars.first, scalar != "," { scalars.removeFirst() }
                } else {
                    while let scalar = scalars.first, scalar != "," {
                        read.unicodeScalars.append(scalar)
                        scalars.removeFirst()
                    }
                    read = read.trimmingWhitespace()
                }
                value = read
            }
            if scalars.first == "," { scalars.removeFirst() }
            let trimmed = name.trimmingWhitespace().lowercased()
            if !trimmed.isEmpty { directives[trimmed, default: []].append(value) }
        }
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs (the whitespace of HTTP fields).
    func trimmingWhitespace() -> String {
        var scalars = unicodeScalars[...]
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}

import Foundation

/// Reads `Set-Cookie` fields (RFC 6265 §5.2) into cookies for the URL that sent them.
///
/// Lenient where the RFC is (unknown attributes are ignored, dates use the cookie-date
/// algorithm of §5.1.1, which accepts the `Wed, 21-Oct-2015 07:28:00 GMT` forms servers send),
/// strict where safety needs it (RFC 6265bis §5.6, §5.7): a `Domain` that does not cover the
/// sending host, or that is a single label (`com`, `com.`) or a public suffix other than the host
/// itself, drops the cookie; so do a control character anywhere in the field, a name and value
/// longer than 4,096 bytes together, `Secure` from a URL that is not `https`, a `__Secure-` name
/// without `Secure`, and a `__Host-` name without `Secure`, with a `Domain`, or without
/// `Path=/`. An attribute
/// value longer than 1,024 bytes, and an `Expires` or `Max-Age` that cannot be read, is ignored.
enum SetCookieParser {
    /// The most bytes of one `Set-Cookie` field taken; longer ones are ignored.
    static let maximumFieldLength = 8192
    /// The most bytes of a cookie's name and value together (RFC 6265bis §5.6).
    static let maximumNameAndValueLength = 4096
    /// The most bytes of an attribute's value; longer attributes are ignored (RFC 6265bis §5.6).
    static let maximumAttributeValueLength = 1024

    /// The cookie one field sets, or `nil` when the field is ignored.
    ///
    /// - Parameter isPublicSuffix: whether a domain is one under which anyone may register names
    ///   (`co.uk`, `github.io`); a `Domain` attribute naming one is refused unless it is the host.
    static func cookie(
        from field: String, for url: URL, now: Date, isPublicSuffix: (String) -> Bool = { _ in false }
    ) -> Cookie? {
        guard field.utf8.count <= maximumFieldLength, let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        // A name or value with a control character (a bare CR, a NUL) would be stored, then go into
        // every later request's Cookie header, which libcurl refuses to send and which could split
        // the header on other stacks: one bad cookie would break every call. RFC 6265 §4.1.1 does
        // not allow them and 6265bis §5.6 ignores the whole field, as browsers do.
        guard !field.utf8.contains(where: Self.isForbiddenControl) else { return nil }
        // Split at the bytes `;` and `=`, as a server reads the Cookie header it gets back, never
        // at characters: `;` before a combining accent is one character, not a `;`.
        let parts = field.utf8.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        guard let pair = parts.first, let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { return nil }
        let name = trimmed(pair[..<equals])
        let value = trimmed(pair[pair.index(after: equals)...])
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= maximumNameAndValueLength else { return nil }
        var cookie = Cookie(name: name, value: value, domain: host, path: defaultPath(of: url))
        var maxAge: Date?
        var expires: Date?
        // Only the last Domain attribute counts (RFC 6265 §5.3 step 4).
        var domainAttribute: String?
        var namesRootPath = false
        for attribute in parts.dropFirst() {
            let pieces = attribute.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
                .map(trimmed)
            let key = pieces[0].lowercased()
            let argument = pieces.count > 1 ? pieces[1] : ""
            guard argument.utf8.count <= maximumAttributeValueLength else { continue }
            switch key {
            // A date that cannot be read is ignored, not taken as "no date" (RFC 6265 §5.2.1).
            case "expires": expires = CookieDate.parse(argument) ?? expires
            case "max-age":
                guard let seconds = Self.maxAge(argument) else { continue }
                // Capped as a `TimeInterval`: `1 << 40` does not fit an `Int` of 32 bits (watchOS),
                // where it would be 0 and every Max-Age would expire at once.
                maxAge = seconds <= 0 ? .distantPast : now.addingTimeInterval(min(TimeInterval(seconds), 1_099_511_627_776))
            case "domain":
                var domain = argument.lowercased()
                if domain.hasPrefix(".") { domain.removeFirst() }
                guard !domain.isEmpty else { continue }
                domainAttribute = domain
            case "path":
                cookie.path = argument.hasPrefix("/") ? argument : defaultPath(of: url)
                namesRootPath = argument == "/"
            case "secure": cookie.isSecure = true
            case "httponly": cookie.isHTTPOnly = true
            default: continue
            }
        }
        if let domain = domainAttribute {
            // "com." is a single label too, and a public suffix serves many sites.
            let bare = domain.hasSuffix(".") ? String(domain.dropLast()) : domain
            guard Cookie.domainMatches(host, domain), domain == host || Self.mayBeShared(bare, isPublicSuffix: isPublicSuffix) else {
                return nil
            }
            // A Domain attribute, even equal to the host, makes a domain cookie (RFC 6265
            // §5.3) — but a public suffix's own cookie stays host-only (§5.3 step 5), or it
            // would go to every site under it.
            cookie.domain = domain
            cookie.isHostOnly = isPublicSuffix(bare)
        }
        // A Secure cookie set over plain http could be a man in the middle's (RFC 6265bis §5.7).
        if cookie.isSecure, url.scheme?.lowercased() != "https" { return nil }
        // The name's prefixes promise what the cookie is (RFC 6265bis §4.1.3, §5.7 steps 19–20,
        // matched ignoring case as browsers do): `__Secure-` that it is Secure, `__Host-` that it
        // is also host-only, with no Domain, for the whole host (an explicit Path=/). A field that breaks the
        // promise could be another site's or a man in the middle's: it is dropped.
        let prefix = name.prefix(9).lowercased()
        if prefix.hasPrefix("__secure-") || prefix.hasPrefix("__host-") {
            guard cookie.isSecure else { return nil }
            if prefix.hasPrefix("__host-"), domainAttribute != nil || !namesRootPath { return nil }
        }
        cookie.expiresAt = maxAge ?? expires
        return cookie
    }

    /// A piece of a field split at ASCII bytes (whole UTF-8 characters), as text without the blanks around it.
    private static func trimmed(_ bytes: Substring.UTF8View) -> String {
        String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    /// Whether a cookie for `domain` may go to the names under it: not for a single label (`com`)
    /// or a public suffix (`co.uk`), which serve many sites.
    static func mayBeShared(_ domain: String, isPublicSuffix: (String) -> Bool) -> Bool {
        domain.contains(".") && !isPublicSuffix(domain)
    }

    /// RFC 6265 §5.2.2: an optional `-` then digits, else the attribute is ignored. A value
    /// too large for `Int` is the longest (a negative one the shortest) lifetime.
    private static func maxAge(_ text: String) -> Int? {
        let negative = text.hasPrefix("-")
        let digits = text.utf8.dropFirst(negative ? 1 : 0)
        guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        if negative { return 0 }
        return Int(text) ?? Int.max
    }

    /// Whether a byte is a control character a cookie may not hold: 0x00–0x08, 0x0A–0x1F and
    /// 0x7F (a horizontal tab is allowed). Bytes of multi-byte UTF-8 characters are all 0x80 or
    /// more, so they are never mistaken for one.
    static func isForbiddenControl(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F
    }

    /// RFC 6265 §5.1.4: the request path up to its last `/`, or `/`.
    static func defaultPath(of url: URL) -> String {
        let path = Cookie.requestPath(of: url)
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// Splits a `Set-Cookie` value that a transport joined with `, ` (URLSession merges repeated
    /// fields) back into one value per cookie, without splitting inside an `Expires` date: a comma
    /// starts a cookie only where what follows begins as one (`name=`, the name a token), so a
    /// comma inside a value followed by its attributes (`sid="a,b"; Secure`) stays in it. The
    /// join itself is ambiguous (`prefs=a,b=c; Secure` reads as two cookies).
    static func split(_ joined: String) -> [String] {
        var fields: [String] = []
        var current = ""
        // Whether `current` ends inside an `Expires` date ("Expires=Wed" before the comma: the
        // comma belongs to the date). A date holds one comma, so the piece after it ends the
        // date, even a date without a time. Kept piece by piece, so that the split stays linear
        // in the value however many commas a server sends ("expires=" never spans a comma).
        var inDate = false
        // Whether `current` ends inside a quoted value (`sid="a,b=c"`): an odd count of quotes.
        var inQuotes = false
        for piece in joined.split(separator: ",", omittingEmptySubsequences: false) {
            let quotes = piece.utf8.count { $0 == UInt8(ascii: "\"") } % 2 == 1
            if current.isEmpty {
                current = String(piece)
                inDate = Self.endsInDate(piece)
                inQuotes = quotes
            } else if inDate || inQuotes || !Self.beginsCookie(piece) {
                current += "," + piece
                inDate = Self.endsInDate(piece)
                inQuotes = inQuotes != quotes
            } else {
                fields.append(current.trimmingCharacters(in: .whitespaces))
                current = String(piece)
                inDate = Self.endsInDate(piece)
                inQuotes = quotes
            }
        }
        if !current.isEmpty { fields.append(current.trimmingCharacters(in: .whitespaces)) }
        return fields
    }

    /// Whether a piece after a comma begins a cookie: its first `;`-separated part is `name=…`
    /// with a token name (RFC 9110 `tchar`s, surrounding blanks aside).
    private static func beginsCookie(_ piece: Substring) -> Bool {
        let first = piece.prefix { $0 != ";" }
        guard let equals = first.firstIndex(of: "=") else { return false }
        let name = first[..<equals].trimmingCharacters(in: .whitespaces)
        return HeaderValidation.isToken(name)
    }

    /// Whether text ends inside an `Expires` date, before the comma of its day name, once
    /// `piece` is added: the piece's last `expires=` has a day name after it, and no `;` or `:`.
    /// The piece after that comma ends the date.
    private static func endsInDate(_ piece: Substring) -> Bool {
        let lowered = piece.lowercased()
        guard let range = lowered.range(of: "expires=", options: .backwards) else { return false }
        let day = lowered[range.upperBound...]
        return !day.contains(";") && !day.contains(":") && !day.allSatisfy { $0 == " " || $0 == "\t" }
    }
}

/// The cookie-date algorithm of RFC 6265 §5.1.1: finds a time, a day, a month and a year among
/// the date's tokens, whatever their order and separators.
enum CookieDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func parse(_ text: String) -> Date? {
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        let delimiters = CharacterSet(charactersIn: "\t !\"#$%&'()*+,-./;<=>?@[\\]^_`{|}~")
        for token in text.components(separatedBy: delimiters) where !token.isEmpty {
            if time == nil, let parsed = parseTime(token) {
                time = parsed
            } else if day == nil, let number = leadingNumber(token, digits: 1...2) {
                day = number
            } else if month == nil, let index = months.firstIndex(of: String(token.prefix(3)).lowercased()) {
                month = index + 1
            } else if year == nil, let number = leadingNumber(token, digits: 2...4) {
                year = number
            }
        }
        guard var year, let day, let month, let (hour, minute, second) = time else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, hour <= 23, minute <= 59, second <= 59 else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        // A day the month does not have (31 February) fails rather than rolling over (§5.1.1).
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return date
    }

    private static func parseTime(_ token: String) -> (Int, Int, Int)? {
        let fields = token.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 3 else { return nil }
        let numbers = fields.compactMap { field -> Int? in
            let digits = field.prefix { $0.isASCII && $0.isNumber }
            return (1...2).contains(digits.count) ? Int(digits) : nil
        }
        return numbers.count == 3 ? (numbers[0], numbers[1], numbers[2]) : nil
    }

    private static func leadingNumber(_ token: String, digits: ClosedRange<Int>) -> Int? {
        let prefix = token.prefix { $0.isASCII && $0.isNumber }
        guard digits.contains(prefix.count), prefix.count == token.count || !(token.dropFirst(prefix.count).first?.isNumber ?? false)
        else { return nil }
        return Int(prefix)
    }
}

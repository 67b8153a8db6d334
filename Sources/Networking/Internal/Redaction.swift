import Foundation

/// Keeps credentials out of error descriptions, logs and decoding reports.
///
/// A name is secret when, lower-cased, it contains one of ``builtInFragments`` (so `access_token`,
/// `X-Refresh-Token`, `client_secret` and `X-Functions-Key` all are), or equals one of
/// ``builtInNames`` or of the extra ``secretFields``. Keys are named one by one: a rule for any
/// `X-…-Key` would take in `X-Idempotency-Key`, which a redirect must keep and a response cache
/// must not key on.
/// Secret header values, query values and JSON members are replaced by `<redacted>`.
struct Redaction: Sendable {
    static let placeholder = "<redacted>"
    static let builtInFragments = [
        "token", "password", "passwd", "passphrase", "pwd", "secret", "authorization", "cookie", "credential",
        "api_key", "apikey", "api-key", "access_key", "accesskey", "access-key", "private_key", "privatekey",
        "private-key", "subscription-key", "subscription_key", "signature", "session", "auth_key", "auth-key", "authkey",
        "functions-key", "master-key", "master_key", "masterkey", "sessid",
    ]
    /// Names secret only as a whole: as fragments they would hide `monkey`, `design` or `author`.
    /// (`key` is Google's API key parameter, `sig` an Azure shared-access signature, `sid` a
    /// session identifier in a URL; `sessid` — PHP's `PHPSESSID` — is a fragment.)
    static let builtInNames: Set<String> = ["key", "sig", "auth", "pass", "sid"]

    /// The redaction with the built-in names only.
    static let standard = Redaction()

    /// Extra secret names, lower-cased, matched exactly.
    let secretFields: Set<String>

    init(secretFields: Set<String> = []) {
        self.secretFields = Set(secretFields.map { $0.lowercased() })
    }

    func isSecret(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return secretFields.contains(lowered) || Self.builtInNames.contains(lowered)
            || Self.builtInFragments.contains { lowered.contains($0) }
    }

    /// A header's value for a log: hidden whole when the name is secret; otherwise with the values
    /// of secret `name=value` pairs hidden, since a `Link`, `Location` or `Referer` can carry a URL
    /// with `?access_token=…`.
    func headerValue(name: String, value: String) -> String {
        if isSecret(name) { return Self.placeholder }
        guard value.contains("=") || value.contains("@") else { return value }
        // A `Link`'s targets are URLs in angle brackets: each is redacted as a URL, so that what
        // follows it (`; rel="next"`) is kept.
        var result = ""
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            result += redactText(String(rest[..<open])) + "<" + urlText(String(rest[rest.index(after: open)..<close])) + ">"
            rest = rest[rest.index(after: close)...]
        }
        // A bare URL (`Location: https://user:pw@host/…`) is redacted as one, user part included.
        return result + (rest.contains("://") ? urlText(String(rest)) : redactText(String(rest)))
    }

    /// The URL as text with secret query values and any password replaced.
    func url(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return unparsedURLText(url.absoluteString)
        }
        var changed = false
        if components.password != nil {
            components.password = Self.placeholder
            changed = true
        } else if components.user != nil {
            // A user part without a password is usually a token by itself (`https://<token>@host/`).
            components.user = Self.placeholder
            changed = true
        }
        if let items = components.queryItems {
            // A secret name's value goes; so do secret pairs inside another value (a return URL,
            // `?next=https%3A%2F%2Fapp%2Fcb%3Faccess_token%3D…`).
            let redacted = items.map { item -> URLQueryItem in
                if isSecret(item.name) { return URLQueryItem(name: item.name, value: Self.placeholder) }
                guard let value = item.value, value.contains("=") else { return item }
                return URLQueryItem(name: item.name, value: redactText(value))
            }
            if redacted != items {
                components.queryItems = redacted
                changed = true
            }
        }
        // Path parameters (`/app;jsessionid=…`) are pairs too, each segment's on its own (a
        // value ends with its segment).
        if components.path.contains(";"), components.path.contains("=") {
            let path = components.path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                segment.contains("=") ? redactText(String(segment)) : String(segment)
            }.joined(separator: "/")
            if path != components.path {
                components.path = path
                changed = true
            }
        }
        // An OAuth implicit-flow callback carries its token in the fragment (`#access_token=…`).
        if let fragment = components.fragment, fragment.contains("=") {
            let redacted = redactText(fragment)
            if redacted != fragment {
                components.fragment = redacted
                changed = true
            }
        }
        return changed ? (components.string ?? unparsedURLText(url.absoluteString)) : url.absoluteString
    }

    /// Text meant as a URL (a `Location`, a configured base URL), as it may appear in an error:
    /// its credentials and secret query values redacted, whether or not it parses.
    func urlText(_ text: String) -> String {
        if let url = URL(string: text) { return self.url(url) }
        return unparsedURLText(text)
    }

    /// Text that does not parse as a URL, as an error may show it: the values of secret
    /// `name=value` pairs, and everything between the scheme and the last `@`, replaced.
    ///
    /// The user part is found by its place rather than asked of `URLComponents`: URL parsers
    /// disagree on such text, and a password that made it unparsable may hold `/`, `?` or `#`
    /// itself (more redacted beats a password shown).
    func unparsedURLText(_ text: String) -> String {
        let pairs = redactText(text)
        guard let scheme = pairs.range(of: "://"),
            let at = pairs.range(of: "@", options: .backwards, range: scheme.upperBound..<pairs.endIndex)
        else { return pairs }
        return pairs.replacingCharacters(in: scheme.upperBound..<at.lowerBound, with: Self.placeholder)
    }

    /// The body as text, at most `limit` bytes of it, with secret JSON members (or `name=value`
    /// pairs in other text) redacted; JSON is pretty-printed when `pretty` is set.
    func bodyExcerpt(_ body: Data, limit: Int, pretty: Bool = false) -> String {
        guard !body.isEmpty else { return "" }
        let limit = Self.clamped(limit)
        // Large bodies are not parsed just to show their start; their text is redacted instead.
        if body.count <= 1_048_576, let json = try? JSONValue(parsing: body), json.isContainer {
            let redacted = redact(json)
            return Self.truncate(pretty ? redacted.prettyDescription : redacted.description, limit: limit)
        }
        let text = String(decoding: body.prefix(limit * 2), as: UTF8.self)
        return Self.truncate(redactText(text), limit: limit, totalBytes: body.count)
    }

    /// Whether the member `key` of an object with these `members` is secret: by its name, or as
    /// the value of a header written as a pair (`{"name": "X-Api-Key", "value": "…"}`, as a batch
    /// item or a HAR file has it) whose name is secret.
    private func isSecret(_ key: String, in members: [String: JSONValue]) -> Bool {
        isSecret(key) || (key == "value" && (members["name"]?.stringValue.map(isSecret) ?? false))
    }

    func redact(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            .object(
                members.reduce(into: [:]) { result, member in
                    result[member.key] = isSecret(member.key, in: members) ? .string(Self.placeholder) : redact(member.value)
                })
        case .array(let elements): .array(elements.map(redact))
        // A string can carry credentials too: an echoed URL with `?access_token=…`, or JSON text
        // such as httpbin's `data`. Only strings that could hold a pair pay for the scan.
        case .string(let text) where text.contains("=") || text.contains("\""): .string(redactText(text))
        default: value
        }
    }

    /// Redacts `"name": "value"` and `name=value` pairs whose name is secret, for text that is
    /// not complete JSON (such as a truncated body or a form).
    ///
    /// Linear in the text, whatever a server sends: a name starts where a run of name characters
    /// starts (the look-behind), so a long run without `=` is scanned once, not from each of its
    /// characters; and the result is built in one pass, not by replacing in place match by match.
    func redactText(_ text: String) -> String {
        var result = text
        for (expression, marker) in Self.pairPatterns.list {
            // Text without the pattern's marker holds no such pair: nothing to match.
            guard result.utf8.contains(marker) else { continue }
            let source = result
            let matches = expression.matches(in: source, range: NSRange(source.startIndex..., in: source))
            var redacted = ""
            var cursor = source.startIndex
            for match in matches {
                guard let whole = Range(match.range, in: source), let name = Range(match.range(at: 1), in: source),
                    whole.lowerBound >= cursor
                else { continue }
                let bare = source[name].trimmingCharacters(in: CharacterSet(charactersIn: "\":= \t"))
                // A form's names are percent-encoded: `user%5Bpassword%5D` is `user[password]`.
                guard isSecret(bare.removingPercentEncoding ?? bare) else { continue }
                if redacted.isEmpty { redacted.reserveCapacity(source.utf8.count) }
                redacted += source[cursor..<whole.lowerBound]
                redacted += source[name]
                redacted += source[name].hasPrefix("\"") ? "\"\(Self.placeholder)\"" : Self.placeholder
                cursor = whole.upperBound
            }
            guard cursor > source.startIndex else { continue }
            redacted += source[cursor...]
            result = redacted
        }
        return result
    }

    /// The two pair patterns of ``redactText(_:)``, compiled once, each with a byte every match
    /// contains: `"name": value` (a quote; the value a string, a number, `true`, `false` or
    /// `null`), then `name=value` (an equals sign).
    private static let pairPatterns = CompiledPatterns([
        (#"("[^"]*"\s*:\s*)(?:"(?:[^"\\]|\\.)*"?|-?[0-9][0-9.eE+\-]*|true|false|null)"#, UInt8(ascii: "\"")),
        (#"(?<![A-Za-z0-9_\-\.\[\]%])([A-Za-z0-9_\-\.\[\]%]+=)[^&\s]*"#, UInt8(ascii: "=")),
    ])

    /// Compiled expressions, shared by every thread: `NSRegularExpression` is immutable and
    /// documented as safe to use from several threads at once.
    private final class CompiledPatterns: @unchecked Sendable {
        let list: [(NSRegularExpression, UInt8)]

        init(_ patterns: [(String, UInt8)]) {
            list = patterns.compactMap { pattern, marker in (try? NSRegularExpression(pattern: pattern)).map { ($0, marker) } }
        }
    }

    /// A limit within `0...64 MiB`: a negative one shows nothing, a huge one cannot overflow
    /// the arithmetic on it.
    static func clamped(_ limit: Int) -> Int { min(max(limit, 0), 1 << 26) }

    /// At most `limit` bytes of `text`, cut on a character boundary, with a note of what was left out.
    static func truncate(_ text: String, limit: Int, totalBytes: Int? = nil) -> String {
        let limit = clamped(limit)
        let total = totalBytes ?? text.utf8.count
        guard total > limit else { return text }
        var cut = text.utf8.prefix(limit)
        while !cut.isEmpty, String(cut) == nil { cut = cut.dropLast() }
        return (String(cut) ?? "") + "… (\(total - cut.count) more bytes)"
    }
}

extension JSONValue {
    var isContainer: Bool {
        switch self {
        case .object, .array: true
        default: false
        }
    }

    /// Indented JSON text with sorted keys, for debug logs.
    var prettyDescription: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? description
    }
}

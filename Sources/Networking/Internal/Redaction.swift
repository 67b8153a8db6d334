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
        "functions-key", "master-key", "master_key", "masterkey", "sessid", "passcode", "app_key", "app-key", "appkey",
        "application-key", "application_key", "user_key", "mashape-key", "appwrite-key",
    ]
    /// Names secret only as a whole: as fragments they would hide `monkey`, `design` or `author`.
    /// (`key` is Google's API key parameter, `sig` an Azure shared-access signature, `sid` a
    /// session identifier in a URL; `sessid` — PHP's `PHPSESSID` — is a fragment.)
    /// OAuth's PKCE verifier and client assertions, JWT grants, one-time passwords and the
    /// `X-Auth` headers are whole names too, as is `appid` (OpenWeatherMap's API key). (`code`,
    /// an authorization code, is not: it names an API's error code as often, which a log must show.)
    static let builtInNames: Set<String> = [
        "key", "sig", "auth", "pass", "sid", "code_verifier", "assertion", "client_assertion", "jwt", "otp", "x-auth",
        "x-authentication", "authentication", "appid",
    ]

    /// The redaction with the built-in names only.
    static let standard = Redaction()

    /// Extra secret names, lower-cased, matched exactly.
    let secretFields: Set<String>

    init(secretFields: Set<String> = []) {
        self.secretFields = Set(secretFields.map { $0.lowercased() })
    }

    func isSecret(_ name: String) -> Bool {
        let lowered = name.lowercased()
        func isNamed(_ name: String) -> Bool { secretFields.contains(name) || Self.builtInNames.contains(name) }
        if isNamed(lowered) || Self.builtInFragments.contains(where: lowered.contains) { return true }
        // A query's or a form's nested name (`user[email]`, `codes[]`): each part is a name too.
        guard lowered.contains("[") else { return false }
        return lowered.split(whereSeparator: { $0 == "[" || $0 == "]" }).contains { isNamed(String($0)) }
    }

    /// A header's value for a log: hidden whole when the name is secret; otherwise with the values
    /// of secret `name=value` pairs hidden, since a `Link`, `Location` or `Referer` can carry a URL
    /// with `?access_token=…`.
    func headerValue(name: String, value: String) -> String {
        if isSecret(name) { return Self.placeholder }
        // `=` for pairs, `@` for a URL's user, `"` for JSON (`X-Context: {"session_token": …}`).
        guard value.contains("=") || value.contains("@") || value.contains("\"") else { return value }
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
        guard let text = changed ? components.string : url.absoluteString else { return unparsedURLText(url.absoluteString) }
        return redactingQuery(of: text)
    }

    /// The URL text with the values of its secret query pairs replaced, every other pair left as
    /// it was sent: rebuilding the query from decoded items would show an encoded `+` (`C%2B%2B`)
    /// as a plain one, which a server reads as a space, and a command copied from a log would
    /// search for something else.
    private func redactingQuery(of text: String) -> String {
        // The query runs from the first `?` (encoded anywhere before it) to the fragment.
        guard let mark = text.firstIndex(of: "?") else { return text }
        let start = text.index(after: mark)
        let end = text[start...].firstIndex(of: "#") ?? text.endIndex
        let query = text[start..<end]
        guard query.contains("=") else { return text }
        var changed = false
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> Substring in
            guard let redacted = redactedPair(pair) else { return pair }
            changed = true
            return redacted
        }
        return changed ? text.replacingCharacters(in: start..<end, with: pairs.joined(separator: "&")) : text
    }

    /// A query's `name=value` pair with its value replaced when the name is secret or the value
    /// holds a secret pair; `nil` when the pair is kept as it is.
    private func redactedPair(_ pair: Substring) -> Substring? {
        guard let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals]
        if isSecret(name.removingPercentEncoding ?? String(name)) { return name + "=" + Self.encodedPlaceholder }
        // Secret pairs inside a value go too (a return URL, `?next=https%3A%2F%2Fapp%2Fcb%3Faccess_token%3D…`).
        let value = pair[pair.index(after: equals)...]
        guard let decoded = value.removingPercentEncoding else {
            // Not UTF-8 once decoded: unreadable, so hidden whole when it could hold a pair.
            return value.range(of: "%3D", options: .caseInsensitive) == nil ? nil : name + "=" + Self.encodedPlaceholder
        }
        guard decoded.contains("=") || decoded.contains("@") else { return nil }
        let redacted = redactText(decoded)
        guard redacted != decoded else { return nil }
        return name + "=" + (redacted.addingPercentEncoding(withAllowedCharacters: Self.queryValueAllowed) ?? Self.encodedPlaceholder)
    }

    /// The placeholder as a query value carries it.
    private static let encodedPlaceholder = "%3Credacted%3E"
    /// What a query value may hold unencoded: what a query may, but the pair and form separators.
    private static let queryValueAllowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))

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
        // UTF-16 or UTF-32 (JSON may come so, and the decoder reads it) is redacted as UTF-8: read
        // byte by byte, its names have NULs between their letters and would match nothing. Other
        // bytes with a NUL at the start are no text: shown by their count only.
        if body.prefix(4).contains(0) || body.starts(with: [0xFE, 0xFF]) || body.starts(with: [0xFF, 0xFE]) {
            guard body.count <= Self.largestTranscodedBody,
                let text = try? FastJSONDecoder.withUTF8(of: body, { Data($0) }), !text.prefix(4).contains(0), text != body
            else { return "<\(body.count) bytes, not UTF-8 text>" }
            return bodyExcerpt(text, limit: limit, pretty: pretty)
        }
        let limit = Self.clamped(limit)
        // Large bodies are not parsed just to show their start, nor deeply nested ones (redacting
        // and printing a value recurse once per level, and a server chooses the depth): their
        // text is redacted instead.
        if body.count <= 1_048_576, Self.nests(body, atMost: Self.maximumParsedDepth), let json = try? JSONValue(parsing: body),
            json.isContainer
        {
            let redacted = redact(json)
            return pretty ? redacted.prettyDescription(limit: limit) : Self.truncate(redacted.description, limit: limit)
        }
        let text = String(decoding: body.prefix(limit * 2), as: UTF8.self)
        return Self.truncate(redactText(text), limit: limit, totalBytes: body.count)
    }

    /// The largest body in UTF-16 or UTF-32 turned into UTF-8 to be shown: 4 MiB.
    static let largestTranscodedBody = 4 << 20

    /// The deepest body parsed to be redacted member by member: far deeper than an error body
    /// needs, and shallow enough for the recursion of redacting and printing on any thread.
    static let maximumParsedDepth = 32

    /// Whether the arrays and objects in `body` nest at most `limit` levels deep (brackets in
    /// strings aside); one pass that stops at the first level too deep.
    static func nests(_ body: Data, atMost limit: Int) -> Bool {
        var depth = 0
        var strings = JSONStringTracker()
        for byte in body where !strings.consume(byte) {
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return false }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return true
    }

    /// Whether the arrays and objects in `value` nest at most `limit` levels deep; without recursion.
    static func nests(_ value: JSONValue, atMost limit: Int) -> Bool {
        var pending: [(value: JSONValue, depth: Int)] = [(value, 0)]
        while let (value, depth) = pending.popLast() {
            let children: [JSONValue]
            switch value {
            case .array(let elements): children = elements
            case .object(let members): children = Array(members.values)
            default: continue
            }
            guard depth < limit else { return false }
            pending += children.map { ($0, depth + 1) }
        }
        return true
    }

    /// Whether the member `key` of an object with these `members` is secret: by its name, or as
    /// the value of a setting written as a pair whose name is secret — `{"name": "X-Api-Key",
    /// "value": "…"}` as a batch item or a HAR file has it, `{"key": …, "value": …}` as Postman
    /// does, `{"Key": "app/db_password", "Value": …}` as Consul and AWS do, in any case.
    private func isSecret(_ key: String, in members: [String: JSONValue]) -> Bool {
        if isSecret(key) { return true }
        guard key.lowercased() == "value" else { return false }
        return members.contains { name, value in
            ["name", "key"].contains(name.lowercased()) && (value.stringValue.map(isSecret) ?? false)
        }
    }

    func redact(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            .object(
                members.reduce(into: [:]) { result, member in
                    result[member.key] = isSecret(member.key, in: members) ? .string(Self.placeholder) : redact(member.value)
                })
        case .array(let elements): .array(elements.map(redact))
        // A string can carry credentials too: an echoed URL with `?access_token=…` or a password
        // (`postgres://app:…@db/app`), or JSON text such as httpbin's `data`. Only strings that
        // could hold one pay for the scan.
        case .string(let text) where text.contains("=") || text.contains("\"") || text.contains("@"): .string(redactText(text))
        default: value
        }
    }

    /// Redacts `"name": "value"` and `name=value` pairs whose name is secret, for text that is
    /// not complete JSON (such as a truncated body or a form).
    ///
    /// Linear in the text, whatever a server sends: a name starts where a run of name characters
    /// starts (the look-behind), so a long run without `=` is scanned once, not from each of its
    /// characters; and the result is built in one pass, not by replacing in place match by match.
    ///
    /// The patterns find names only; a secret name's value is measured here, so that a value
    /// that is no secret is scanned for pairs as well (`lang=en;jsessionid=…`), and a secret JSON
    /// member goes whole whatever its value (an array or object to its closing bracket, or to the
    /// end of text cut short).
    func redactText(_ text: String) -> String {
        var result = Self.redactingUserInfo(in: text)
        for (expression, marker) in Self.pairPatterns.list {
            // Text without the pattern's marker holds no such pair: nothing to match.
            guard result.utf8.contains(marker) else { continue }
            let source = result
            let isJSON = marker == UInt8(ascii: "\"")
            let matches = expression.matches(in: source, range: NSRange(source.startIndex..., in: source))
            var redacted = ""
            var cursor = source.startIndex
            for match in matches {
                guard let name = Range(match.range, in: source), name.lowerBound >= cursor else { continue }
                let bare = Self.unescaped(source[name].trimmingCharacters(in: CharacterSet(charactersIn: "\":= \t\r\n")))
                // A form's names are percent-encoded: `user%5Bpassword%5D` is `user[password]`.
                guard isSecret(bare.removingPercentEncoding ?? bare) else { continue }
                if redacted.isEmpty { redacted.reserveCapacity(source.utf8.count) }
                redacted += source[cursor..<name.upperBound]
                redacted += isJSON ? "\"\(Self.placeholder)\"" : Self.placeholder
                cursor =
                    isJSON ? Self.jsonValueEnd(in: source, from: name.upperBound) : Self.pairValueEnd(in: source, from: name.upperBound)
            }
            guard cursor > source.startIndex else { continue }
            redacted += source[cursor...]
            result = redacted
        }
        return result
    }

    /// A JSON member's name as its escapes spell it (`to\u006ben` is `token`); any other as it is.
    private static func unescaped(_ name: String) -> String {
        guard name.contains("\\") else { return name }
        return (try? JSONValue(parsing: Data("\"\(name)\"".utf8)))?.stringValue ?? name
    }

    /// `text` with the user part of each URL in it replaced (`postgres://app:s3cr3t@db/app`,
    /// `?next=https://u:p@host`): a password, or a token given as the user.
    static func redactingUserInfo(in text: String) -> String {
        guard text.contains("://"), text.contains("@"), let (expression, _) = userInfoPattern.list.first else { return text }
        var result = ""
        var cursor = text.startIndex
        // Linear: a user part holds no `/`, so each match ends before the next `://`.
        for match in expression.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            guard let range = Range(match.range, in: text), range.lowerBound >= cursor else { continue }
            result += text[cursor..<range.lowerBound]
            result += placeholder
            cursor = range.upperBound
        }
        return cursor == text.startIndex ? text : result + text[cursor...]
    }

    /// A URL's user part: after a scheme's `://`, up to the `@` before its host.
    private static let userInfoPattern = CompiledPatterns([(#"(?<=[A-Za-z0-9+.\-]://)[^/?#@\s"'<>\\]+(?=@)"#, UInt8(ascii: "@"))])

    /// The two name patterns of ``redactText(_:)``, compiled once, each with a byte every match
    /// contains: `"name": ` (a quote), then `name=` (an equals sign).
    private static let pairPatterns = CompiledPatterns([
        (#""[^"]*"\s*:\s*"#, UInt8(ascii: "\"")),
        (#"(?<![A-Za-z0-9_\-\.\[\]%])[A-Za-z0-9_\-\.\[\]%]+="#, UInt8(ascii: "=")),
    ])

    /// Where a `name=value` pair's value ends: at the next `&`, space, tab, CR or LF, or past the
    /// closing quote of a quoted value (`password="two words"`, as a `WWW-Authenticate` or a
    /// `Digest` has them). (A secret value keeps a `;` or `,` it holds: more hidden beats part of
    /// a token shown.)
    private static func pairValueEnd(in text: String, from start: String.Index) -> String.Index {
        // A quoted value ends as a JSON string does: past its closing quote, escapes skipped.
        if start < text.utf8.endIndex, text.utf8[start] == UInt8(ascii: "\"") { return jsonValueEnd(in: text, from: start) }
        return firstIndex(in: text, from: start, of: pairEnds)
    }

    /// The first index from `start` of a byte in `ends`, or the end of the text.
    private static func firstIndex(in text: String, from start: String.Index, of ends: Set<UInt8>) -> String.Index {
        text.utf8[start...].firstIndex(where: ends.contains) ?? text.endIndex
    }

    private static let pairEnds: Set<UInt8> = [
        UInt8(ascii: "&"), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"),
    ]
    private static let literalEnds: Set<UInt8> = pairEnds.union([UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")])

    /// Where the JSON value starting at `start` ends: past its closing quote or bracket (strings
    /// inside skipped whole), at the end of text cut short, or, for a number or literal, at the
    /// next delimiter.
    private static func jsonValueEnd(in text: String, from start: String.Index) -> String.Index {
        let bytes = text.utf8
        var index = start
        guard index < bytes.endIndex else { return index }
        guard [UInt8(ascii: "\""), UInt8(ascii: "["), UInt8(ascii: "{")].contains(bytes[index]) else {
            return firstIndex(in: text, from: start, of: literalEnds)
        }
        var depth = 0
        var strings = JSONStringTracker()
        while index < bytes.endIndex {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            if strings.consume(byte) {
                // A string that is the whole value ends at its closing quote.
                if !strings.inString, depth == 0 { return index }
            } else if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") {
                depth += 1
            } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                depth -= 1
                if depth <= 0 { return index }
            }
        }
        return index
    }

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

    /// Indented JSON text with sorted keys, for debug logs, cut after `limit` bytes as
    /// ``Redaction/truncate(_:limit:totalBytes:)`` cuts (the bytes left out counted).
    ///
    /// Only what is shown is built: indentation grows with depth, so a 1 MiB document nested 256
    /// deep would indent to hundreds of megabytes. The compact text is indented as it is read.
    func prettyDescription(limit: Int) -> String {
        let limit = Redaction.clamped(limit)
        let compact = Array((try? encoded()) ?? Data("null".utf8))
        // A few bytes past the limit, so the character the cut falls in is whole.
        let kept = limit &+ 4
        var output: [UInt8] = []
        output.reserveCapacity(min(kept, compact.count &* 2))
        var total = 0
        var depth = 0
        func emit(_ byte: UInt8) {
            total &+= 1
            if output.count < kept { output.append(byte) }
        }
        func newline() {
            total &+= 1 &+ 2 &* depth
            guard output.count < kept else { return }
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: min(2 &* depth, kept &- output.count)))
        }
        var strings = JSONStringTracker()
        var index = 0
        while index < compact.count {
            let byte = compact[index]
            index &+= 1
            if strings.consume(byte) {
                emit(byte)
                continue
            }
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                emit(byte)
                if index < compact.count, compact[index] == byte &+ 2 {
                    // An empty container stays on its line: `{}`, `[]`.
                    emit(compact[index])
                    index &+= 1
                } else {
                    depth &+= 1
                    newline()
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth &-= 1
                newline()
                emit(byte)
            case UInt8(ascii: ","):
                emit(byte)
                newline()
            case UInt8(ascii: ":"):
                emit(UInt8(ascii: " "))
                emit(byte)
                emit(UInt8(ascii: " "))
            default:
                emit(byte)
            }
        }
        return Redaction.truncate(String(decoding: output, as: UTF8.self), limit: limit, totalBytes: total)
    }
}

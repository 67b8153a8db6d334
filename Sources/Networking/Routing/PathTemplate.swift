import Foundation

/// A route's path with placeholders, such as `books/:id`, `meetings/{meeting.id}/notes` or
/// `categories/:itemID\.json`, filled in from a dictionary or an `Encodable` object.
///
/// Syntax:
/// - `:name` or `{name}`: a placeholder. A `:name` starts with a letter or `_` and holds letters,
///   digits, `_` and dots; a `{name}` may also hold other characters but braces, `/` and spaces
///   (OpenAPI's `{user-id}`), and does not start with a digit. A dotted name is looked up as one
///   key first (OpenAPI's `{post.id}` with `["post.id": 5]`), else its dots walk into nested
///   values (`:meeting.id`). `:8080` or `://` are literal text, so absolute URLs such as
///   `https://files.example.com/:name` work.
/// - `\`: ends a `:name` placeholder and makes the next character literal, for text right after
///   it (`:itemID\.json` → `1234.json`; WANetworkRouting's escape); `\:` is a literal colon. In a
///   JSON route file the backslash itself is escaped: `"categories/:itemID\\.json"`.
///
/// Values: strings as they are, numbers and booleans in their JSON form. Each value is
/// percent-encoded as one path segment (a `/` in a value is sent as `%2F`), so a value can never
/// change the path's shape; after a `?` in the template, as one query component (`&`, `=` and `+`
/// encoded too), so it cannot add query items; in the host of an absolute template
/// (`https://{tenant}.example.com/`), with only letters, digits and `-._~` kept, so it cannot add a
/// user, password or port. The one exception, which a route opts into by its
/// template: a template that starts with `:baseURL` takes an absolute `http` or `https` URL there,
/// kept whole (WebApiClient's `:baseURL/reports`), so the route names its server at call time; a
/// URL with a user, query or fragment is refused, and the session still signs only requests to its
/// own hosts. A missing, `null`, empty, object or array value is an error naming
/// the placeholder — never `(null)` or an empty segment — and so is a value that makes a path
/// segment `.` or `..` (before any `;`, which servers such as Tomcat cut off): those are dot
/// segments, which servers and proxies remove (or resolve to the parent folder) even when sent
/// percent-encoded, so they would change the path's shape. A template may not hold a `#` (a
/// request sends no fragment; write `%23` for the character) or, when absolute, a user.
///
/// The template's own text is sent as written where a URL may hold it (`%` before two hexadecimal
/// digits included), and percent-encoded elsewhere: a space, `|`, non-ASCII text, a lone `%`, and
/// `[` or `]` before the `?`. A template that starts with neither `http://`, `https://` nor
/// `:baseURL` stays under the base URL, whatever its values or text look like: its own text may
/// hold no `..` segment either (`%2E%2E` included), and a `}` is written `\}`. One that starts
/// with another scheme (`wss://`, `ftp://`) is refused.
public struct PathTemplate: Sendable, Hashable, CustomStringConvertible {
    /// A piece of the template.
    enum Part: Sendable, Hashable {
        case literal(String)
        case variable(String)
    }

    /// The template as written.
    public let text: String
    let parts: [Part]

    /// Parses a template.
    ///
    /// - Throws: ``RepositoryError/invalidConfiguration(reason:)`` for a `{` without its `}` (or a
    ///   `}` without its `{`), an empty or invalid placeholder name (RFC 6570 operators such as
    ///   `{?page}` included), a `\` at the end, a `#`, a user in an absolute URL, a scheme other
    ///   than `http` or `https` (`wss://`, `ftp://`), or a `..` segment in a path under the base URL.
    public init(_ text: String) throws(RepositoryError) {
        self.text = text
        if let scheme = Self.otherScheme(of: text) {
            throw .invalidConfiguration(
                reason: "the path \"\(Redaction.standard.unparsedURLText(text))\" names the scheme \"\(scheme)\": "
                    + "a call goes over http or https (without it, the text would be read as a path under the base URL)")
        }
        parts = try Self.parse(text)
        if !namesItsServer, Self.hasLiteralDotSegment(parts) {
            throw .invalidConfiguration(
                reason: "the path \"\(Redaction.standard.unparsedURLText(text))\" has a \"..\" segment, "
                    + "which servers resolve, so the request would leave the base URL's path")
        }
    }

    /// The names of the placeholders, in order.
    public var variables: [String] {
        parts.compactMap {
            if case .variable(let name) = $0 { return name }
            return nil
        }
    }

    /// The template as written (``text``).
    public var description: String { text }

    /// The path with every placeholder replaced by its percent-encoded value.
    ///
    /// - Parameter values: the values by name; a name is looked up as a plain key first (OpenAPI's
    ///   `{post.id}` with `["post.id": 5]`), and a dotted one not found so is walked as a key path.
    /// - Throws: a reason naming the placeholder whose value is missing, empty, not a scalar, or
    ///   `.` or `..` in a path segment.
    func render(_ values: JSONValue) throws(PathTemplateError) -> String {
        var path = ""
        var inQuery = false
        // The path segment being written, unencoded, and the last value written into it: "." and
        // ".." are dot segments (RFC 3986 §3.3) however they are encoded — "%2E" is an unreserved
        // character percent-encoded, which normalisers such as nginx decode (§2.3, §6.2.2) and
        // then remove as a dot segment — so a segment a value made one is refused.
        var segment = ""
        var segmentValue: (name: String, text: String)?
        func endSegment() throws(PathTemplateError) {
            if let value = segmentValue, Self.isDotSegment(segment) { throw .dotSegment(value.name, value.text) }
            segment = ""
            segmentValue = nil
        }
        // In an absolute template, the slashes seen so far: after the second and before the third,
        // a value is in the host (`https://{tenant}.example.com/`).
        var slashes = RequestBuilder.isAbsolute(text) ? 0 : Int.min
        for (index, part) in parts.enumerated() {
            switch part {
            case .literal(let text):
                path += text
                guard !inQuery else { continue }
                // The template's text is percent-encoded already: its segment counts decoded
                // (`{x}%2E` with "." is "..").
                var written = ""
                for character in text {
                    if character == "/" { slashes &+= 1 }
                    if character == "/" || character == "?" {
                        segment += Self.decoded(written)
                        written = ""
                        try endSegment()
                        if character != "/" {
                            inQuery = true
                            break
                        }
                    } else {
                        written.append(character)
                    }
                }
                segment += Self.decoded(written)
            case .variable(let name):
                guard let value = values.value(atKeyPath: name) else { throw .missing(name) }
                let text = try Self.text(of: value, name: name, inQuery: inQuery)
                if index == 0, name == "baseURL", self.text.hasPrefix(":baseURL") {
                    guard (try? BaseURLText.components(of: text)) != nil else { throw .notBaseURL(name) }
                    // The next part's "/" joins it: "https://host/" + "/reports" would leave "//".
                    path += parts.count > 1 && text.hasSuffix("/") ? String(text.dropLast()) : text
                } else if inQuery || slashes == 2 {
                    // A query component, or part of a host: only unreserved characters are kept,
                    // so a value can add no query item, user, password or port.
                    path += PathEncoding.encodeQueryComponent(text)
                } else {
                    segment += text
                    segmentValue = (name, text)
                    path += PathEncoding.encodeSegmentValue(text)
                }
            }
        }
        if !inQuery { try endSegment() }
        return path
    }

    /// Whether a path segment holds a dot segment, `.` or `..`, to a server: servers such as
    /// Tomcat cut a segment's `;` parameters before resolving it, so `..;x` counts too, and a
    /// value's `/` or `\`, though encoded, is decoded into a separator by servers such as nginx
    /// (and IIS), so `../../admin` would climb two levels. Bytes, not characters: servers compare
    /// bytes, and a `/` followed by a combining mark is one `Character` in Swift.
    ///
    /// With `parentOnly`, only `..` counts: a template's own `.` (`./users`) names the folder it
    /// is in, so it cannot leave the base URL's path.
    private static func isDotSegment(_ segment: String, parentOnly: Bool = false) -> Bool {
        let dot = UInt8(ascii: ".")
        return segment.utf8.split(omittingEmptySubsequences: false) { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }
            .contains { piece in
                let name = piece.prefix { $0 != UInt8(ascii: ";") }
                return (!parentOnly && name.elementsEqual([dot])) || name.elementsEqual([dot, dot])
            }
    }

    /// Percent-encoded text as a server reads it (`%2E` is a `.`). An escape that is not one
    /// (`%zz`) stays as written, and bytes that are not UTF-8 (`%FF`) become U+FFFD, so that the
    /// `.`, `/` and `\` escaped beside them still count (`%2E%2E%2F%FF`). Text without a `%`,
    /// most of every call's path, is not copied.
    private static func decoded(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        if let decoded = text.removingPercentEncoding { return decoded }
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let high = bytes[index + 1].asciiHexValue,
                let low = bytes[index + 2].asciiHexValue
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    /// Whether the template's own text holds a `..` segment in its path (`../admin`, `a/%2E%2E/b`,
    /// or one escaped beside a value, `{x}%2F..%2Fadmin`), which servers resolve, so the request
    /// would leave the base URL's path. A piece that touches a value is checked with the value,
    /// at the call.
    private static func hasLiteralDotSegment(_ parts: [Part]) -> Bool {
        // The path segment being read: its literal runs, between its values.
        var runs = [""]
        func holdsDotSegment() -> Bool {
            runs.indices.contains { index in
                var pieces = decoded(runs[index]).utf8.split(omittingEmptySubsequences: false) {
                    $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\")
                }[...]
                // The piece next to a value is completed by it.
                if index > 0 { pieces = pieces.dropFirst() }
                if index < runs.count - 1 { pieces = pieces.dropLast() }
                return pieces.contains { isDotSegment(String(decoding: $0, as: UTF8.self), parentOnly: true) }
            }
        }
        for part in parts {
            guard case .literal(let text) = part else {
                runs.append("")
                continue
            }
            for character in text {
                guard character == "/" || character == "?" else {
                    runs[runs.count - 1].append(character)
                    continue
                }
                if holdsDotSegment() { return true }
                if character == "?" { return false }
                runs = [""]
            }
        }
        return holdsDotSegment()
    }

    /// A value's text; an empty string is refused in a path (it would leave an empty segment),
    /// not in the query.
    private static func text(of value: JSONValue, name: String, inQuery: Bool) throws(PathTemplateError) -> String {
        switch value {
        case .string(let text):
            guard !text.isEmpty || inQuery else { throw .empty(name) }
            return text
        case .int(let number): return String(number)
        case .double(let number): return QueryEncoding.text(of: number)
        case .bool(let flag): return flag ? "true" : "false"
        case .null: throw .missing(name)
        case .array, .object: throw .notScalar(name, value.kindDescription)
        }
    }

    /// The scheme of a template that starts with one other than `http` or `https` and `://`
    /// (`wss://stream.example.com/feed`), or `nil`. A colon without `//` is a path's
    /// (`books:batchGet`, `:id`).
    private static func otherScheme(of text: String) -> String? {
        guard !RequestBuilder.isAbsolute(text), let end = text.range(of: "://") else { return nil }
        // RFC 3986 §3.1: a letter, then letters, digits, "+", "-" and ".".
        let scheme = text[..<end.lowerBound].utf8
        func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) }
        guard let first = scheme.first, isLetter(first),
            scheme.allSatisfy({ isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || "+-.".utf8.contains($0) })
        else { return nil }
        return String(text[..<end.lowerBound])
    }

    /// Whether the template says which server its calls go to: it starts with `http://` or
    /// `https://`, or with `:baseURL` (filled with an absolute URL). Any other is under the base URL.
    var namesItsServer: Bool {
        RequestBuilder.isAbsolute(text) || (text.hasPrefix(":baseURL") && parts.first == .variable("baseURL"))
    }

    private static func parse(_ text: String) throws(RepositoryError) -> [Part] {
        let shown = Redaction.standard.unparsedURLText(text)
        // The transport never sends a fragment, so the query added after one would be lost.
        if text.contains("#") {
            throw .invalidConfiguration(
                reason: "the path \"\(shown)\" has a \"#\": a request sends no fragment (write %23 for the character)")
        }
        if RequestBuilder.isAbsolute(text), let scheme = text.range(of: "://"),
            text[scheme.upperBound...].prefix(while: { $0 != "/" && $0 != "?" }).contains("@")
        {
            throw .invalidConfiguration(reason: "the path \"\(shown)\" names a user: give credentials through the session or headers")
        }
        var parts: [Part] = []
        var literal = ""
        var characters = Array(text)[...]
        // An absolute template's authority: from after "://" to the next "/" or "?".
        var authorityEnd = characters.startIndex
        if RequestBuilder.isAbsolute(text), let colon = characters.firstIndex(of: ":") {
            let start = min(colon + 3, characters.endIndex)
            authorityEnd = characters[start...].firstIndex { $0 == "/" || $0 == "?" } ?? characters.endIndex
        }
        func flush() {
            if !literal.isEmpty { parts.append(.literal(literal)) }
            literal = ""
        }
        // The template's own text, as a URL holds it: what no URL may hold unencoded (a space,
        // `|`, non-ASCII) is percent-encoded past the host, and a `%` too unless two hexadecimal
        // digits follow it (text encoded already).
        var inQuery = false
        // Braces written `\{`, whose `}` may follow unescaped (`\{x}` is the text "{x}").
        var escapedBraces = 0
        func appendText(_ character: Character) {
            guard characters.startIndex > authorityEnd else { return literal.append(character) }
            if character == "?" { inQuery = true }
            literal += PathEncoding.encodeTemplateText(character, followedBy: characters.prefix(2), inQuery: inQuery)
        }
        while let character = characters.popFirst() {
            switch character {
            case "\\":
                guard let escaped = characters.popFirst() else {
                    throw .invalidConfiguration(reason: "the path \"\(shown)\" ends with a lone \"\\\"")
                }
                if escaped == "{" { escapedBraces &+= 1 }
                if escaped == "}", escapedBraces > 0 { escapedBraces &-= 1 }
                appendText(escaped)
            case "[" where characters.startIndex <= authorityEnd:
                // An IPv6 host (`http://[2001:db8::1]/`): its colons are not placeholders.
                guard let close = characters.firstIndex(of: "]"), close < authorityEnd else {
                    throw .invalidConfiguration(reason: "the path \"\(shown)\" has a \"[\" without its \"]\" in its host")
                }
                literal.append(character)
                literal.append(contentsOf: characters[...close])
                characters = characters[(close + 1)...]
            case ":" where characters.first.map(isNameStart) == true:
                flush()
                // Dots that end the name belong to the text after it (`:id.` is rare; write
                // `:id\.`): they are held until a name character follows them.
                var name = ""
                var dots = 0
                while let next = characters.first, isNameCharacter(next) {
                    characters.removeFirst()
                    if next == "." {
                        dots += 1
                    } else {
                        name += String(repeating: ".", count: dots)
                        dots = 0
                        name.append(next)
                    }
                }
                parts.append(.variable(name))
                literal = String(repeating: ".", count: dots)
            case "{":
                flush()
                var name = ""
                var closed = false
                while let next = characters.popFirst() {
                    if next == "}" {
                        closed = true
                        break
                    }
                    name.append(next)
                }
                guard closed else { throw .invalidConfiguration(reason: "the path \"\(shown)\" has a \"{\" without its \"}\"") }
                // OpenAPI's names may hold "-" and more: anything but braces, "/" and spaces.
                // An RFC 6570 operator (`{?page}`, `{+path}`) is not supported: it would fail every call.
                if let first = name.first, "+#/;?&=,!@|".contains(first) {
                    throw .invalidConfiguration(
                        reason:
                            "the path \"\(shown)\" has \"{\(name)}\", an RFC 6570 operator, which templates do not support: write ?page={page}, or pass the value in parameters: or query:"
                    )
                }
                guard let first = name.first, !first.isNumber, first != ".", !name.hasSuffix("."),
                    name.allSatisfy({ $0 != "{" && $0 != "/" && !$0.isWhitespace })
                else {
                    throw .invalidConfiguration(
                        reason: "the path \"\(shown)\" has an invalid placeholder \"{\(name)}\": a name such as {id} or {meeting.id}")
                }
                parts.append(.variable(name))
            case "}" where escapedBraces > 0:
                escapedBraces &-= 1
                appendText(character)
            case "}":
                throw .invalidConfiguration(
                    reason: "the path \"\(shown)\" has a \"}\" without its \"{\": write \"\\}\" for the character")
            default:
                appendText(character)
            }
        }
        flush()
        return parts
    }
}

private func isNameStart(_ character: Character) -> Bool {
    character == "_" || (character.isASCII && character.isLetter)
}

private func isNameCharacter(_ character: Character) -> Bool {
    character == "_" || character == "." || (character.isASCII && (character.isLetter || character.isNumber))
}

/// Why a template could not be filled in.
enum PathTemplateError: Error, Equatable {
    case missing(String)
    case empty(String)
    case notScalar(String, String)
    case notBaseURL(String)
    case dotSegment(String, String)

    /// A sentence naming the placeholder, for a route's error.
    var reason: String {
        switch self {
        case .missing(let name): "the path variable \"\(name)\" is missing (or null)"
        case .empty(let name): "the path variable \"\(name)\" is empty, which would leave an empty path segment"
        case .notScalar(let name, let kind): "the path variable \"\(name)\" is \(kind), not a string, number or boolean"
        case .dotSegment(let name, let value):
            "the path variable \"\(name)\" is \"\(value)\", which would be read as a dot segment and change the path"
        case .notBaseURL(let name):
            "the path variable \"\(name)\" must be an absolute http or https URL without a user, query or fragment"
        }
    }
}

import Foundation

/// Keeps credentials out of error descriptions, logs and decoding reports.
///
/// A name is sensitive when, lower-cased, it contains one of ``sensitiveFragments`` (so
/// `access_token`, `X-Refresh-Token` and `client_secret` all are). Sensitive header values, query
/// values and JSON members are replaced by `<redacted>`.
enum Redaction {
    static let placeholder = "<redacted>"
    static let sensitiveFragments = [
        "token", "password", "passwd", "secret", "authorization", "cookie", "api_key", "apikey", "api-key",
        "signature", "session",
    ]

    static func isSensitive(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return sensitiveFragments.contains { lowered.contains($0) }
    }

    static func headerValue(name: String, value: String) -> String {
        isSensitive(name) ? placeholder : value
    }

    /// The URL as text with sensitive query values and any password replaced.
    static func url(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        var changed = false
        if components.password != nil {
            components.password = placeholder
            changed = true
        }
        if let items = components.queryItems, items.contains(where: { isSensitive($0.name) }) {
            components.queryItems = items.map {
                isSensitive($0.name) ? URLQueryItem(name: $0.name, value: placeholder) : $0
            }
            changed = true
        }
        return changed ? (components.string ?? url.absoluteString) : url.absoluteString
    }

    /// The body as text, at most `limit` bytes of it, with sensitive JSON members (or
    /// `name=value` pairs in other text) redacted.
    static func bodyExcerpt(_ body: Data, limit: Int) -> String {
        guard !body.isEmpty else { return "" }
        if let json = try? JSONValue(parsing: body), json.isContainer {
            return truncate(redact(json).description, limit: limit)
        }
        let text = String(decoding: body.prefix(limit * 2), as: UTF8.self)
        return truncate(redactText(text), limit: limit, totalBytes: body.count)
    }

    static func redact(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            .object(members.reduce(into: [:]) { result, member in
                result[member.key] = isSensitive(member.key) ? .string(placeholder) : redact(member.value)
            })
        case .array(let elements): .array(elements.map(redact))
        // A string can carry credentials too: an echoed URL with `?access_token=…`, or JSON text
        // such as httpbin's `data`. Only strings that could hold a pair pay for the scan.
        case .string(let text) where text.contains("=") || text.contains("\""): .string(redactText(text))
        default: value
        }
    }

    /// Redacts `"name": "value"` and `name=value` pairs whose name is sensitive, for text that is
    /// not complete JSON (such as a truncated body).
    static func redactText(_ text: String) -> String {
        var result = text
        for pattern in [#"("[^"]*"\s*:\s*)"(?:[^"\\]|\\.)*"?"#, #"([A-Za-z0-9_\-]+=)[^&\s]*"#] {
            guard let expression = try? NSRegularExpression(pattern: pattern) else { continue }
            let matches = expression.matches(in: result, range: NSRange(result.startIndex..., in: result))
            for match in matches.reversed() {
                guard let whole = Range(match.range, in: result), let name = Range(match.range(at: 1), in: result),
                    isSensitive(String(result[name]))
                else { continue }
                let quoted = result[name].hasPrefix("\"")
                result.replaceSubrange(whole, with: result[name] + (quoted ? "\"\(placeholder)\"" : placeholder))
            }
        }
        return result
    }

    static func truncate(_ text: String, limit: Int, totalBytes: Int? = nil) -> String {
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
}

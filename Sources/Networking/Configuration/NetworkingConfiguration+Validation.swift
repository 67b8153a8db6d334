import Foundation

extension NetworkingConfiguration {
    /// `scheme://host[:port][path]`, or the error naming the setting that keeps it from being made.
    static func makeBaseURL(_ secure: Bool, _ domain: String, _ port: Int?, _ subdomain: String?) throws(RepositoryError) -> URL {
        let host = try validatedHost(domain)
        let path = try validatedSubdomain(subdomain)
        if let port, !(1...65535).contains(port) {
            throw .invalidConfiguration(reason: "port \(port) is outside 1...65535")
        }
        let scheme = secure ? "https" : "http"
        let authority = port.map { "\(host):\($0)" } ?? host
        guard let baseURL = URL(string: "\(scheme)://\(authority)\(path)") else {
            throw .invalidConfiguration(reason: "\(scheme)://\(authority)\(path) is not a valid URL")
        }
        return baseURL
    }

    /// What is wrong with the settings that have no derived state, or `nil`: every number a
    /// caller can set is checked here, so that none can trap later.
    static func settingsProblem(of configuration: NetworkingConfiguration) -> String? {
        let timeout = configuration.timeout
        guard timeout > 0, timeout.isFinite else {
            return "timeout must be a positive number of seconds, not \(timeout)"
        }
        if let idle = configuration.idleTimeout, !(idle > 0) {
            return "idleTimeout must be a positive number of seconds or nil, not \(idle)"
        }
        let poll = configuration.secondsBetweenPolls
        guard poll >= 0, poll.isFinite else {
            return "secondsBetweenPolls must be zero or a positive number of seconds, not \(poll)"
        }
        if let retries = configuration.maximumPollingRetries, retries < 0 {
            return "maximumPollingRetries must not be negative, not \(retries)"
        }
        if let problem = HeaderValidation.problem(in: configuration.defaultHeaders) {
            return "defaultHeaders: \(problem)"
        }
        if let problem = configuration.retryPolicy.problem { return "retryPolicy: \(problem)" }
        for host in configuration.sessionHosts where (try? validatedHost(host)) == nil {
            return "sessionHosts: \"\(shown(host))\" is not a host name or address: give the host alone, as in \"files.example.com\""
        }
        if configuration.logging.bodyLimit < 0 {
            return "logging.bodyLimit must not be negative, not \(configuration.logging.bodyLimit)"
        }
        return nil
    }

    /// The host as it goes into a URL (IPv6 addresses in brackets), or an error saying what is wrong.
    static func validatedHost(_ domain: String) throws(RepositoryError) -> String {
        guard !domain.isEmpty else {
            throw .invalidConfiguration(reason: "domainURL is empty: give a host such as \"api.example.com\"")
        }
        if domain.contains("://") {
            throw .invalidConfiguration(
                reason: "domainURL \"\(shown(domain))\" contains a scheme: give the host alone and set useSecureConnection for https")
        }
        if domain.contains("/") {
            throw .invalidConfiguration(
                reason: "domainURL \"\(shown(domain))\" contains a path: give the host alone and put the path in subdomainURL")
        }
        if let ipv6 = ipv6Literal(domain) { return ipv6 }
        if domain.contains(":") {
            throw .invalidConfiguration(
                reason: "domainURL \"\(shown(domain))\" contains a port: give the host alone and set port")
        }
        let name = domain.hasSuffix(".") ? String(domain.dropLast()) : domain
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        let valid =
            name.utf8.count <= 253
            && labels.allSatisfy { label in
                !label.isEmpty && label.count <= 63 && label.allSatisfy(allowed.contains)
                    && !label.hasPrefix("-") && !label.hasSuffix("-")
            }
        guard valid else {
            throw .invalidConfiguration(
                reason:
                    "domainURL \"\(shown(domain))\" is not a valid host name (letters, digits, \"-\" and \".\"; use punycode for international names)"
            )
        }
        return domain
    }

    /// A setting as an error may quote it: errors are logged and shown, and a mistaken setting can
    /// hold a password (`admin:s3cret@host`) or a key (`/v1?api_key=…`).
    private static func shown(_ text: String) -> String {
        let redacted = Redaction.standard.unparsedURLText(text)
        guard !redacted.contains("://"), let at = redacted.range(of: "@", options: .backwards),
            !redacted[..<at.lowerBound].contains("/")
        else { return redacted }
        return Redaction.placeholder + redacted[at.lowerBound...]
    }

    /// `[address]` when the text is an IPv6 address, with or without brackets.
    static func ipv6Literal(_ text: String) -> String? {
        var address = Substring(text)
        if address.hasPrefix("[") && address.hasSuffix("]") { address = address.dropFirst().dropLast() }
        let hex = Set("0123456789abcdefABCDEF:.")
        guard address.filter({ $0 == ":" }).count >= 2, address.allSatisfy(hex.contains) else { return nil }
        return "[\(address)]"
    }

    /// The subdomain as a path prefix without a trailing `/` (empty for none), or an error.
    ///
    /// The text is a path as read, encoded here segment by segment. A space inside a segment is
    /// part of the path (`/sites/Team Site`, or `%20` in a base URL written whole); one at a
    /// segment's start or end, and any other whitespace, is taken for a typing slip and refused.
    static func validatedSubdomain(_ subdomain: String?) throws(RepositoryError) -> String {
        guard let subdomain else { return "" }
        guard subdomain.hasPrefix("/") else {
            throw .invalidConfiguration(reason: "subdomainURL \"\(shown(subdomain))\" must start with \"/\", as in \"/api/v1\"")
        }
        if let bad = subdomain.first(where: { $0 == "?" || $0 == "#" || ($0.isWhitespace && $0 != " ") }) {
            throw .invalidConfiguration(
                reason: "subdomainURL \"\(shown(subdomain))\" contains \"\(bad)\": it must be a plain path such as \"/api/v1\"")
        }
        let segments = subdomain.split(separator: "/")
        if segments.contains(where: { $0.first == " " || $0.last == " " }) {
            throw .invalidConfiguration(
                reason: "subdomainURL \"\(shown(subdomain))\" has a segment that starts or ends with a space")
        }
        let encoded = segments.map { PathEncoding.encodeSegment(String($0)) }
        return encoded.isEmpty ? "" : "/" + encoded.joined(separator: "/")
    }
}

/// Checks that header fields can be sent as given.
enum HeaderValidation {
    /// Whether a byte may appear in a token (a header name, a method): RFC 9110's `tchar`, all
    /// ASCII, so a token is checked byte by byte on its UTF-8 form (this runs for every request).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// Whether the text is a non-empty token.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    /// What is wrong with the headers, or `nil` when every field can be sent.
    static func problem(in headers: HTTPHeaders) -> String? {
        for field in headers {
            if !isToken(field.name) {
                return "\"\(field.name)\" is not a valid header name"
            }
            if field.value.utf8.contains(where: isForbidden) {
                return
                    "the value of \(field.name) contains a line break, NUL or another control character, which would split the request or have it refused"
            }
        }
        return nil
    }

    /// Whether a byte is a control character other than a tab (CR, LF and NUL, which would
    /// split a request, and the others, which strict servers and proxies refuse), which no field
    /// value may hold (RFC 9110 §5.5). They are single bytes in UTF-8, never part of another
    /// character.
    static func isForbidden(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F
    }

    /// The value without the spaces and tabs around it, which are not part of a field's value
    /// (RFC 9110 §5.5). Sent as given, a value of blanks only is dropped by libcurl, which reads
    /// `Name:   ` as a field to remove; trimmed, it goes out empty.
    static func withoutSurroundingBlanks(_ value: String) -> String {
        func isBlank(_ byte: UInt8?) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard isBlank(value.utf8.first) || isBlank(value.utf8.last) else { return value }
        return value.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    }

    /// A received value with each CR, LF, NUL or other control character but a tab replaced by
    /// a space and trimmed again, as RFC 9110 §5.5 lets a recipient do: sent back (an `ETag` as `If-None-Match`, a `Location`
    /// followed) it would otherwise be refused, for good.
    static func cleaned(_ value: String) -> String {
        guard value.utf8.contains(where: isForbidden) else { return value }
        let bytes = value.utf8.map { isForbidden($0) ? UInt8(ascii: " ") : $0 }
        return withoutSurroundingBlanks(String(decoding: bytes, as: UTF8.self))
    }
}

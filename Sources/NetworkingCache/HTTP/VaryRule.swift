import Networking

/// How `Vary` (RFC 9111 §4.1) splits stored answers: a response that names request header
/// fields is stored once per combination of their values, and is used only for a request whose
/// values of those fields match (after trimming whitespace and joining repeated fields); a
/// response that varies on `*` never matches, so it is never stored. The values are kept as
/// digests: a response that varies on `Authorization` or `Cookie` must not put the request's
/// credential on disk, and matching needs equality only.
enum VaryRule {
    /// What a response's `Vary` says.
    enum Fields: Sendable, Hashable {
        /// It does not vary.
        case none
        /// It varies on these request fields (lowercase, sorted, without duplicates).
        case names([String])
        /// `Vary: *`: it can never be reused.
        case any
    }

    /// The fields of every `Vary` of `headers`.
    static func fields(of headers: HTTPHeaders) -> Fields {
        var names = Set<String>()
        for value in headers.values(for: "Vary") {
            for piece in value.split(separator: ",") {
                let name = String(piece).trimmingWhitespace().lowercased()
                if name == "*" { return .any }
                if !name.isEmpty { names.insert(name) }
            }
        }
        return names.isEmpty ? .none : .names(names.sorted())
    }

    /// The digests of the request's values of `names`.
    static func capture(_ names: [String], from request: HTTPHeaders) -> [VaryField] {
        names.map { name in VaryField(name: name, value: value(of: name, in: request).map { digest($0, of: name) }) }
    }

    /// The field's values as `Vary` compares them: trimmed and joined, or `nil` when absent.
    private static func value(of name: String, in headers: HTTPHeaders) -> String? {
        let values = headers.values(for: name).map { $0.trimmingWhitespace() }
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// Whether a step after the cache added or changed the field: its values differ between the
    /// request as the cache saw it and as it was sent (no digest needed to compare them).
    private static func changed(_ name: String, seen: HTTPHeaders, sent: HTTPHeaders) -> Bool {
        value(of: name, in: seen) != value(of: name, in: sent)
    }

    /// The fields among `names` that steps after the cache added or changed — an interceptor
    /// setting a tenant or a language after it, the cookie storage — found by comparing the
    /// request as the cache saw it with the one sent (`sent`, ``Networking/TransportResponse/requestHeaders``).
    /// The cache cannot match later requests on them, as it never sees their values. Not
    /// `Authorization` nor `Proxy-Authorization` when `keyKeepsUsersApart` (a discriminator
    /// names whose answer it is): the session signs after the cache, and the key holds the user.
    static func addedAfterTheCache(_ names: [String], seen: HTTPHeaders, sent: HTTPHeaders?, keyKeepsUsersApart: Bool) -> [String] {
        guard let sent else { return [] }
        return names.filter { name in
            !(keyKeepsUsersApart && (name == "authorization" || name == "proxy-authorization"))
                && changed(name, seen: seen, sent: sent)
        }
    }

    /// Whether a step after the cache added or changed an `Authorization`, a
    /// `Proxy-Authorization` or another field that says who calls (`X-Auth-Token`:
    /// `CacheKey.isTokenField(_:)`): the session's signature, or an app's interceptor that signs
    /// requests itself.
    static func credentialAddedAfterTheCache(
        seen: HTTPHeaders, sent: HTTPHeaders?, isSecret: (String) -> Bool = HTTPHeaders.isSecretFieldName
    ) -> Bool {
        guard let sent else { return false }
        let names = Set(sent.map { $0.name.lowercased() }).filter {
            $0 == "authorization" || $0 == "proxy-authorization" || CacheKey.isTokenField($0, isSecret: isSecret)
        }
        return names.contains { changed($0, seen: seen, sent: sent) }
    }

    /// Whether the answer can serve every caller of a shared exchange: `false` for `Vary: *` (it
    /// depends on more than the request) and an answer that varies on a field steps after the
    /// cache set (see ``addedAfterTheCache(_:seen:sent:keyKeepsUsersApart:)``), whose value
    /// another caller's request may not share. A `no-store` answer is shared: many APIs mark
    /// every answer so, and the callers asked at the same moment (a call whose every answer must
    /// be its own, a one-time token, bypasses the cache).
    static func isShareable(_ response: TransportResponse, seen: HTTPHeaders, keyKeepsUsersApart: Bool) -> Bool {
        switch fields(of: response.headers) {
        case .none: return true
        case .any: return false
        case .names(let names):
            return addedAfterTheCache(names, seen: seen, sent: response.requestHeaders, keyKeepsUsersApart: keyKeepsUsersApart).isEmpty
        }
    }

    /// The digest kept for `value` of the field `name`.
    static func digest(_ value: String, of name: String) -> String {
        SHA256Digest.hex("vary:\(name.utf8.count):\(name)=" + value)
    }

    /// Whether a request with these headers selects the stored `fields`.
    static func matches(_ fields: [VaryField], request: HTTPHeaders) -> Bool {
        capture(fields.map(\.name), from: request) == fields
    }

    /// The digest naming one variant (see ``StoreName/variant``).
    static func variantTag(_ fields: [VaryField]) -> String {
        var text = ""
        for field in fields {
            text += "\(field.name.utf8.count):\(field.name)"
            text += field.value.map { "=\($0.utf8.count):\($0)" } ?? "-"
        }
        return StoreName.tag(forVariant: text)
    }
}

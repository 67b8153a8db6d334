import Foundation
import Networking

/// One stored answer: the request it answers (method, URL, route, discriminator, and the values
/// of the request header fields its `Vary` names), the response (status, headers, body) and when
/// it was asked for and received, which the age calculation needs (RFC 9111 §4.2.3).
struct CacheEntry: Sendable, Hashable {
    /// The key's digest (``CacheKey/stored``), checked on every read.
    let key: String
    /// The request method (`GET`).
    let method: String
    /// The request URL without its user, query, fragment and path parameters (see
    /// ``CacheKey/storedURL(of:)``).
    let url: String
    /// The route's name, `""` for none.
    let routeName: String
    /// Whose entry this is; `nil` when shared.
    let discriminator: String?
    /// The response's status code.
    let statusCode: Int
    /// The response's header fields.
    let headers: HTTPHeaders
    /// The response's body.
    let body: Data
    /// When the request was sent (`request_time` of RFC 9111 §4.2.3).
    let requestDate: Date
    /// When the response arrived and was stored (`response_time`).
    let responseDate: Date
    /// The request header values named by the response's `Vary`, lowercase names in order.
    let vary: [VaryField]

    /// The response's `Cache-Control` directives, read once.
    let directives: CacheControl
    /// The response's `Date` and `Expires`, read once.
    let dates: HeaderDates
    /// The response's `Age`, read once.
    let ageValue: TimeInterval?

    init(
        key: String, method: String, url: String, routeName: String, discriminator: String?, statusCode: Int,
        headers: HTTPHeaders, body: Data, requestDate: Date, responseDate: Date, vary: [VaryField]
    ) {
        self.key = key
        self.method = method
        self.url = url
        self.routeName = routeName
        self.discriminator = discriminator
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.requestDate = requestDate
        self.responseDate = responseDate
        self.vary = vary
        directives = CacheControl(headers)
        dates = HeaderDates(headers, receivedAt: responseDate)
        ageValue = headers.age
    }

    /// Whether a field is never stored: cookies a server sets are the session of the moment
    /// (the cookie storage already has them from the live answer), and the fields that carry a
    /// credential in an answer (``unstoredFields``: a CSRF token fetched with a `GET`, a token an
    /// identity service answers with) are one too. Either would sit on disk in clear. Named one
    /// by one: a name test by fragment would take in `X-Next-Page-Token`, which paging needs.
    static func isUnstored(_ name: String) -> Bool { unstoredFields.contains(name.lowercased()) }

    /// The fields ``isUnstored(_:)`` names, lower-cased.
    static let unstoredFields: Set<String> = [
        "set-cookie", "set-cookie2", "authorization", "proxy-authorization", "x-csrf-token", "x-xsrf-token",
        "x-auth-token", "x-subject-token", "x-access-token", "x-refresh-token", "x-api-key",
    ]

    /// The answer's fields as stored: all but those ``isUnstored(_:)`` names.
    static func storedFields(of headers: HTTPHeaders) -> HTTPHeaders {
        var stored = HTTPHeaders()
        for field in headers where !isUnstored(field.name) { stored.add(name: field.name, value: field.value) }
        return stored
    }

    /// Whether `other` is this same stored answer (the same arrival and validator), not a newer
    /// one stored since, or one refreshed by another 304.
    func isSameAnswer(as other: CacheEntry) -> Bool {
        responseDate == other.responseDate && headers["ETag"] == other.headers["ETag"] && body == other.body
    }

    /// The entry after a `304 Not Modified` (RFC 9111 §4.3.4): the stored header fields are
    /// replaced by those the 304 carries — except the framing fields, which describe the 304
    /// itself — and the dates restart. The stored `Date` and `Age` described the first answer:
    /// a 304 without them gets the time it was received as its `Date` (RFC 9110 §6.6.1) and no
    /// `Age`, or the refreshed answer would be as old as the first one.
    ///
    /// The merged fields are, in order: the stored ones the 304 does not replace (a stored `Date`
    /// at the place of the first one, set to the time received, when the 304 has none), that
    /// `Date` when nothing was stored in its place, then the 304's fields grouped by name in order
    /// of the names' first appearance, each group spelled as its first field. Linear time in the
    /// number of fields: a 304's fields come from the server, and one with tens of thousands of
    /// distinct names must not cost a scan of every field per name.
    func refreshed(with notModified: HTTPHeaders, requestDate: Date, responseDate: Date) -> CacheEntry {
        let framing: Set<String> = ["content-length", "content-encoding", "transfer-encoding", "content-range", "connection"]

        // The 304's fields by name (lowercased), in order of the names' first appearance. As
        // `HTTPHeaders` compares names, a field whose lowercased name matches but whose length
        // in UTF-8 differs (a Kelvin sign for a `K`) is another name: it neither joins the group
        // nor replaces a stored field of the group's name.
        var groups: [(name: String, values: [String])] = []
        var groupIndex: [String: Int] = [:]
        for field in notModified {
            let name = field.name.lowercased()
            guard !framing.contains(name), !Self.isUnstored(name) else { continue }
            if let index = groupIndex[name] {
                if groups[index].name.utf8.count == field.name.utf8.count { groups[index].values.append(field.value) }
            } else {
                groupIndex[name] = groups.count
                groups.append((name: field.name, values: [field.value]))
            }
        }
        // "date" and "age" are ASCII: no other spelling of them has another length.
        let refreshesDate = groupIndex["date"] != nil
        let received = HTTPDate.text(of: responseDate)
        var fields: [HTTPHeaders.Field] = []
        var dated = false
        for field in headers {
            let name = field.name.lowercased()
            if let index = groupIndex[name], groups[index].name.utf8.count == field.name.utf8.count { continue }
            // An entry stored before a field was left out does not keep it through a refresh.
            if Self.isUnstored(name) { continue }
            switch name {
            case "age":
                // The 304 has no `Age` (else it replaced this one): the stored one described the first answer.
                continue
            case "date":
                // The 304 has no `Date` (else it replaced this one): the first stored one takes the
                // time received, in its place; the others go.
                if !dated { fields.append(HTTPHeaders.Field(name: "Date", value: received)) }
                dated = true
            default:
                fields.append(field)
            }
        }
        if !refreshesDate, !dated { fields.append(HTTPHeaders.Field(name: "Date", value: received)) }
        for group in groups {
            for value in group.values { fields.append(HTTPHeaders.Field(name: group.name, value: value)) }
        }
        return CacheEntry(
            key: key, method: method, url: url, routeName: routeName, discriminator: discriminator, statusCode: statusCode,
            headers: HTTPHeaders(fields), body: body, requestDate: requestDate, responseDate: responseDate, vary: vary)
    }

    /// The entry as an answer to a request for `url`: the stored status, headers and body, with
    /// `Age` set to its current age (RFC 9111 §5.1), marked with where it came from. The URL is
    /// the request's, as a network answer's is (the entry keeps it without its query).
    func response(source: ResponseSource, age: TimeInterval, url: URL) -> TransportResponse {
        // Entries written before cookies were left out may still hold them.
        var headers = Self.storedFields(of: headers)
        // RFC 9111's cap, 2^31 seconds, as an `Int64`: an `Int` has 32 bits on watchOS.
        headers["Age"] = String(Int64(min(max(age, 0), 2_147_483_648).rounded(.down)))
        return TransportResponse(statusCode: statusCode, headers: headers, body: body, url: url, source: source)
    }

    /// About how many bytes the entry takes, for the tiers' byte limits.
    var cost: Int {
        var total = 128 + key.utf8.count + url.utf8.count + routeName.utf8.count + (discriminator?.utf8.count ?? 0) + body.count
        for field in headers { total += field.name.utf8.count + field.value.utf8.count + 8 }
        for field in vary { total += field.name.utf8.count + (field.value?.utf8.count ?? 0) + 8 }
        return total
    }

    static func == (lhs: CacheEntry, rhs: CacheEntry) -> Bool {
        lhs.key == rhs.key && lhs.method == rhs.method && lhs.url == rhs.url && lhs.routeName == rhs.routeName
            && lhs.discriminator == rhs.discriminator && lhs.statusCode == rhs.statusCode && lhs.headers == rhs.headers
            && lhs.body == rhs.body && lhs.requestDate == rhs.requestDate && lhs.responseDate == rhs.responseDate
            && lhs.vary == rhs.vary
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(responseDate)
    }
}

/// One request header field named by a response's `Vary`, with the value the request had
/// (`nil` when it did not have the field).
struct VaryField: Sendable, Hashable {
    /// The field name, lowercase.
    let name: String
    /// The digest of the request's value (whitespace trimmed, repeated fields joined with `", "`;
    /// see `VaryRule.digest(_:of:)`).
    let value: String?
}

/// What is kept under one name: an answer, or — for a response that varies — the list of request
/// header fields its variants are chosen by (each variant is stored under its own name).
enum StoredRecord: Sendable, Hashable {
    /// A stored answer.
    case response(CacheEntry)
    /// The fields the answers for this key vary on; `key` is the key's ``CacheKey/stored`` digest.
    case variants(key: String, fields: [String])

    /// The key's digest (``CacheKey/stored``) of the record.
    var key: String {
        switch self {
        case .response(let entry): entry.key
        case .variants(let key, _): key
        }
    }

    /// About how many bytes the record takes.
    var cost: Int {
        switch self {
        case .response(let entry): entry.cost
        case .variants(let key, let fields): 64 + key.utf8.count + fields.reduce(0) { $0 + $1.utf8.count + 8 }
        }
    }
}

import Foundation
import Networking

/// The Facebook Graph batch format, both ways.
enum BatchWire {
    /// Why an item has no answer: the server did not run it (its answer is `null`), or it was not
    /// sent because an earlier batch request failed. The offline queue keeps such an item for the
    /// next flush, telling it by this reason.
    static let notRunReason = "the batch did not run this item (its answer is null, or an earlier batch request failed)"
    /// Why an item's answer in a batch answer could not be read.
    static let noCodeReason = "a batch item's answer has no valid \"code\""
    static let notObjectReason = "a batch item's answer is not an object"
    /// Every reason an item of a batch answer fails for: the server's answer, not the network's.
    static let itemReasons: Set<String> = [notRunReason, noCodeReason, notObjectReason]

    /// The failure of an item not sent because an earlier batch request failed: the same as for
    /// an item answered `null`, since neither ran, with the item's own request as context (there
    /// is no batch request or response for it).
    static func notSent(_ request: TransportRequest) -> RepositoryError {
        .invalidResponse(reason: notRunReason, context: ErrorContext(request: request.summary))
    }

    /// `answer`, an item's failure to be read (``itemReasons``) naming the item's own `request`
    /// instead of the batch's: the batch request and its answer, which holds every other item's
    /// body (another call's login answer, say), do not go into this item's error and its logs.
    static func naming(_ request: TransportRequest, in answer: Result<TransportResponse, RepositoryError>)
        -> Result<TransportResponse, RepositoryError>
    {
        guard case .failure(.invalidResponse(let reason, _)) = answer, itemReasons.contains(reason) else { return answer }
        return .failure(.invalidResponse(reason: reason, context: ErrorContext(request: request.summary)))
    }

    /// Header fields an item does not carry: the batch request's own carry them (its
    /// `Authorization` is inherited), a proxy's credential is the proxy's, and the rest describe
    /// the batch's transfer, not the item's.
    static let droppedHeaders: Set<String> = [
        "authorization", "proxy-authorization", "content-length", "host", "accept-encoding", "connection", "cookie",
    ]

    /// The credentials an item may not carry for itself: it goes with the batch request's
    /// `Authorization` (and cookies), so its own would be replaced without a word.
    static let ownCredentials = ["Authorization", "Cookie"]

    /// An item of the `batch` array, or why the request cannot go in a batch: one that could not
    /// be sent on its own (`TransportRequest.problemSending`), one that is not under the base URL, whose body is not text in memory, or that carries an `Authorization`
    /// or `Cookie` of its own (not the configuration's default, `defaults`, which the batch
    /// request carries too). The fields `withholding` names are left out: credentials, when the
    /// batch request itself goes without them (its endpoint on another host than the API's, or
    /// over plain HTTP), do not travel in its body either.
    static func item(
        for request: TransportRequest, baseURL: URL, defaults: HTTPHeaders = [:], withholding: (String) -> Bool = { _ in false }
    ) -> Result<JSONValue, RepositoryError> {
        // What the call could not send on its own (a line break in a header value) does not go
        // inside the batch either, where a server rebuilding each item could read it as a field.
        if let problem = request.problemSending {
            return .failure(.invalidRequest(reason: problem, request: request.summary))
        }
        if let name = request.ownCredential(among: ownCredentials, defaults: defaults) {
            return .failure(
                .invalidRequest(
                    reason:
                        "\(request.summary) carries its own \(name) header, so it cannot go in a batch: its items go with the batch request's",
                    request: request.summary))
        }
        let base = baseURL.absoluteString.hasSuffix("/") ? baseURL.absoluteString : baseURL.absoluteString + "/"
        let target = request.url.absoluteString
        let relative = target.hasPrefix(base) ? target.dropFirst(base.count) : target.dropFirst(base.count - 1)
        if target.hasPrefix(base.dropLast()), relative.isEmpty || relative.first == "?" || relative.first == "#" {
            return .failure(
                .invalidRequest(
                    reason:
                        "it is for the base URL itself, which a batch item cannot name (its relative_url would be empty), so it cannot go in a batch: send it on its own",
                    request: request.summary))
        }
        guard target.hasPrefix(base) else {
            return .failure(
                .invalidRequest(
                    reason: "it is not under the base URL \(base), so it cannot go in a batch", request: request.summary))
        }
        var item: [String: JSONValue] = [
            "method": .string(request.method.rawValue), "relative_url": .string(String(relative)),
        ]
        let headers = request.headers.filter { field in
            !droppedHeaders.contains(field.name.lowercased()) && !withholding(field.name)
        }
        if !headers.isEmpty {
            item["headers"] = .array(headers.map { ["name": .string($0.name), "value": .string($0.value)] })
        }
        if let body = request.body {
            guard let data = body.inMemoryData, let text = String(data: data, encoding: .utf8) else {
                return .failure(
                    .invalidRequest(
                        reason: "\(request.summary) has a body that is not UTF-8 text in memory (\(body)), so it cannot go in a batch",
                        request: request.summary))
            }
            item["body"] = .string(text)
        }
        return .success(.object(item))
    }

    /// The items of a batch answer, or why it does not fit the `expected` requests.
    static func responses(in response: TransportResponse, expected: Int, request: TransportRequest)
        -> Result<[Result<TransportResponse, RepositoryError>], RepositoryError>
    {
        let context = ErrorContext(request: request.summary, response: response)
        // An item's body arrives as JSON text and is handed on as its UTF-8 bytes: the fields
        // that described the bytes the item's own server sent (their length, compression and
        // charset) would describe other bytes now.
        func describingUTF8(_ headers: HTTPHeaders) -> HTTPHeaders {
            var headers = headers
            for name in ["Content-Length", "Content-Encoding", "Transfer-Encoding"] { headers[name] = nil }
            let types = headers.values(for: "Content-Type")
            guard !types.isEmpty else { return headers }
            headers["Content-Type"] = nil
            for type in types {
                let parts = type.split(separator: ";", omittingEmptySubsequences: false).map { part in
                    part.split(separator: "=", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces).lowercased() == "charset"
                        ? " charset=utf-8" : String(part)
                }
                headers.add(name: "Content-Type", value: parts.joined(separator: ";"))
            }
            return headers
        }
        guard case .array(let items)? = response.json else {
            return .failure(.invalidResponse(reason: "the batch answer is not a JSON array", context: context))
        }
        guard items.count == expected else {
            return .failure(.invalidResponse(reason: "the batch answered \(items.count) items for \(expected) requests", context: context))
        }
        return .success(
            items.map { item in
                switch item {
                case .null:
                    return .failure(.invalidResponse(reason: notRunReason, context: context))
                case .object(let fields):
                    guard case .int(let code)? = fields["code"], (100...999).contains(code) else {
                        return .failure(.invalidResponse(reason: noCodeReason, context: context))
                    }
                    var headers = HTTPHeaders()
                    switch fields["headers"] {
                    case .array(let list)?:
                        for header in list {
                            if let name = header["name"]?.stringValue, let value = header["value"]?.stringValue {
                                headers.add(name: name, value: value)
                            }
                        }
                    case .object(let map)?:
                        // The older form some endpoints answer with: `{"Content-Type": "…"}`.
                        for (name, value) in map.sorted(by: { $0.key < $1.key }) {
                            if let value = value.stringValue { headers.add(name: name, value: value) }
                        }
                    default: break
                    }
                    let body: Data
                    switch fields["body"] {
                    case .string(let text)?: body = Data(text.utf8)
                    case nil, .null?: body = Data()
                    case let other?: body = Data(other.description.utf8)
                    }
                    return .success(TransportResponse(statusCode: code, headers: describingUTF8(headers), body: body))
                default:
                    return .failure(.invalidResponse(reason: notObjectReason, context: context))
                }
            })
    }
}

import Foundation

/// Turns an ``Endpoint`` and a ``NetworkingConfiguration`` into a ``TransportRequest``: a pure
/// function, so request building is tested without a network.
///
/// Header precedence, lowest first: library defaults (`Accept: application/json`, and the body's
/// `Content-Type`) < the endpoint's headers < the session's `Authorization` (added later, by
/// the session interceptor) < the configuration's default headers. A multipart form's
/// `Content-Type` replaces the endpoint's and the default headers': it carries the form's boundary.
/// A URL-encoded form's (the endpoint's, or the builder's) and an upload's (the endpoint's, or
/// the guessed one) replace the default headers'. A default field named like a credential
/// (`Authorization`, `X-Api-Key`) goes only to the hosts the session's credential goes to.
struct RequestBuilder {
    let configuration: NetworkingConfiguration

    func build<Response>(_ endpoint: Endpoint<Response>) throws(RepositoryError) -> TransportRequest {
        try configuration.validate()
        var url = try url(for: endpoint.path, encoded: endpoint.pathIsEncoded)
        guard endpoint.method.isValidToken else {
            throw .invalidRequest(
                reason: "\"\(endpoint.method.rawValue)\" is not a valid method: a token without spaces, line breaks or separators",
                request: nil)
        }
        let style = endpoint.queryEncodingStyle ?? configuration.queryEncodingStyle
        if let timeout = endpoint.timeout, !(timeout > 0) {
            throw .invalidRequest(
                reason: "the endpoint's timeout must be a positive number of seconds, not \(timeout)",
                request: RequestSummary(method: endpoint.method, url: url))
        }
        if let idle = endpoint.idleTimeout, !(idle > 0) {
            throw .invalidRequest(
                reason: "the endpoint's idle timeout must be a positive number of seconds or .infinity, not \(idle)",
                request: RequestSummary(method: endpoint.method, url: url))
        }
        var headers = endpoint.headers
        var body: RequestBody?
        /// The type of a URL-encoded form this builder encoded (the call's own, or its default).
        var formType: String?
        if let problem = HeaderValidation.problem(in: endpoint.headers) {
            throw .invalidRequest(reason: problem, request: RequestSummary(method: endpoint.method, url: url))
        }
        if endpoint.form != nil, endpoint.requestBody != nil {
            // One of them would be dropped without a word (or the body sent under the form's type).
            throw .invalidRequest(
                reason: "a request sends either a multipart form or a body of its own, not both",
                request: RequestSummary(method: endpoint.method, url: url))
        }
        if let query = endpoint.query {
            let summary = RequestSummary(method: endpoint.method, url: url)
            let json: JSONValue
            do {
                json = try query.json(encoder: configuration.jsonEncoder, keepingDigits: true)
            } catch {
                throw .invalidRequest(reason: "the query items cannot be encoded: \(error.reason)", request: summary)
            }
            guard case .object(let items) = json else {
                throw .invalidRequest(reason: "query items must be a dictionary of encodable values", request: summary)
            }
            url = try appendingQuery(QueryEncoding.encode(items, style: style), to: url)
        }
        let encoding = endpoint.form != nil ? .multipart : encoding(for: endpoint)
        let rootKeys = (endpoint.requestRootKey ?? "").split(separator: ".").map(String.init)
        let placement = endpoint.requestBody == nil ? encoding : .query
        if let parameters = endpoint.parameters, placement == .json, endpoint.method != .get, endpoint.method != .head,
            let encoded = try Self.verbatimJSON(
                of: parameters, under: rootKeys, configuration: configuration, url: url, method: endpoint.method)
        {
            body = .data(encoded)
            headers.setIfAbsent("Content-Type", "application/json")
        } else if let parameters = endpoint.parameters {
            let summary = RequestSummary(method: endpoint.method, url: url)
            var json: JSONValue
            do {
                // Written as text (a query, a form), a number keeps every digit. Not a multipart
                // form's: an object field there is JSON text, where digits kept would be a string.
                json = try parameters.json(encoder: configuration.jsonEncoder, keepingDigits: placement == .query || placement == .form)
            } catch {
                throw .invalidRequest(reason: error.reason, request: summary)
            }
            for component in rootKeys.reversed() { json = .object([component: json]) }
            switch (placement, json) {
            case (.query, .object(let object)):
                url = try appendingQuery(QueryEncoding.encode(object, style: style), to: url)
            case (.form, .object(let object)):
                body = .data(Data(QueryEncoding.encode(object, style: style).utf8))
                headers.setIfAbsent("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
                formType = headers["Content-Type"]
            case (.multipart, .object(let object)):
                var form = endpoint.form ?? MultipartFormData()
                MultipartFields.append(object, to: &form)
                body = .multipart(form)
            case (.multipart, _):
                // Sent as JSON instead, they would replace the form: its files would be dropped
                // without a word. (With a raw body the switch is on `.query`, never here.)
                throw .invalidRequest(
                    reason: "a multipart form's parameters are its text fields, so they must be a dictionary, not \(json.kindDescription)",
                    request: summary)
            case (.query, _), (.form, _), (.json, _):
                guard endpoint.requestBody == nil else {
                    throw .invalidRequest(
                        reason: "an upload's parameters go in the query, so they must be a dictionary, not \(json.kindDescription)",
                        request: summary)
                }
                guard endpoint.method != .get && endpoint.method != .head else {
                    if case .object = json {
                        throw .invalidRequest(
                            reason:
                                "\(endpoint.method) cannot carry a JSON body: send its parameters in the query (encoding .query)",
                            request: summary)
                    }
                    throw .invalidRequest(
                        reason:
                            "\(endpoint.method) cannot carry a body, so its parameters must be a dictionary (sent in the query), not \(json.kindDescription)",
                        request: summary)
                }
                do {
                    body = .data(try json.encoded())
                } catch {
                    throw .invalidRequest(reason: "the parameters could not be encoded as JSON: \(error)", request: summary)
                }
                headers.setIfAbsent("Content-Type", "application/json")
            }
        } else if let form = endpoint.form {
            body = .multipart(form)
        }
        /// The type of an upload's body (the endpoint's, or guessed): it describes the bytes sent.
        var uploadType: String?
        if let requestBody = endpoint.requestBody {
            body = requestBody
            headers.setIfAbsent("Content-Type", requestBody.guessedContentType)
            // Bytes of no known type (`application/octet-stream`, the fallback) leave a default
            // `Content-Type` in place: the caller's defaults say what the API's bodies are.
            uploadType =
                endpoint.headers["Content-Type"] ?? (requestBody.guessedContentType == MIMETypes.fallback ? nil : headers["Content-Type"])
        }
        // The transports send no body with a HEAD: a form or an upload would be lost unsaid.
        if endpoint.method == .head, let body, body.inMemoryData?.isEmpty != true {
            throw .invalidRequest(
                reason: "a HEAD request cannot carry a body: send its parameters in the query (encoding: .query)",
                request: RequestSummary(method: endpoint.method, url: url))
        }
        if endpoint.gzipsBody, let plain = body {
            body = plain.gzipped()
            headers["Content-Encoding"] = "gzip"
        } else if body?.isGzipped == true {
            // A body gzipped by the caller (`RequestBody.data(d).gzipped()`) says so here, not only
            // in the transports: a body staged for its digests is a plain file of gzip bytes, and
            // no transport would add the header for it.
            headers.setIfAbsent("Content-Encoding", "gzip")
        }
        headers.setIfAbsent("Accept", "application/json")
        // Only an absolute path can leave the API's host.
        let defaults = Self.isAbsolute(endpoint.path) ? configuration.defaultHeaders(for: url) : configuration.defaultHeaders
        headers = headers.merging(defaults)
        // One `Cookie` field, its pairs joined by "; " (RFC 6265 §5.4): two fields (a call's and a
        // default's) would go as two lines, or be joined with a comma into one cookie's value.
        let cookies = headers.values(for: "Cookie")
        if cookies.count > 1 { headers["Cookie"] = cookies.joined(separator: "; ") }
        // What the feature set, or none (a fresh download's Range): never the defaults'.
        for name in endpoint.protocolHeaders { headers[name] = endpoint.headers[name] }
        // A form's type names its boundary (`form:` or `.multipart`), or says how the builder
        // encoded it (`.form`): no other may replace it.
        if let form = body?.mediaType ?? formType ?? uploadType { headers["Content-Type"] = form }
        // A file's transfer (a download to a file, a body read from a file or a stream) with no
        // timeout of its own is bounded by silence, as URLSession's are, not by the configuration's
        // timeout for the whole exchange: a large file takes as long as the link needs. Not when
        // the configuration has no idle limit (the endpoint's own `.infinity` is its choice), nor
        // for a stream's answer, which judges silence itself.
        let boundedBySilence =
            (Response.self == DownloadedFile.self || body?.isReadAsSent == true) && !(endpoint.responseBodySink is ChunkSink)
            && (endpoint.idleTimeout != nil || configuration.idleTimeout?.isFinite == true)
        var request = TransportRequest(
            method: endpoint.method, url: url, headers: headers, body: body,
            timeout: endpoint.timeout ?? (boundedBySilence ? .infinity : configuration.timeout),
            security: configuration.security, progress: endpoint.progress)
        request.responseBodySink = endpoint.responseBodySink
        if let idle = endpoint.idleTimeout {
            request.idleTimeout = idle.isFinite ? idle : nil
        } else if !request.timeout.isFinite, !(endpoint.responseBodySink is ChunkSink) {
            // The configuration's, only for an exchange with no time limit: a finite one is bounded
            // already, and a stream's silence is for the stream to judge (a quiet log, an event
            // stream's own idle timeout).
            request.idleTimeout = configuration.idleTimeout
        }
        return request
    }

    /// An `Encodable` value's JSON body (``Parameters/verbatimJSON(encoder:under:)``), or `nil`.
    private static func verbatimJSON(
        of parameters: Parameters, under rootKeys: [String], configuration: NetworkingConfiguration, url: URL, method: HTTPMethod
    ) throws(RepositoryError) -> Data? {
        do {
            return try parameters.verbatimJSON(encoder: configuration.jsonEncoder, under: rootKeys)
        } catch {
            throw .invalidRequest(reason: error.reason, request: RequestSummary(method: method, url: url))
        }
    }

    /// The endpoint's encoding, or the method's default.
    func encoding<Response>(for endpoint: Endpoint<Response>) -> ParameterEncoding {
        endpoint.encoding ?? (configuration.queryEncodedMethods.contains(endpoint.method) ? .query : .json)
    }

    /// The base URL with the path's segments percent-encoded and appended; an absolute `http` or
    /// `https` URL is taken as it is (a call to another host), but for what no URL may hold.
    ///
    /// - Throws: ``RepositoryError/invalidURL(reason:)`` quoting the path redacted: errors are
    ///   logged and shown, and a path can hold a password (`https://alice:s3cret@host/`) or a
    ///   secret query value.
    func url(for path: String, encoded: Bool = false) throws(RepositoryError) -> URL {
        if Self.isAbsolute(path) {
            // The host as given (an IPv6 literal's brackets), the rest encoded where no URL may hold it.
            let authority = path.range(of: "://")?.upperBound ?? path.startIndex
            let rest = path[authority...].firstIndex { "/?#".contains($0) } ?? path.endIndex
            let text = String(path[..<rest]) + PathEncoding.encodeInvalidBytes(path[rest...])
            guard let absolute = URL(string: text), absolute.host?.isEmpty == false else {
                throw .invalidURL(
                    reason: "\"\(redacted(path))\" is not a valid absolute URL: percent-encode it, or give a path under the base URL")
            }
            return absolute
        }
        let suffix = encoded ? Self.joinedRenderedPath(path) : PathEncoding.joinedSegments(of: path, encodes: true)
        let base = configuration.baseURL.absoluteString
        // A query-only route (`?page=1`) adds no "/" to the base URL's path; `/?page=1` adds one.
        let joint = suffix.hasPrefix("?") || suffix.hasPrefix("/") || base.hasSuffix("/") ? "" : "/"
        let rest = base.hasSuffix("/") && suffix.hasPrefix("/") ? suffix.dropFirst() : suffix[...]
        let text = suffix.isEmpty ? base : base + joint + PathEncoding.encodeInvalidBytes(rest)
        guard let url = URL(string: text) else {
            let shownBase = Redaction(secretFields: configuration.secretFields).url(configuration.baseURL)
            throw .invalidURL(reason: "\"\(redacted(path))\" does not form a valid URL under \(shownBase)")
        }
        return url
    }

    /// A route's rendered path under the base URL: its segments joined as a plain path's are,
    /// but a trailing `/` is kept (the route states the path exactly, and servers such as Django
    /// answer `books` with a redirect to `books/`), and the query after a `?` is kept as rendered.
    private static func joinedRenderedPath(_ path: String) -> String {
        let queryStart = path.firstIndex(of: "?") ?? path.endIndex
        let pathPart = path[..<queryStart]
        var joined = PathEncoding.joinedSegments(of: String(pathPart), encodes: false)
        if pathPart.hasSuffix("/"), !joined.isEmpty || queryStart < path.endIndex { joined += "/" }
        return joined + path[queryStart...]
    }

    /// A path or URL that is not a valid URL, as an error may show it (`Redaction.unparsedURLText(_:)`).
    private func redacted(_ path: String) -> String {
        Redaction(secretFields: configuration.secretFields).unparsedURLText(path)
    }

    /// Whether the path is an absolute `http` or `https` URL.
    static func isAbsolute(_ path: String) -> Bool {
        hasPrefixIgnoringCase(path, "http://") || hasPrefixIgnoringCase(path, "https://")
    }

    /// Whether `text` starts with `prefix` (lowercase ASCII), ignoring the case of ASCII letters.
    private static func hasPrefixIgnoringCase(_ text: String, _ prefix: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        for expected in prefix.utf8 {
            guard let byte = bytes.next() else { return false }
            let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
            guard lowered == expected else { return false }
        }
        return true
    }

    private func appendingQuery(_ query: String, to url: URL) throws(RepositoryError) -> URL {
        guard !query.isEmpty else { return url }
        let separator = url.query == nil ? "?" : "&"
        // The query goes before a fragment (`list#top`), which is never sent.
        let text = url.absoluteString
        let fragment = text.firstIndex(of: "#") ?? text.endIndex
        guard let result = URL(string: text[..<fragment] + separator + query + text[fragment...]) else {
            throw .invalidURL(reason: "the query \"\(redacted(query))\" does not form a valid URL")
        }
        return result
    }
}

extension HTTPHeaders {
    mutating func setIfAbsent(_ name: String, _ value: String) {
        if self[name] == nil { self[name] = value }
    }
}

extension JSONValue {
    var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

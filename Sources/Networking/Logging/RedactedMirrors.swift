import Foundation

// What `dump`, a debugger and `Mirror` show of the values that carry header fields and URLs —
// requests, responses, the request an error names, a configuration's default headers — with
// credentials redacted, as their descriptions are. Without these, `dump(error)` would print an
// `Authorization`, a `Set-Cookie` or a `?access_token=` in clear.

extension HTTPHeaders: CustomReflectable {
    /// One `Name: value` child per field, secret values redacted.
    public var customMirror: Mirror {
        Mirror(
            self, unlabeledChildren: map { "\($0.name): \(Redaction.standard.headerValue(name: $0.name, value: $0.value))" },
            displayStyle: .collection)
    }
}

extension RequestSummary: CustomReflectable {
    /// The method and the URL, its secret parts redacted.
    public var customMirror: Mirror {
        Mirror(self, children: ["method": method, "url": Redaction.standard.url(url)], displayStyle: .struct)
    }
}

extension TransportRequest: CustomReflectable {
    /// The request's members, its URL and header values redacted, the body by its kind and size
    /// (`Data`'s own mirror lists a small body's bytes).
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "method": method, "url": Redaction.standard.url(url), "headers": headers, "body": body?.description as Any,
                "timeout": timeout,
                "security": security, "keepsMethodOnRedirect": keepsMethodOnRedirect,
            ], displayStyle: .struct)
    }
}

extension TransportResponse: CustomReflectable {
    /// The response's members, its URL and header values redacted, the request's fields by name; the body by its size.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "statusCode": statusCode, "headers": headers, "body": "\(body.count) bytes",
                "url": url.map { Redaction.standard.url($0) } as Any, "source": source,
                // Names only: a configuration's own secret names are not known here.
                "requestHeaders": requestHeaders.map { $0.map(\.name) } as Any,
            ], displayStyle: .struct)
    }
}

extension HTTPHeaders.Field: CustomReflectable {
    /// The field's name and value, a secret value redacted: what `print(Array(headers))` shows.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["name": name, "value": Redaction.standard.headerValue(name: name, value: value)],
            displayStyle: .struct)
    }
}

extension Parameters: CustomReflectable {
    /// The parameters as JSON, secret members redacted (`print(endpoint)` of a login call must
    /// not show its password), or a note when they do not encode.
    public var customMirror: Mirror {
        let json = (try? json(encoder: JSONEncoder())).map { Redaction.standard.redact($0).description }
        return Mirror(self, children: ["json": json ?? "<parameters that do not encode as JSON>"], displayStyle: .struct)
    }
}

extension Endpoint: CustomReflectable {
    /// What the endpoint asks for: its method, path (its user part and secret query values
    /// redacted), parameters and query (secret members redacted), header fields (secret values
    /// redacted), the request body by its kind, and its settings.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "method": method, "path": Redaction.standard.unparsedURLText(path), "parameters": parameters as Any,
                "query": query as Any, "headers": headers, "requestBody": requestBody?.description as Any,
                "name": name as Any, "requiresSession": requiresSession, "encoding": encoding as Any,
                "keyPath": keyPath as Any, "timeout": timeout as Any, "idleTimeout": idleTimeout as Any,
            ], displayStyle: .struct)
    }
}

extension RepositoryResponse: CustomReflectable {
    /// The answer's members, its URL and header values redacted.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "value": value, "statusCode": statusCode, "headers": headers,
                "url": url.map { Redaction.standard.url($0) } as Any, "request": request, "source": source,
            ], displayStyle: .struct)
    }
}

extension ResponseHead: CustomReflectable {
    /// The head's members, its URL and header values redacted.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["statusCode": statusCode, "headers": headers, "url": url.map { Redaction.standard.url($0) } as Any],
            displayStyle: .struct)
    }
}

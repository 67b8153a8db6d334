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

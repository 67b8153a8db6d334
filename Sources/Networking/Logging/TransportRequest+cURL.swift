import Foundation

extension TransportRequest {
    /// The request as a `curl` command line, with credentials redacted: for bug reports and for
    /// trying a call by hand.
    public var cURLDescription: String { cURLDescription(secretFields: []) }

    /// The request as a `curl` command line, redacting the built-in secret names and `secretFields`.
    public func cURLDescription(secretFields: Set<String>) -> String {
        let redaction = Redaction(secretFields: secretFields)
        var parts = ["curl"]
        if method == .head {
            parts.append("--head")
        } else if method != .get || body != nil {
            // A method is any token, and some token characters mean something to a shell.
            let plain = method.rawValue.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" }
            parts.append("-X \(plain && method.rawValue.allSatisfy(\.isASCII) ? method.rawValue : Self.quoted(method.rawValue))")
        }
        parts.append(Self.quoted(redaction.url(url)))
        if let authorities = security.certificateAuthorityFile { parts.append("--cacert \(Self.quoted(authorities.path))") }
        if let client = security.clientCertificate {
            // The files, never the password (curl asks for it) nor bytes in memory (a placeholder).
            parts.append("--cert \(Self.quoted(client.certificate.curlArgument))")
            if client.format == .pkcs12 { parts.append("--cert-type P12") }
            if let key = client.privateKey { parts.append("--key \(Self.quoted(key.curlArgument))") }
        }
        for field in headers {
            parts.append("-H \(Self.quoted("\(field.name): \(redaction.headerValue(name: field.name, value: field.value))"))")
        }
        if let requestBody = body, requestBody.inMemoryData == nil {
            parts.append("--data-binary @body.bin  # \(requestBody)")
        } else if let body = body?.inMemoryData, !body.isEmpty {
            if let text = String(data: body, encoding: .utf8) {
                let redacted =
                    (try? JSONValue(parsing: body)).map { redaction.redact($0).description } ?? redaction.redactText(text)
                parts.append("--data-raw \(Self.quoted(redacted))")
            } else {
                parts.append("--data-binary @body.bin  # \(body.count) bytes of binary data")
            }
        }
        return parts.joined(separator: " \\\n  ")
    }

    /// The text in single quotes for a POSIX shell.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}

extension ClientCertificate.Source {
    /// A file's path; for bytes in memory, which curl's command line cannot take, a placeholder.
    fileprivate var curlArgument: String {
        switch self {
        case .file(let url): url.path
        case .data: "<in memory>"
        }
    }
}

import Foundation

extension TransportRequest {
    /// The request as a `curl` command line, with credentials redacted: for bug reports and for
    /// trying a call by hand. It knows the built-in secret names only; pass a configuration's
    /// ``NetworkingConfiguration/secretFields`` to ``cURLDescription(secretFields:)`` for yours.
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
        let shownURL = redaction.url(url)
        // curl reads `[]` and `{}` in a URL as a glob (an IPv6 host's brackets).
        if shownURL.contains(where: { "[]{}".contains($0) }) { parts.append("--globoff") }
        parts.append(Self.quoted(shownURL))
        if let authorities = security.certificateAuthorityFile { parts.append("--cacert \(Self.quoted(authorities.path))") }
        if let client = security.clientCertificate {
            // The files, never the password (curl asks for it) nor bytes in memory (a placeholder).
            parts.append("--cert \(Self.quoted(client.certificate.curlArgument))")
            if client.format == .pkcs12 { parts.append("--cert-type P12") }
            if let key = client.privateKey { parts.append("--key \(Self.quoted(key.curlArgument))") }
        }
        for field in headers {
            let value = redaction.headerValue(name: field.name, value: field.value)
            // curl reads `Name:` as "do not send Name"; `Name;` sends it empty.
            parts.append("-H \(Self.quoted(value.isEmpty ? "\(field.name);" : "\(field.name): \(value)"))")
        }
        // A body that is not text in memory (a file, a form, a stream, binary data) is named as a
        // file to supply; no `# …` comment after it, which zsh would not take as one.
        if let requestBody = body, requestBody.inMemoryData == nil {
            parts.append("--data-binary @body.bin")
        } else if let body = body?.inMemoryData, !body.isEmpty {
            // A NUL cannot be in a shell argument: such a body is binary for the command line.
            if !body.contains(0), let text = String(data: body, encoding: .utf8) {
                // JSON is written again only when something was redacted: as sent, otherwise
                // (its key order, and numbers too large for a Double, kept). The text is checked
                // too: of duplicate keys the parsed value keeps one, and the text holds both.
                // A body nested deeper than logs parse is redacted as text, as they do it.
                let json = Redaction.nests(body, atMost: Redaction.maximumParsedDepth) ? try? JSONValue(parsing: body) : nil
                let redacted = json.map { json in redaction.redact(json) }
                let asSent = redacted == json && redaction.redactText(text) == text
                let shown = asSent ? text : redacted?.description ?? redaction.redactText(text)
                parts.append("--data-raw \(Self.quoted(shown))")
            } else {
                parts.append("--data-binary @body.bin")
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

import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension RepositoryError: LocalizedError, CustomStringConvertible {
    /// The most response-body bytes a description shows.
    static let descriptionBodyLimit = 300

    /// A sentence a person can act on: what failed, where, and what the server said. Bodies are
    /// truncated and credentials never appear.
    public var errorDescription: String? { description }

    public var description: String {
        switch self {
        case .invalidConfiguration(let reason):
            return "Invalid networking configuration: \(reason)."
        case .invalidURL(let reason):
            return "Invalid URL: \(reason)."
        case .invalidRequest(let reason, let request):
            // Mostly found before sending; a few only once sent (a streamed body after a 401).
            return "The request \(request.map { "\($0) " } ?? "")cannot be sent as it is: \(reason)."
        case .unauthenticatedSession(nil):
            return
                "This request needs a logged-in session and nobody is logged in (or not the user it was made for: SessionIdentityKey); log in first. Nothing was sent."
        case .unauthenticatedSession(let context?) where context.sessionEnded:
            return
                "\(context.request) \(Self.notSentAgain(context)): the session it was signed in has ended (a logout, another login, or a refresh the server refused); log in again, and send it again only if repeating it is safe."
        case .unauthenticatedSession(let context?):
            return
                "\(context.request) was rejected as unauthenticated (status \(context.statusCode ?? 401))\(Self.attempts(context)); the session has expired, log in again.\(Self.bodySuffix(context))"
        case .sessionRefreshFailed(let failure, let context):
            // Refreshed before sending (an expired token), or after the server refused the call.
            var request = ""
            if let context {
                request =
                    context.response.map { "\(context.request) was refused (status \($0.statusCode))\(Self.attempts(context)) and " }
                    ?? "\(context.request) \(Self.notSentAgain(context)): "
            }
            return "\(request)the session could not be refreshed: \(failure.description.clause). Log in again if the session has ended."
        case .requestError(let context):
            return "\(context.request) failed with status \(Self.status(context))\(Self.attempts(context)).\(Self.bodySuffix(context))"
        case .customError(_, let error, let context) where error.explanation != nil:
            return "\(context.request): \(error.explanation ?? "")"
        case .customError(let name, _, let context):
            return
                "\(context.request) failed with the API error \"\(name)\" (status \(Self.status(context)))\(Self.attempts(context)).\(Self.bodySuffix(context))"
        case .authenticationFailed(let context):
            return
                "\(context.request) was rejected as unauthenticated (status \(context.statusCode ?? 401))\(Self.attempts(context)): the credentials it carried were not accepted.\(Self.bodySuffix(context))"
        case .noNetworkConnection(.connectionLost, let context):
            return
                "\(context.request) lost its connection before a complete response arrived\(Self.attempts(context)). The server may have been reached; check the network connection."
        case .noNetworkConnection(.proxyRefused(let status), let context):
            return
                "\(context.request) did not reach the server\(Self.attempts(context)): \(NetworkFailure.proxyRefused(status: status)). Check the proxy's settings\(status == 407 ? " and credentials" : "") and its rules for this server."
        case .noNetworkConnection(let failure, let context):
            return
                "\(context.request) did not reach the server\(Self.attempts(context)): \(failure). Check the network connection and the server address."
        case .timeout(let context) where context.statusCode == 401:
            // Only a blocking call's wait ends with an answer in hand: here, during a token refresh.
            return
                "\(context.request) ran out of time waiting for its session to be refreshed\(Self.attempts(context)): its last answer was status \(Self.status(context)).\(Self.bodySuffix(context))"
        case .timeout(let context) where context.response != nil:
            // A blocking call's wait that ran out during a retry's wait.
            return
                "\(context.request) ran out of time waiting to try again\(Self.attempts(context)): its last answer was status \(Self.status(context)).\(Self.bodySuffix(context))"
        case .timeout(let context):
            return
                "\(context.request) timed out before a complete response arrived\(Self.attempts(context)); the server is slow or unreachable."
        case .pollingExhausted(let attempts, let context):
            return
                "\(context.request) was still pending (status \(context.statusCode ?? 202)) after \(attempts) polling tries; try again later or allow more polling retries."
        case .tlsError(let failure, let context) where failure.concernsClientCertificate:
            return
                "\(context.request) failed\(Self.attempts(context)): \(failure). Check the client certificate, its key and their password."
        case .tlsError(let failure, let context):
            return
                "\(context.request) failed\(Self.attempts(context)): \(failure). Check the server's certificate, or configure a certificate authority file for a private CA."
        case .pinningFailed(let host, let context):
            return
                "\(context.request) was refused: the public key of \(host) matches none of the pinned keys. \(context.attempts > 1 ? "Its last attempt sent nothing." : "Nothing was sent.") If the server's key was rotated, add its new pin."
        case .pinningUnsupported(let transport, let context):
            return
                "\(context.request) was refused: the TLS it asks for (pins, a certificate authority file or a client certificate) is beyond the transport (\(transport)). Nothing was sent."
        case .cancelled(let context):
            guard let context else { return "The request was cancelled before it was sent." }
            return context.attempts == 0 ? "\(context.request) was cancelled before it was sent." : "\(context.request) was cancelled."
        case .invalidResponse(let reason, let context):
            return "\(context.request) received an invalid response\(Self.attempts(context)): \(reason)."
        case .downloadFailed(let failure, let context):
            return "\(context.request) could not be saved to a file\(Self.attempts(context)): \(failure)."
        case .responseTooLarge(let limit, let context):
            return
                "\(context.request) was stopped\(Self.attempts(context)): the response body is larger than the limit of \(limit) bytes; raise the transport's maximumResponseSize or download it to a file."
        case .jsonError(let failure), .decodeError(let failure):
            // The excerpt may be cut already: what is left is counted from the body, not the excerpt.
            let excerpt = failure.bodyExcerpt
            let total =
                excerpt.utf8.count > Self.descriptionBodyLimit ? max(excerpt.utf8.count, failure.context.response?.body.count ?? 0) : nil
            return failure.description
                + (excerpt.isEmpty ? "" : " Body: \(Redaction.truncate(excerpt, limit: Self.descriptionBodyLimit, totalBytes: total))")
        }
    }

    private static func status(_ context: ErrorContext) -> String {
        guard let code = context.statusCode else { return "unknown" }
        return "\(code) \(HTTPURLResponse.localizedString(forStatusCode: code).capitalized)"
    }

    private static func attempts(_ context: ErrorContext) -> String {
        context.attempts > 1 ? " after \(context.attempts) attempts" : ""
    }

    /// "was not sent" for a call none of whose attempts went out; else "was not sent again after
    /// N attempts", those that did.
    private static func notSentAgain(_ context: ErrorContext) -> String {
        context.attempts > 0 ? "was not sent again after \(context.attempts) attempt\(context.attempts == 1 ? "" : "s")" : "was not sent"
    }

    private static func bodySuffix(_ context: ErrorContext) -> String {
        guard let body = context.response?.body, !body.isEmpty else { return "" }
        return " Body: \(Redaction.standard.bodyExcerpt(body, limit: descriptionBodyLimit))"
    }
}

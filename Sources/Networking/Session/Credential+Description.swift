import Foundation

// Values that hold tokens describe themselves without them: `print`, string interpolation,
// `dump` and a debugger's summary show `<redacted>`, as `HTTPHeaders`, requests, responses and
// errors do (`RedactedMirrors.swift`).

extension Credential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The credential with its tokens replaced by `<redacted>`; the expiry is shown.
    public var description: String {
        let refresh = refreshToken == nil ? "nil" : Redaction.placeholder
        let expiry = expiresAt.map { "\($0)" } ?? "nil"
        return "Credential(accessToken: \(Redaction.placeholder), refreshToken: \(refresh), expiresAt: \(expiry))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "accessToken": Redaction.placeholder, "refreshToken": refreshToken == nil ? "nil" : Redaction.placeholder,
                "expiresAt": expiresAt as Any,
            ], displayStyle: .struct)
    }
}

extension PersistedSession: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The session with the credential's tokens, and secret-named members of the user, redacted.
    public var description: String {
        let shownUser = user.map { Redaction.standard.redact($0).description } ?? "nil"
        return "PersistedSession(credential: \(credential), user: \(shownUser), identity: \(identity ?? "nil"))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "credential": credential, "user": user.map { Redaction.standard.redact($0) } as Any, "identity": identity as Any,
            ], displayStyle: .struct)
    }
}

extension SessionAuthorization: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The authorization with its header value replaced by `<redacted>`, and without whose
    /// session it is (which may name the user).
    public var description: String {
        "SessionAuthorization(headerValue: \(Redaction.placeholder), version: \(version), sessionID: \(sessionID))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self, children: ["headerValue": Redaction.placeholder, "version": version, "sessionID": sessionID],
            displayStyle: .struct)
    }
}

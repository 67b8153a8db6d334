// Apple platforms only. NOT COMPILED OR TESTED ON LINUX CI: FoundationNetworking never delivers
// server-trust challenges, so there URLSessionTransport refuses pinned requests instead (and
// LibcurlTransport pins). Keep this file small and change it only with a macOS test run.
#if canImport(Security)
    import Foundation
    import Security

    extension URLSessionTransportDelegate {
        /// Answers a server-trust challenge for a task.
        ///
        /// Without pins or a certificate authority file, the system decides (default handling).
        /// Otherwise: the authorities of the file become the only anchors, the chain is evaluated
        /// (`SecTrustEvaluateWithError`: chain, expiry and host name), and then, when the request
        /// has pins, the server's own certificate (the chain's first) must have a
        /// SubjectPublicKeyInfo whose SHA-256 is a pin — the leaf only, as libcurl checks it, so a
        /// configuration pins the same way on every platform. A failure cancels the challenge, so nothing is sent, and records the
        /// ``TransportError`` the caller gets.
        func evaluateServerTrust(
            _ challenge: URLAuthenticationChallenge, task: URLSessionTask,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            // The session's security, not the task's request's: the two are the same, and a
            // challenge that cannot be tied to its request must not fall back to the system's trust.
            guard security.requiresPinning || security.certificateAuthorityFile != nil else {
                completionHandler(.performDefaultHandling, nil)
                return
            }
            func reject(_ failure: TransportError) {
                finish(task, with: failure)
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
            guard let trust = challenge.protectionSpace.serverTrust else {
                reject(.tls(.handshakeFailed("the server's trust could not be read to check it")))
                return
            }
            if let file = security.certificateAuthorityFile {
                guard let anchors = Self.certificates(inFile: file) else {
                    reject(.tls(.untrustedCertificate("the certificate authority file \(file.path) holds no readable certificate")))
                    return
                }
                SecTrustSetAnchorCertificates(trust, anchors as CFArray)
                SecTrustSetAnchorCertificatesOnly(trust, true)
            }
            var error: CFError?
            guard SecTrustEvaluateWithError(trust, &error) else {
                reject(.tls(Self.tlsFailure(error)))
                return
            }
            if security.requiresPinning {
                let pins = Set(security.pinnedPublicKeys)
                let leaf = ((SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []).first
                let pin = leaf.flatMap { try? PublicKeyPin(certificateDER: SecCertificateCopyData($0) as Data) }
                guard let pin, pins.contains(pin) else {
                    reject(.pinMismatch(host: challenge.protectionSpace.host))
                    return
                }
            }
            completionHandler(.useCredential, URLCredential(trust: trust))
        }

        /// The certificates of a PEM or DER file, or `nil` when it holds none.
        private static func certificates(inFile url: URL) -> [SecCertificate]? {
            guard let contents = try? Data(contentsOf: url),
                let ders = try? CertificatePins.derCertificates(in: [UInt8](contents))
            else { return nil }
            let certificates = ders.compactMap { SecCertificateCreateWithData(nil, Data($0) as CFData) }
            return certificates.isEmpty ? nil : certificates
        }

        /// The TLS failure for a trust evaluation error.
        private static func tlsFailure(_ error: CFError?) -> TLSFailure {
            guard let error else { return .untrustedCertificate("the server's certificate is not trusted") }
            let message = (error as any Error).localizedDescription
            switch OSStatus(truncatingIfNeeded: CFErrorGetCode(error)) {
            case errSecCertificateExpired, errSecCertificateNotValidYet: return .expiredCertificate(message)
            case errSecHostNameMismatch: return .hostnameMismatch(message)
            default: return .untrustedCertificate(message)
            }
        }
    }
#endif

// Apple platforms only. NOT COMPILED OR TESTED ON LINUX CI: FoundationNetworking never asks for
// a client certificate, so there URLSessionTransport refuses requests that carry one (and
// LibcurlTransport presents it). Keep this file small and change it only with a macOS test run.
#if canImport(Security)
    import Foundation
    import Security

    extension URLSessionTransportDelegate {
        /// Answers a server's request for a client certificate with the identity of a PKCS#12
        /// archive (``URLSessionTransport`` refuses PEM before sending).
        ///
        /// An archive in a file is read at each challenge (once per connection), so a renewed
        /// file is used by the next connection. One that cannot be read or opened with its password
        /// cancels the challenge, so nothing is sent, and fails the task with
        /// ``TLSFailure/handshakeFailed(_:)``, as ``LibcurlTransport`` does.
        func presentClientCertificate(
            _ client: ClientCertificate, task: URLSessionTask,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            func reject(_ reason: String) {
                finish(
                    task, with: .tls(.handshakeFailed(TLSFailure.clientCertificateUnusable("\(client.certificate): \(reason)"))))
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
            let archive: Data
            switch client.certificate {
            case .data(let data): archive = data
            case .file(let url):
                guard let data = try? Data(contentsOf: url) else {
                    reject("the file cannot be read")
                    return
                }
                archive = data
            }
            // Without kSecImportToMemoryOnly (macOS 15, iOS 18: the package's minimums), macOS
            // adds the identity to the default keychain.
            let options: [String: Any] = [
                kSecImportExportPassphrase as String: client.password ?? "", kSecImportToMemoryOnly as String: true,
            ]
            var items: CFArray?
            let status = SecPKCS12Import(archive as CFData, options as CFDictionary, &items)
            guard status == errSecSuccess else {
                reject(
                    status == errSecAuthFailed
                        ? "wrong password" : "not a PKCS#12 archive the system can open, or a wrong password (OSStatus \(status))")
                return
            }
            guard let first = (items as? [[String: Any]])?.first, let value = first[kSecImportItemIdentity as String] else {
                reject("the archive holds no certificate with its private key")
                return
            }
            let object = value as AnyObject
            guard CFGetTypeID(object) == SecIdentityGetTypeID() else {
                reject("the archive holds no certificate with its private key")
                return
            }
            let identity = unsafeDowncast(object, to: SecIdentity.self)
            // The archive's other certificates (its chain, in no documented order), without the
            // client's own, which the identity carries.
            var leaf: SecCertificate?
            let copied = SecIdentityCopyCertificate(identity, &leaf)
            let chain = ((first[kSecImportItemCertChain as String] as? [AnyObject]) ?? []).filter { certificate in
                guard CFGetTypeID(certificate) == SecCertificateGetTypeID() else { return false }
                guard copied == errSecSuccess, let leaf else { return true }
                return !CFEqual(certificate, leaf)
            }
            completionHandler(.useCredential, URLCredential(identity: identity, certificates: chain, persistence: .forSession))
        }
    }
#endif

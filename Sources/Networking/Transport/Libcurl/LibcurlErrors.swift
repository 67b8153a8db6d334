#if os(Linux) && canImport(CCurl)
    import CCurl
    import Foundation

    /// Maps a failed libcurl transfer (its `CURLcode` and the text of its error buffer) to the
    /// ``TransportError`` that ``LibcurlTransport`` documents.
    ///
    /// The code says which phase failed; the message tells TLS failures apart (OpenSSL reports
    /// an untrusted, expired or wrong-host certificate under the same code) and refused from
    /// unreachable connections.
    enum LibcurlErrors {
        /// The transport error for a transfer that ended with `code`.
        ///
        /// - Parameters:
        ///   - code: the transfer's result.
        ///   - message: the error buffer's text, or `curl_easy_strerror`'s when the buffer is empty.
        ///   - host: the host of the request, for ``TransportError/pinMismatch(host:)``.
        ///   - maximumResponseSize: the limit that `CURLE_FILESIZE_EXCEEDED` enforced.
        ///   - answered: whether a response's status line had arrived, so the server was reached.
        static func map(_ code: CURLcode, message: String, host: String, maximumResponseSize: Int, answered: Bool = false)
            -> TransportError
        {
            let lowered = message.lowercased()
            switch code {
            case CURLE_OPERATION_TIMEDOUT:
                return .timedOut
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
                return .network(.hostNotFound)
            case CURLE_COULDNT_CONNECT:
                return .network(connectFailure(message))
            case CURLE_RECV_ERROR where lowered.contains("chunked"):
                // The server answered, with broken chunked framing: not a connectivity failure.
                return .invalidResponse("the chunked transfer encoding of the body is malformed (\(message))")
            case CURLE_RECV_ERROR where lowered.contains("too large response headers"):
                // libcurl's own limit on a whole head (300 KiB).
                return .invalidResponse("the response head is too large (\(message))")
            case CURLE_OUT_OF_MEMORY where answered || lowered.contains("header"):
                // libcurl refuses a header line above its own limit (100 KiB) this way, once the
                // status line is in.
                return .invalidResponse("a header field of the response is too large (\(message))")
            case CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR:
                return (TLSFailure.looksLikeTLS(message) && message.lowercased().contains("certificate"))
                    || TLSFailure.isClientCertificateAlert(message)
                    ? .tls(TLSFailure(classifying: message)) : .network(.connectionLost)
            case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
                return .pinMismatch(host: host)
            case CURLE_SSL_CERTPROBLEM:
                // The client certificate or its key could not be loaded (a file, a format, a
                // password): no handshake, for a reason on this side that may pass (a file being
                // renewed), so a queued request waits rather than being given up.
                return .tls(.handshakeFailed(TLSFailure.clientCertificateUnusable(message)))
            case _ where isTLS(code):
                return .tls(TLSFailure(classifying: message))
            case CURLE_FILESIZE_EXCEEDED:
                return .responseTooLarge(limit: maximumResponseSize)
            case CURLE_UNSUPPORTED_PROTOCOL, CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP2_STREAM,
                CURLE_BAD_CONTENT_ENCODING, CURLE_RANGE_ERROR, CURLE_CHUNK_FAILED:
                return .invalidResponse(message)
            case CURLE_URL_MALFORMAT, CURLE_SEND_FAIL_REWIND, CURLE_BAD_FUNCTION_ARGUMENT, CURLE_UNKNOWN_OPTION,
                CURLE_SETOPT_OPTION_SYNTAX, CURLE_NOT_BUILT_IN:
                return .invalidRequest(message)
            case _ where answered:
                // The server was reached and its answer had begun: not a connectivity failure.
                return .invalidResponse("libcurl error \(code.rawValue) after the response began: \(message)")
            default:
                return .network(.other("libcurl error \(code.rawValue): \(message)"))
            }
        }

        /// Whether `code` is a failure of TLS itself (a certificate, the handshake).
        static func isTLS(_ code: CURLcode) -> Bool {
            switch code {
            case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CIPHER,
                CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE,
                CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_ENGINE_NOTFOUND,
                CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
                true
            default:
                false
            }
        }

        /// A SOCKS proxy's failure (`CURLE_PROXY`, with `CURLINFO_PROXY_ERROR`'s `reason`):
        /// refused credentials (407) and a connection its rules forbid (403) are
        /// ``NetworkFailure/proxyRefused(status:)``; a server that refused the proxy's connection,
        /// and a name this side could not resolve (a `socks5://` proxy from the environment,
        /// which resolves names here), read as without a proxy; credentials too long for SOCKS5
        /// (255 bytes) are this side's error; anything else is in libcurl's words.
        static func mapProxy(reason: Int, message: String) -> TransportError {
            switch reason {
            case Int(CURLPX_USER_REJECTED.rawValue), Int(CURLPX_NO_AUTH.rawValue): .network(.proxyRefused(status: 407))
            case Int(CURLPX_REPLY_NOT_ALLOWED.rawValue): .network(.proxyRefused(status: 403))
            case Int(CURLPX_REPLY_CONNECTION_REFUSED.rawValue): .network(.connectionRefused)
            case Int(CURLPX_RESOLVE_HOST.rawValue): .network(.hostNotFound)
            case Int(CURLPX_LONG_USER.rawValue), Int(CURLPX_LONG_PASSWD.rawValue):
                .invalidRequest("the SOCKS5 proxy's username or password is longer than 255 bytes")
            default: .network(.other("the proxy failed: \(message)"))
            }
        }

        /// Why a response head over `limit` bytes was refused.
        static func headTooLarge(limit: Int) -> String {
            "the response head is too large: over the limit of \(limit) bytes"
        }

        /// Refused, or no route to the network at all.
        private static func connectFailure(_ message: String) -> NetworkFailure {
            let lowered = message.lowercased()
            if lowered.contains("network is unreachable") || lowered.contains("no route to host") {
                return .notConnected
            }
            return .connectionRefused
        }

        /// The message for a failed transfer: the error buffer, else libcurl's text for the code.
        static func message(code: CURLcode, errorBuffer: UnsafePointer<CChar>) -> String {
            let buffered = String(cString: errorBuffer).trimmingCharacters(in: .whitespacesAndNewlines)
            if !buffered.isEmpty { return buffered }
            guard let text = curl_easy_strerror(code) else { return "libcurl error \(code.rawValue)" }
            return String(cString: text)
        }
    }
#endif

#if os(Linux) && canImport(CCurl)
    import CCurl
    import Testing

    @testable import Networking

    @Suite("libcurl error mapping")
    struct LibcurlErrorsTests {
        private func map(_ code: CURLcode, _ message: String = "") -> TransportError {
            LibcurlErrors.map(code, message: message, host: "api.example.com", maximumResponseSize: 1000)
        }

        @Test("Connection failures")
        func network() {
            #expect(map(CURLE_COULDNT_RESOLVE_HOST, "Could not resolve host: x.invalid") == .network(.hostNotFound))
            #expect(map(CURLE_COULDNT_CONNECT, "Failed to connect to 127.0.0.1 port 1: Connection refused") == .network(.connectionRefused))
            #expect(map(CURLE_COULDNT_CONNECT, "Failed to connect to 10.0.0.1 port 80: Network is unreachable") == .network(.notConnected))
            #expect(map(CURLE_PARTIAL_FILE, "transfer closed with 99000 bytes remaining to read") == .network(.connectionLost))
            #expect(map(CURLE_GOT_NOTHING, "Empty reply from server") == .network(.connectionLost))
            #expect(map(CURLE_RECV_ERROR, "Recv failure: Connection reset by peer") == .network(.connectionLost))
            #expect(map(CURLE_OPERATION_TIMEDOUT, "Operation timed out after 1000 milliseconds") == .timedOut)
        }

        @Test("An unknown code is a network failure before the answer began, an invalid response after")
        func unknownCodes() {
            let code = CURLE_FTP_WEIRD_PASV_REPLY
            #expect(map(code, "odd") == .network(.other("libcurl error \(code.rawValue): odd")))
            let answered = LibcurlErrors.map(code, message: "odd", host: "h", maximumResponseSize: 1, answered: true)
            #expect(answered == .invalidResponse("libcurl error \(code.rawValue) after the response began: odd"))
        }

        @Test("TLS failures are told apart by OpenSSL's message")
        func tls() {
            #expect(
                map(CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: self-signed certificate")
                    == .tls(.untrustedCertificate("SSL certificate problem: self-signed certificate")))
            #expect(
                map(CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: unable to get local issuer certificate")
                    == .tls(.untrustedCertificate("SSL certificate problem: unable to get local issuer certificate")))
            #expect(
                map(CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: certificate has expired")
                    == .tls(.expiredCertificate("SSL certificate problem: certificate has expired")))
            let wrongHost = "SSL: no alternative certificate subject name matches target host name '127.0.0.1'"
            #expect(map(CURLE_PEER_FAILED_VERIFICATION, wrongHost) == .tls(.hostnameMismatch(wrongHost)))
            let handshake = "error:0A000410:SSL routines::sslv3 alert handshake failure"
            #expect(map(CURLE_SSL_CONNECT_ERROR, handshake) == .tls(.handshakeFailed(handshake)))
            #expect(
                map(CURLE_SSL_PINNEDPUBKEYNOTMATCH, "SSL: public key does not match pinned public key")
                    == .pinMismatch(host: "api.example.com"))
        }

        @Test("Bad answers, limits and bad requests")
        func others() {
            #expect(
                map(CURLE_UNSUPPORTED_PROTOCOL, "Received HTTP/0.9 when not allowed")
                    == .invalidResponse("Received HTTP/0.9 when not allowed"))
            #expect(
                map(CURLE_WEIRD_SERVER_REPLY, "Unsupported HTTP version in response")
                    == .invalidResponse("Unsupported HTTP version in response"))
            #expect(
                map(CURLE_BAD_CONTENT_ENCODING, "Error while processing content unencoding")
                    == .invalidResponse("Error while processing content unencoding"))
            #expect(map(CURLE_FILESIZE_EXCEEDED, "Maximum file size exceeded") == .responseTooLarge(limit: 1000))
            #expect(map(CURLE_URL_MALFORMAT, "URL rejected: Bad hostname") == .invalidRequest("URL rejected: Bad hostname"))
            #expect(map(CURLE_OUT_OF_MEMORY, "out of memory") == .network(.other("libcurl error 27: out of memory")))
        }

        @Test("An empty error buffer falls back to libcurl's text for the code")
        func message() {
            var buffer = [CChar](repeating: 0, count: 256)
            #expect(LibcurlErrors.message(code: CURLE_COULDNT_CONNECT, errorBuffer: &buffer) == "Couldn't connect to server")
            buffer.replaceSubrange(0..<4, with: [65, 66, 10, 0])
            #expect(LibcurlErrors.message(code: CURLE_COULDNT_CONNECT, errorBuffer: &buffer) == "AB")
        }
    }
#endif

#if os(Linux) && canImport(CCurl)
    import CCurl
    import Foundation

    extension LibcurlTransfer {
        /// Whether this is a plain GET (no body, no sink, no pins, authorities or client certificate
        /// of its own): its handle can serve the next plain GET without `curl_easy_reset`, which would undo the
        /// options every transfer sets alike (see ``configure(_:keepingPlainSetup:)``).
        var isPlain: Bool {
            request.method == .get && request.body == nil && request.responseBodySink == nil
                && !request.security.requiresPinning && request.security.certificateAuthorityFile == nil
                && request.security.clientCertificate == nil
        }

        /// Sets up an easy handle (new, reset, or kept from a plain GET) for this transfer, on the event-loop thread.
        ///
        /// With `keepingPlainSetup`, the handle last served a plain GET that finished and was not
        /// reset: the options every transfer sets alike (signals, protocols, encodings, HTTP
        /// version, callbacks) are still in place, and only this transfer's own are set.
        ///
        /// - Returns: `nil` when every option was accepted, else the error the caller gets.
        func configure(_ easy: UnsafeMutableRawPointer, keepingPlainSetup: Bool) -> TransportError? {
            self.easy = easy
            let context = Unmanaged.passUnretained(self).toOpaque()
            var failure = CURLE_OK
            func check(_ code: CURLcode) {
                if failure == CURLE_OK, code != CURLE_OK { failure = code }
            }
            func set(_ option: CURLoption, _ value: Int) { check(networking_curl_easy_setopt_long(easy, option, value)) }
            func set(_ option: CURLoption, _ value: String) { check(networking_curl_easy_setopt_string(easy, option, value)) }
            func set(_ option: CURLoption, _ value: UnsafeMutableRawPointer?) {
                check(networking_curl_easy_setopt_pointer(easy, option, value))
            }
            func set(_ source: ClientCertificate.Source, file: CURLoption, blob: CURLoption) {
                switch source {
                case .file(let url): set(file, url.path)
                case .data(let data):
                    check(data.withUnsafeBytes { networking_curl_easy_setopt_blob(easy, blob, $0.baseAddress, $0.count) })
                }
            }

            errorBuffer[0] = 0
            set(CURLOPT_PRIVATE, context)
            set(CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer))
            set(CURLOPT_URL, request.url.absoluteString)
            set(CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
            set(CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMilliseconds)
            // Always set, 0 for none: a pooled handle keeps the last transfer's. Below one byte a
            // second for this many seconds is idle; libcurl never counts a paused transfer.
            let idleSeconds = request.idleTimeout.map { Int(min($0.rounded(.up), 1_000_000_000)) } ?? 0
            set(CURLOPT_LOW_SPEED_LIMIT, idleSeconds > 0 ? 1 : 0)
            set(CURLOPT_LOW_SPEED_TIME, idleSeconds)
            if request.responseBodySink == nil {
                // Not for HEAD: libcurl would refuse the announced size of a body that never comes.
                if request.method != .head {
                    check(networking_curl_easy_setopt_off_t(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maximumResponseSize)))
                }
            } else {
                // Bodies streamed to a sink (downloads) are read in 512 KiB pieces rather than
                // libcurl's 16 KiB: a thirty-second of the callbacks, writes and wake-ups per byte.
                set(CURLOPT_BUFFERSIZE, Self.streamedReadSize)
            }
            set(CURLOPT_WRITEDATA, context)
            set(CURLOPT_HEADERDATA, context)
            set(CURLOPT_READDATA, context)
            set(CURLOPT_SEEKDATA, context)
            if !keepingPlainSetup { configureCommonOptions(easy, check: check) }

            let sendsBody = configureMethod(easy, check: check)
            guard let list = makeHeaderList(sendsBody: sendsBody) else {
                return .invalidRequest("the request headers could not be handed to libcurl (out of memory)")
            }
            headerList = list
            check(networking_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list))

            if request.security.requiresPinning {
                set(CURLOPT_PINNEDPUBLICKEY, request.security.pinnedPublicKeys.map(\.description).joined(separator: ";"))
            }
            if let authorities = request.security.certificateAuthorityFile {
                set(CURLOPT_CAINFO, authorities.path)
            }
            if let client = request.security.clientCertificate {
                // Files are read when a connection needs them, bytes copied by libcurl; a handle
                // with these options is reset before it serves another transfer, and libcurl
                // reuses a connection only for the same certificate file or bytes (not key file).
                switch (client.certificate, client.privateKey) {
                case (.data(let certificate), .data(let key)?):
                    // One blob, the key after the certificate (libcurl reads it there): connections
                    // are then told apart by the key too, not only by the certificate.
                    set(.data(certificate + Data("\n".utf8) + key), file: CURLOPT_SSLCERT, blob: CURLOPT_SSLCERT_BLOB)
                default:
                    set(client.certificate, file: CURLOPT_SSLCERT, blob: CURLOPT_SSLCERT_BLOB)
                    if let key = client.privateKey {
                        set(key, file: CURLOPT_SSLKEY, blob: CURLOPT_SSLKEY_BLOB)
                        set(CURLOPT_SSLKEYTYPE, "PEM")
                    }
                }
                set(CURLOPT_SSLCERTTYPE, client.format == .pkcs12 ? "P12" : "PEM")
                // Always set: without a password, OpenSSL would ask for an encrypted key's on the
                // terminal or standard input, on the thread every transfer runs on.
                set(CURLOPT_KEYPASSWD, client.password ?? "")
                // A new connection makes a full handshake with the files as they are now, rather
                // than resume a TLS session made with a certificate since renewed.
                set(CURLOPT_SSL_SESSIONID_CACHE, 0)
            }

            guard failure == CURLE_OK else {
                return .invalidRequest("libcurl refused an option: \(LibcurlErrors.message(code: failure, errorBuffer: errorBuffer))")
            }
            return nil
        }

        /// The options every transfer sets alike: kept by a handle that served a plain GET.
        private func configureCommonOptions(_ easy: UnsafeMutableRawPointer, check: (CURLcode) -> Void) {
            check(networking_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
            check(networking_curl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
            // The URL is built by the library and taken literally: no "/../" squashing.
            check(networking_curl_easy_setopt_long(easy, CURLOPT_PATH_AS_IS, 1))
            // "" asks for every encoding this libcurl decodes (gzip, deflate, br, zstd).
            check(networking_curl_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, ""))
            check(networking_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)))
            // A proxy's answer to CONNECT is not part of the server's head, nor counted in its
            // size (a refusal is read apart, from CURLINFO_HTTP_CONNECTCODE: see `result(of:)`).
            check(networking_curl_easy_setopt_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1))
            // CURLOPT_QUICK_EXIT (libcurl 7.87): a transfer cancelled or timed out while its name
            // still resolves ends at once, its resolver thread left to finish on its own, instead
            // of holding the loop thread — every transfer — until getaddrinfo returns (seconds,
            // with a DNS server that drops queries). Each such thread ends when its lookup does
            // (the resolver's own timeout), so a DNS outage leaves at most one per lookup cut
            // short, for that long. An older libcurl refuses the option: no harm.
            _ = networking_curl_easy_setopt_long(easy, CURLoption(rawValue: 322), 1)
            proxy?.apply(to: easy, check: check)
            if let unixSocketPath { check(networking_curl_easy_setopt_string(easy, CURLOPT_UNIX_SOCKET_PATH, unixSocketPath)) }
            check(
                networking_curl_easy_setopt_write_function(easy, CURLOPT_WRITEFUNCTION) { buffer, size, count, context in
                    guard let context else { return 0 }
                    let transfer = Unmanaged<LibcurlTransfer>.fromOpaque(context).takeUnretainedValue()
                    return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
                })
            check(
                networking_curl_easy_setopt_write_function(easy, CURLOPT_HEADERFUNCTION) { buffer, size, count, context in
                    guard let context else { return 0 }
                    let transfer = Unmanaged<LibcurlTransfer>.fromOpaque(context).takeUnretainedValue()
                    return transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: size * count))
                })
            // Always our reader: libcurl's default one would read the process's standard input.
            check(
                networking_curl_easy_setopt_read_function(easy) { buffer, size, count, context in
                    guard let context else { return networking_curl_readfunc_abort }
                    let transfer = Unmanaged<LibcurlTransfer>.fromOpaque(context).takeUnretainedValue()
                    return transfer.sendBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
                })
            check(
                networking_curl_easy_setopt_seek_function(easy) { context, offset, origin in
                    guard let context, origin == SEEK_SET else { return networking_curl_seekfunc_fail }
                    let transfer = Unmanaged<LibcurlTransfer>.fromOpaque(context).takeUnretainedValue()
                    // Only a rewind is possible (an offset is a `curl_off_t`, wider than a 32-bit `Int`).
                    guard offset == 0 else { return networking_seekfunc_cantseek }
                    return transfer.rewindBody() ? networking_curl_seekfunc_ok : networking_seekfunc_cantseek
                })
        }

        /// How many bytes libcurl reads at once for a body streamed to a sink (its maximum, 512 KiB).
        static let streamedReadSize = 512 * 1024

        /// Sets the method; returns whether the request carries a body (and so `Content-Length`).
        ///
        /// `HEAD` uses `CURLOPT_NOBODY`. A body, and `POST`, `PUT` and `PATCH` even without one
        /// (they send `Content-Length: 0`, which some servers require), go through `CURLOPT_POST`
        /// with the size and the read callback, so the body is read as it is sent (memory, files,
        /// streams); a body of unknown size goes with chunked transfer encoding. Every other method, and a
        /// GET with a body, is `CURLOPT_CUSTOMREQUEST`.
        private func configureMethod(_ easy: UnsafeMutableRawPointer, check: (CURLcode) -> Void) -> Bool {
            let method = request.method
            if method == .head {
                check(networking_curl_easy_setopt_long(easy, CURLOPT_NOBODY, 1))
                return false
            }
            let sendsBody = request.body != nil || method == .post || method == .put || method == .patch
            if sendsBody {
                // A size of -1 (unknown: gzip, a stream without a length) sends the body chunked.
                let size = bodyReader.map { $0.length ?? -1 } ?? 0
                check(networking_curl_easy_setopt_long(easy, CURLOPT_POST, 1))
                check(networking_curl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(size)))
            } else {
                check(networking_curl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1))
            }
            // A GET with a body (a search API's) must say GET, not the POST that sends the body.
            if method != .post, sendsBody || method != .get {
                check(networking_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method.rawValue))
            }
            return sendsBody
        }

        /// The request's header fields as a libcurl list, or `nil` when libcurl is out of memory.
        ///
        /// `Content-Length` is libcurl's to write. An empty value (or one of blanks only) is
        /// written `Name;` (libcurl would drop `Name:`), and `Expect:` turns off `100-continue`,
        /// which would cost a round trip.
        private func makeHeaderList(sendsBody: Bool) -> UnsafeMutablePointer<curl_slist>? {
            var list: UnsafeMutablePointer<curl_slist>?
            var lines = request.headers.filter { !$0.name.caseInsensitiveEquals("Content-Length") }
                .map { field in
                    let value = HeaderValidation.withoutSurroundingBlanks(field.value)
                    return value.isEmpty ? "\(field.name);" : "\(field.name): \(value)"
                }
            if sendsBody, !request.headers.contains("Expect") { lines.append("Expect:") }
            if request.body?.isGzipped == true, !request.headers.contains("Content-Encoding") { lines.append("Content-Encoding: gzip") }
            // At least one line, so that `nil` means only "out of memory". `Expect:` merely
            // removes a field libcurl might add, so it changes nothing on a request without a body.
            if lines.isEmpty { lines.append("Expect:") }
            for line in lines {
                guard let appended = curl_slist_append(list, line) else {
                    if let list { curl_slist_free_all(list) }
                    return nil
                }
                list = appended
            }
            return list
        }
    }
#endif

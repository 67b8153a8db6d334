#if os(Linux)
    import BenchCurl

    /// libcurl driven directly, with no framework and no decoding: the ceiling the transport is
    /// measured against. Same options as `LibcurlTransport` where they matter (no signals,
    /// any content encoding, HTTP/2 over TLS).
    enum RawLibcurl {
        /// One reused easy handle, `curl_easy_perform` in a loop; returns the failures.
        static func sequential(url: String, requests: Int) -> Int {
            guard let easy = curl_easy_init() else { return requests }
            let received = UnsafeMutablePointer<Int>.allocate(capacity: 1)
            received.initialize(to: 0)
            defer {
                curl_easy_cleanup(easy)
                received.deallocate()
            }
            configure(easy, url: url, counter: received)
            var failures = 0
            for _ in 0..<requests {
                var status = 0
                if curl_easy_perform(easy) != CURLE_OK
                    || bench_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK || status != 200
                {
                    failures += 1
                }
            }
            return failures
        }

        /// `concurrency` transfers in flight on one multi handle; each finished handle is added
        /// again until `requests` are done. Returns the failures.
        static func concurrent(url: String, requests: Int, concurrency: Int) -> Int {
            guard let multi = curl_multi_init() else { return requests }
            let received = UnsafeMutablePointer<Int>.allocate(capacity: 1)
            received.initialize(to: 0)
            var handles: [UnsafeMutableRawPointer] = []
            defer {
                for easy in handles {
                    _ = curl_multi_remove_handle(multi, easy)
                    curl_easy_cleanup(easy)
                }
                curl_multi_cleanup(multi)
                received.deallocate()
            }
            var started = 0
            for _ in 0..<min(concurrency, requests) {
                guard let easy = curl_easy_init() else { return requests }
                handles.append(easy)
                configure(easy, url: url, counter: received)
                guard curl_multi_add_handle(multi, easy) == CURLM_OK else { return requests }
                started += 1
            }
            var finished = 0
            var failures = 0
            var running: Int32 = 0
            while finished < requests {
                _ = curl_multi_perform(multi, &running)
                var queued: Int32 = 0
                while let message = curl_multi_info_read(multi, &queued) {
                    guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                    var status = 0
                    _ = bench_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
                    if message.pointee.data.result != CURLE_OK || status != 200 { failures += 1 }
                    finished += 1
                    _ = curl_multi_remove_handle(multi, easy)
                    if started < requests {
                        started += 1
                        // One that cannot be added again fails, with every request not started yet:
                        // the loop never waits for transfers that will not come.
                        if curl_multi_add_handle(multi, easy) != CURLM_OK {
                            let left = requests - started + 1
                            failures += left
                            finished += left
                            started = requests
                        }
                    }
                }
                if finished < requests { _ = curl_multi_poll(multi, nil, 0, 1000, nil) }
            }
            return failures
        }

        private static func configure(_ easy: UnsafeMutableRawPointer, url: String, counter: UnsafeMutablePointer<Int>) {
            _ = bench_curl_easy_setopt_string(easy, CURLOPT_URL, url)
            _ = bench_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
            // The library's and AsyncHTTPClient's limits in these runs: a stalled server fails, never hangs.
            _ = bench_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT, 30)
            _ = bench_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT, 30)
            _ = bench_curl_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "")
            _ = bench_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            _ = bench_curl_easy_setopt_write_function(easy, CURLOPT_WRITEFUNCTION) { _, size, count, context in
                context?.assumingMemoryBound(to: Int.self).pointee += size * count
                return size * count
            }
            _ = bench_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, UnsafeMutableRawPointer(counter))
        }
    }
#endif

#if os(Linux) && canImport(CCurl)
    import CCurl
    import Foundation

    /// The proxy options every transfer of one ``LibcurlTransport`` sets alike, worked out once
    /// from its ``ProxyServer`` (or its choice of none).
    final class LibcurlProxyOptions: Sendable, CustomReflectable {
        /// `CURLOPT_PROXY`: the proxy as a URL, or `""` for direct connections.
        let url: String
        /// `CURLOPT_NOPROXY`: the excluded hosts, comma-separated (`""`: none, not the environment's).
        let excludedHosts: String
        let username: String?
        let password: String?
        /// `CURLOPT_PROXY_CAINFO`, for an HTTPS proxy.
        let certificateAuthorityFile: String?
        /// Whether the connection to the proxy itself is TLS (so a certificate failure may be the proxy's).
        let isTLS: Bool
        /// Why the proxy cannot be used (see ``ProxyServer/problem``).
        let problem: String?

        /// The options for `proxy`; with none, `nil` when the environment's proxy applies
        /// (libcurl's default), else direct connections.
        static func make(proxy: ProxyServer?, readsEnvironment: Bool) -> LibcurlProxyOptions? {
            guard let proxy else { return readsEnvironment ? nil : LibcurlProxyOptions() }
            return LibcurlProxyOptions(proxy)
        }

        private init() {
            url = ""
            excludedHosts = ""
            username = nil
            password = nil
            certificateAuthorityFile = nil
            isTLS = false
            problem = nil
        }

        private init(_ proxy: ProxyServer) {
            let scheme =
                switch proxy.kind {
                case .http: "http"
                case .https: "https"
                // The proxy resolves names (see `ProxyServer.Kind.socks5`).
                case .socks5: "socks5h"
                }
            url = "\(scheme)://\(proxy.authority)"
            // libcurl reads "*" as every host only when it is the whole list.
            excludedHosts = proxy.excludedHosts.contains("*") ? "*" : proxy.excludedHosts.joined(separator: ",")
            username = proxy.username
            password = proxy.password
            certificateAuthorityFile = proxy.kind == .https ? proxy.certificateAuthorityFile?.path : nil
            isTLS = proxy.kind == .https
            problem = proxy.problem
        }

        /// What `dump` and debuggers show (a transport's, a repository's): the password is left out.
        var customMirror: Mirror {
            Mirror(
                self,
                children: [
                    "url": url, "excludedHosts": excludedHosts, "username": username as Any,
                    "password": password == nil ? "none" : "<redacted>",
                ])
        }

        /// Sets the options on an easy handle (after a reset, which clears them).
        func apply(to easy: UnsafeMutableRawPointer, check: (CURLcode) -> Void) {
            check(networking_curl_easy_setopt_string(easy, CURLOPT_PROXY, url))
            check(networking_curl_easy_setopt_string(easy, CURLOPT_NOPROXY, excludedHosts))
            if let username {
                check(networking_curl_easy_setopt_string(easy, CURLOPT_PROXYUSERNAME, username))
                check(networking_curl_easy_setopt_string(easy, CURLOPT_PROXYPASSWORD, password ?? ""))
            }
            if let certificateAuthorityFile {
                check(networking_curl_easy_setopt_string(easy, CURLOPT_PROXY_CAINFO, certificateAuthorityFile))
            }
        }
    }
#endif

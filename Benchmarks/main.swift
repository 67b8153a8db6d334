import Foundation
import Networking

let env = ProcessInfo.processInfo.environment
let api = env["NETWORKING_TEST_API_URL"]!
let fault = env["NETWORKING_TEST_FAULT_URL"]!
let tls = env["NETWORKING_TEST_API_TLS_URL"]!
let expired = env["NETWORKING_TEST_TLS_EXPIRED_URL"]!
let wrong = env["NETWORKING_TEST_TLS_WRONG_HOST_URL"]!
let ca = URL(fileURLWithPath: env["NETWORKING_TEST_CA_FILE"]!)
let transports: [(String, any Transport)] = [("curl", LibcurlTransport()), ("urlsession", URLSessionTransport())]
let cases: [(String, TransportSecurity)] = [
  (fault + "/garbage", .default), (fault + "/close", .default), (fault + "/partial", .default), (fault + "/bad-status", .default), (fault + "/huge", .default),
  (api + "/drop", .default), ("http://127.0.0.1:1/", .default), ("http://nonexistent.invalid/", .default),
  (tls + "/health", .default), (expired + "/health", .default), (wrong + "/health", .default),
  (tls + "/health", TransportSecurity(certificateAuthorityFile: ca)), (expired + "/health", TransportSecurity(certificateAuthorityFile: ca)), (wrong + "/health", TransportSecurity(certificateAuthorityFile: ca)),
  (tls + "/health", TransportSecurity(pinnedPublicKeys: [try! PublicKeyPin(env["NETWORKING_TEST_OTHER_PIN"]!)], certificateAuthorityFile: ca)),
  (api + "/redirect/301?to=/api/v1/echo", .default), (api + "/basic-auth-401", .default),
]
for (name, t) in transports {
  for (u, sec) in cases {
    let start = Date()
    do {
        let r = try await t.send(TransportRequest(method: .get, url: URL(string: u)!, timeout: 5, security: sec))
        print(name, u, r.statusCode, r.body.count, Date().timeIntervalSince(start))
    } catch { print(name, u, "error", error, Date().timeIntervalSince(start)) }
  }
}

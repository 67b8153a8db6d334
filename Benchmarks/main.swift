import Foundation
import Networking

let api = ProcessInfo.processInfo.environment["API"]!
let t = LibcurlTransport()
for path in ["/health", "/gzip", "/status/404", "/redirect/307?to=/api/v1/echo", "/bytes/100000", "/drop"] {
    do {
        let r = try await t.send(TransportRequest(method: .get, url: URL(string: api + path)!))
        print(path, r.statusCode, r.headers.dictionary, r.body.count, r.text.prefix(120))
    } catch { print(path, "error", error) }
}
do {
    let r = try await t.send(TransportRequest(method: .post, url: URL(string: api + "/redirect/307?to=/api/v1/echo")!, headers: ["Content-Type": "application/json"], body: Data("{\"a\":1}".utf8)))
    print(r.statusCode, r.text)
} catch { print("error", error) }

import Foundation
import Networking
import Testing

@testable import NetworkingOffline

@Suite("Batch wire format")
struct BatchWireTests {
    @Test("An item carries method, relative URL, headers without credentials, and the body as text")
    func item() throws {
        let base = try #require(URL(string: "http://api.test/api/v1"))
        let request = TransportRequest(
            method: .post, url: try #require(URL(string: "http://api.test/api/v1/books?x=1")),
            headers: ["Content-Type": "application/json", "Authorization": "Bearer t", "Idempotency-Key": "k1"],
            body: Data(#"{"a":1}"#.utf8))
        let item = try BatchWire.item(for: request, baseURL: base, defaults: ["Authorization": "Bearer t"]).get()
        #expect(item["method"] == "POST")
        #expect(item["relative_url"] == "books?x=1")
        #expect(item["body"] == #"{"a":1}"#)
        #expect(item["headers"] == [["name": "Content-Type", "value": "application/json"], ["name": "Idempotency-Key", "value": "k1"]])
    }

    @Test("An item leaves out a proxy's credential, which is the proxy's, not the server's")
    func proxyCredential() throws {
        let base = try #require(URL(string: "http://api.test/api/v1"))
        let request = TransportRequest(
            method: .get, url: try #require(URL(string: "http://api.test/api/v1/books")),
            headers: ["Proxy-Authorization": "Basic cA==", "X-Api-Key": "k3y"])
        let item = try BatchWire.item(for: request, baseURL: base).get()
        #expect(item["headers"] == [["name": "X-Api-Key", "value": "k3y"]])
    }

    @Test("A request to another host, with a body that is not text in memory, or with its own Authorization cannot go in a batch")
    func refusals() throws {
        let base = try #require(URL(string: "http://api.test/api/v1"))
        let other = TransportRequest(method: .get, url: try #require(URL(string: "http://other.test/x")))
        #expect(throws: RepositoryError.self) { try BatchWire.item(for: other, baseURL: base).get() }
        let file = TransportRequest(
            method: .post, url: try #require(URL(string: "http://api.test/api/v1/x")), body: .file(URL(fileURLWithPath: "/etc/hostname")))
        #expect(throws: RepositoryError.self) { try BatchWire.item(for: file, baseURL: base).get() }
        // A credential of its own would be replaced by the batch request's without a word.
        let own = TransportRequest(
            method: .get, url: try #require(URL(string: "http://api.test/api/v1/x")), headers: ["Authorization": "Basic YTpi"])
        #expect(throws: RepositoryError.self) { try BatchWire.item(for: own, baseURL: base, defaults: ["Authorization": "ApiKey k"]).get() }
        #expect(throws: Never.self) { try BatchWire.item(for: own, baseURL: base, defaults: ["Authorization": "Basic YTpi"]).get() }
    }

    @Test("Answers are checked: a count that differs, a null item, a missing code")
    func answers() throws {
        let request = TransportRequest(method: .post, url: try #require(URL(string: "http://api.test/api/v1/batch")))
        func answer(_ json: String) -> TransportResponse { TransportResponse(statusCode: 200, body: Data(json.utf8)) }
        #expect(throws: RepositoryError.self) { try BatchWire.responses(in: answer("[]"), expected: 1, request: request).get() }
        let items = try BatchWire.responses(
            in: answer(#"[{"code": 201, "headers": [{"name": "X", "value": "y"}], "body": "{}"}, null, {"body": ""}]"#), expected: 3,
            request: request
        ).get()
        #expect(try items[0].get().statusCode == 201)
        #expect(try items[0].get().headers["X"] == "y")
        #expect(throws: RepositoryError.self) { try items[1].get() }
        #expect(throws: RepositoryError.self) { try items[2].get() }
    }

    @Test("An item's headers are read in either form endpoints answer with: a list of name and value, or an object")
    func headersAsAnObject() throws {
        let request = TransportRequest(method: .post, url: try #require(URL(string: "http://api.test/api/v1/batch")))
        let answer = TransportResponse(
            statusCode: 200,
            body: Data(#"[{"code": 307, "headers": {"Location": "/api/v1/books/2", "Retry-After": 5}, "body": null}]"#.utf8))
        let item = try BatchWire.responses(in: answer, expected: 1, request: request).get()[0].get()
        #expect(item.headers["Location"] == "/api/v1/books/2")
        #expect(item.headers["Retry-After"] == nil, "only text values")
    }
}

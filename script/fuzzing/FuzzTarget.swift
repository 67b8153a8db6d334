import Foundation

// script/fuzz's entry point, compiled into the Networking module (so it reaches internal
// parsers) with libFuzzer and AddressSanitizer. The first byte of each input picks a target;
// the rest is what a server or a caller could hand that target. Any crash, sanitizer report or
// leak stops the run with the input that caused it.

/// A decodable model with the shapes APIs send: numbers, strings, optionals, an enum, nesting.
private struct FuzzTargetBook: Decodable {
    enum Genre: String, Decodable { case fiction, poetry }
    let id: Int
    let title: String
    let rating: Double?
    let genre: Genre
    let tags: [String]
}

private let configuration = try? NetworkingConfiguration(
    useSecureConnection: false, domainURL: "127.0.0.1", port: 8000, subdomainURL: "/api/v1",
    decodingFailureHandler: { failure in _ = failure.description })

@_cdecl("LLVMFuzzerTestOneInput")
public func networkingFuzzTarget(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0, let configuration else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let text = String(decoding: bytes, as: UTF8.self)
    switch data[0] % 8 {
    case 0:
        // Response head lines as libcurl hands them over.
        _ = LibcurlHeaderParser.parse(bytes).description
    case 1:
        // A certificate file's contents: PEM or DER.
        _ = try? CertificatePins.pins(inContents: bytes)
    case 2:
        // Bodies in logs and error descriptions.
        _ = Redaction.standard.bodyExcerpt(Data(bytes), limit: 64, pretty: bytes.count % 2 == 0)
        _ = Redaction.standard.redactText(text)
        _ = Redaction.truncate(text, limit: bytes.count % 19)
    case 3:
        _ = RetryPolicy.retryAfter(text, now: Date(timeIntervalSince1970: 1_800_000_000))
    case 4:
        // A caller's path, header and parameters.
        let parts = text.split(separator: "\u{1}", omittingEmptySubsequences: false).map(String.init)
        let path = parts.first ?? ""
        let value = parts.count > 1 ? parts[1] : ""
        let builder = RequestBuilder(configuration: configuration)
        _ = try? builder.build(Endpoint<Void>.get(path, parameters: [value: value, "list": [value, "1"]], headers: ["X-Value": value]))
        _ = try? builder.build(Endpoint<Void>.post(path, parameters: ["nested": ["key": value]]))
        _ = try? builder.build(Endpoint<Void>(.post, path, parameters: [value: true], encoding: .form))
    case 5:
        // A response body decoded into a model, at the top level and at a key path.
        let response = TransportResponse(statusCode: 200, body: Data(bytes))
        let request = RequestSummary(method: .get, url: URL(fileURLWithPath: "/"))
        let decoder = ResponseDecoder(configuration: configuration)
        _ = try? decoder.decode(FuzzTargetBook.self, from: response, request: request, keyPath: nil)
        _ = try? decoder.decode([FuzzTargetBook].self, from: response, request: request, keyPath: "data")
        _ = try? decoder.decode(FuzzTargetBook.self, from: response, request: request, keyPath: "page.items")
    case 6:
        _ = try? JSONValue(parsing: Data(bytes))
    default:
        // FastJSONDecoder against Foundation's JSONDecoder (Tests/NetworkingJSONTests/FastJSONFuzz.swift):
        // any disagreement stops the run.
        bytes.withUnsafeBytes { fastJSONDifferentialFuzz($0) }
    }
    return 0
}

import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

/// Options that must be handled (a route's cache TTL, offline consent): a call carrying one
/// fails before anything is sent unless an interceptor of its chain says it handles it.
@Suite("Options that must be handled")
struct RequiredOptionsTests {
    private let hint = "add a ResponseCache's interceptor to configuration.interceptors"

    private func repository(
        transport: StubTransport, interceptors: [any Interceptor] = [], configurationInterceptors: [any Interceptor] = []
    ) throws -> TestRepository {
        var configuration = try routedConfiguration(RouteTable([Route(name: "books", path: "books")]))
        configuration.interceptors = configurationInterceptors
        return TestRepository(configuration: configuration, transport: transport, interceptors: interceptors)
    }

    @Test("Without an interceptor that handles it, the call fails with the handler hint; nothing is sent")
    func unhandled() async throws {
        // Given
        let transport = StubTransport(routes: [.status(.get, "books", 204)])
        let repository = try repository(transport: transport)
        // When
        let plain = await repository.performRequest(Endpoint<Void>.get("books").with(RequiredCacheTTL.self, 60))
        let routed = await repository.performRequest(Endpoint<Void>.route("books").with(RequiredCacheTTL.self, 60))
        // Then
        #expect(
            invalidRequestReason(plain)
                == "the call asks for RequiredCacheTTL, but no interceptor of this repository handles it: \(hint)")
        #expect(
            invalidRequestReason(routed)
                == "the call \"books\" asks for RequiredCacheTTL, but no interceptor of this repository handles it: \(hint)")
        #expect(plain.failure?.context?.request.url.absoluteString == "http://api.test/api/v1/books")
        #expect(transport.requests.isEmpty)
    }

    @Test("The seams check too: send refuses an unhandled required option; makeRequest an endpoint with digests it cannot add")
    func seams() async throws {
        let transport = StubTransport(routes: [.status(.get, "books", 204), .status(.post, "books", 204)])
        let repository = try repository(transport: transport)
        let request = try repository.makeRequest(for: Endpoint<Void>.get("books"))
        var options = RequestOptions()
        options[RequiredCacheTTL.self] = 60
        let sent = await repository.send(request, context: RequestContext(requiresSession: false, name: "books", options: options))
        #expect(invalidRequestReason(sent).contains(hint))
        #expect(transport.requests.isEmpty)
        let digested = Endpoint<Void>.post("books", parameters: ["a": 1]).withContentDigests([.sha256])
        #expect(throws: RepositoryError.self) { try repository.makeRequest(for: digested) }
        #expect(try await repository.send(request, context: RequestContext(requiresSession: false)).get().statusCode == 204)
    }

    @Test("send refuses a configuration made invalid since, as every call does: its pins could be missing")
    func sendChecksTheConfiguration() async throws {
        // Given: pinning on, and a pin file that cannot be read (so no pins are in its security)
        let transport = StubTransport(routes: [.status(.get, "books", 204)])
        var configuration = try routedConfiguration(RouteTable([Route(name: "books", path: "books")]))
        configuration.usePinningCertificate = true
        configuration.pinnedCertificateFiles = [URL(fileURLWithPath: "/nonexistent/pin.pem")]
        let repository = TestRepository(configuration: configuration, transport: transport)
        let request = TransportRequest(method: .get, url: try #require(URL(string: "http://api.test/api/v1/books")))
        // When
        let sent = await repository.send(request, context: RequestContext(requiresSession: false))
        // Then
        guard case .failure(.invalidConfiguration) = sent else {
            Issue.record("expected invalidConfiguration, got \(sent)")
            return
        }
        #expect(transport.requests.isEmpty)
    }

    @Test("Setting the option to its default value still asks for a handler")
    func defaultValueStillRequired() async throws {
        let transport = StubTransport(routes: [.status(.get, "books", 204)])
        let result = try await repository(transport: transport).performRequest(Endpoint<Void>.get("books").with(RequiredCacheTTL.self, nil))
        #expect(invalidRequestReason(result).contains(hint))
        #expect(transport.requests.isEmpty)
    }

    @Test("An interceptor that handles other options does not count")
    func otherHandler() async throws {
        let transport = StubTransport(routes: [.status(.get, "books", 204)])
        let repository = try repository(transport: transport, interceptors: [HandlingInterceptor(handlesCacheTTL: false)])
        let result = await repository.performRequest(Endpoint<Void>.get("books").with(RequiredCacheTTL.self, 60))
        #expect(invalidRequestReason(result).contains(hint))
        #expect(transport.requests.isEmpty)
    }

    @Test("An interceptor listing the key in handledOptions lets the call through and sees the value", arguments: [false, true])
    func handled(inConfiguration: Bool) async throws {
        // Given
        let handler = HandlingInterceptor(handlesCacheTTL: true)
        let transport = StubTransport(routes: [.status(.get, "books", 204)])
        let repository = try repository(
            transport: transport, interceptors: inConfiguration ? [] : [handler],
            configurationInterceptors: inConfiguration ? [handler] : [])
        // When
        let result = await repository.performRequest(Endpoint<Void>.route("books").with(RequiredCacheTTL.self, 60))
        // Then
        #expect(result.failure == nil)
        #expect(handler.seen == [60])
        #expect(transport.requests.count == 1)
    }

    @Test("Options without a required handler may go unheeded")
    func optional() async throws {
        let transport = StubTransport(routes: [.status(.get, "books", 204)])
        let result = try await repository(transport: transport).performRequest(Endpoint<Void>.get("books").with(OptionalTrace.self, true))
        #expect(result.failure == nil)
        #expect(transport.requests.count == 1)
        #expect(OptionalTrace.requiredHandler == nil)
    }
}

/// An option that must be handled, like a route's cache TTL.
enum RequiredCacheTTL: RequestOptionKey {
    static let defaultValue: TimeInterval? = nil
    static let requiredHandler: String? = "add a ResponseCache's interceptor to configuration.interceptors"
}

/// An option interceptors may ignore.
enum OptionalTrace: RequestOptionKey {
    static let defaultValue = false
}

/// Says it handles the cache TTL (or only the trace option), and records the cache TTL it sees.
final class HandlingInterceptor: Interceptor {
    private let handlesCacheTTL: Bool
    private let values = Mutex<[TimeInterval?]>([])

    init(handlesCacheTTL: Bool) {
        self.handlesCacheTTL = handlesCacheTTL
    }

    var handledOptions: [any RequestOptionKey.Type] { handlesCacheTTL ? [RequiredCacheTTL.self] : [OptionalTrace.self] }

    var seen: [TimeInterval?] { values.withLock { $0 } }

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext) async throws(RepositoryError)
        -> TransportResponse
    {
        values.withLock { $0.append(context.options[RequiredCacheTTL.self]) }
        return try await next(request)
    }
}

import Foundation
import Networking
import Synchronization

/// A `Transport` that answers from a table of routes instead of the network, and records every
/// request it was given: for testing repositories through the real pipeline (request building,
/// interceptors, status validation, custom errors, decoding) without a server.
///
/// ```swift
/// let transport = StubTransport(routes: [
///     .json(.get, "books", #"{"data": [], "page": {"current": 1}}"#),
///     .status(.get, "books/99", 404, json: #"{"code": "not_found"}"#),
///     .failure(.post, "books", .network(.connectionRefused)),
/// ])
/// let repository = BooksRepository(configuration: configuration, transport: transport)
/// ```
///
/// A route matches when its method is equal and the request's URL path ends with the route's
/// path (so `"books/12"` matches `…/api/v1/books/12`); the query is ignored. The first matching
/// route answers. A request no route matches fails loudly with
/// `TransportError.invalidRequest(_:)` naming the request, so a test sees the unexpected call.
///
/// Like a real transport, a call cancelled before or while its route answers throws
/// `TransportError.cancelled`, whatever the route answers (a route that sleeps, `try? await
/// Task.sleep(for:)`, is woken by the cancellation). Unlike one, it does not time requests: a
/// test of a timeout uses a route that fails with it, `.failure(.get, "books", .timedOut)`, which
/// is what a transport throws past `TransportRequest.timeout` — so no test depends on how busy
/// the machine is.
///
/// Thread-safe: it may be used from many tasks at once.
public final class StubTransport: Transport {
    /// One canned answer.
    public struct Route: Sendable {
        /// The method to match.
        public let method: HTTPMethod
        /// The path suffix to match, without a leading `/`.
        public let path: String
        /// Produces the answer for a matched request.
        public let respond: @Sendable (TransportRequest) async throws(TransportError) -> TransportResponse

        /// A route answered by a function of the request.
        public init(
            _ method: HTTPMethod, _ path: String,
            respond: @escaping @Sendable (TransportRequest) async throws(TransportError) -> TransportResponse
        ) {
            self.method = method
            self.path = path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            self.respond = respond
        }

        /// A route answered with a status, JSON text and `Content-Type: application/json`.
        public static func json(_ method: HTTPMethod, _ path: String, status: Int = 200, _ json: String) -> Route {
            Self.status(method, path, status, json: json)
        }

        /// A route answered with a status and, optionally, a JSON body.
        public static func status(
            _ method: HTTPMethod, _ path: String, _ status: Int, json: String? = nil, headers: HTTPHeaders = [:]
        ) -> Route {
            var allHeaders = headers
            if json != nil, allHeaders["Content-Type"] == nil { allHeaders["Content-Type"] = "application/json" }
            let body = Data((json ?? "").utf8)
            let responseHeaders = allHeaders
            return Route(method, path) { request throws(TransportError) in
                TransportResponse(statusCode: status, headers: responseHeaders, body: body, url: request.url)
            }
        }

        /// A route that fails as a transport would, for example with `.network(.connectionRefused)`.
        public static func failure(_ method: HTTPMethod, _ path: String, _ error: TransportError) -> Route {
            Route(method, path) { _ throws(TransportError) in throw error }
        }

        func matches(_ request: TransportRequest) -> Bool {
            guard request.method == method else { return false }
            let requestPath = request.url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            return requestPath == path || requestPath.hasSuffix("/" + path)
        }
    }

    private let routes: [Route]
    private let recorded = Mutex<[TransportRequest]>([])

    /// Creates a transport that answers from `routes`, first match first.
    public init(routes: [Route]) {
        self.routes = routes
    }

    /// Every request sent so far, in order.
    public var requests: [TransportRequest] { recorded.withLock { $0 } }

    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        recorded.withLock { $0.append(request) }
        if Task.isCancelled { throw .cancelled }
        guard let route = routes.first(where: { $0.matches(request) }) else {
            throw .invalidRequest("StubTransport has no route for \(request.summary)")
        }
        let outcome: Result<TransportResponse, TransportError>
        do throws(TransportError) {
            outcome = .success(try await route.respond(request))
        } catch {
            outcome = .failure(error)
        }
        // Cancelled meanwhile: a real transport would have stopped, not answered.
        if Task.isCancelled { throw .cancelled }
        return try outcome.get()
    }
}

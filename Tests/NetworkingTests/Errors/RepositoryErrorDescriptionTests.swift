import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

@Suite("RepositoryError descriptions")
struct RepositoryErrorDescriptionTests {
    /// Secrets that must never appear in a description, whatever carried them.
    static let secrets = ["SECRET-HEADER", "SECRET-BODY", "SECRET-QUERY", "SECRET-PASSWORD", "SECRET-REFRESH"]

    static let url = URL(string: "http://api.test/api/v1/login?access_token=SECRET-QUERY&page=2")!
    static let request = RequestSummary(method: .post, url: url)
    static let loginBody = #"""
        {"token": "SECRET-BODY", "refresh_token": "SECRET-REFRESH", "user": {"id": 1, "name": "Ann", "password": "SECRET-PASSWORD"}, "note": "\#(String(repeating: "n", count: 2000))"}
        """#
    static let response = TransportResponse(
        statusCode: 400, headers: ["Authorization": "Bearer SECRET-HEADER", "Set-Cookie": "sid=SECRET-HEADER"],
        body: Data(loginBody.utf8), url: url)
    static let context = ErrorContext(request: request, response: response)
    static let bare = ErrorContext(request: request)

    /// One of every case, with credentials in every place they can hide.
    static func everyCase() async throws -> [RepositoryError] {
        // Decoding failures come from the real decoder, through a stub.
        let transport = StubTransport(routes: [
            .json(.post, "login", status: 200, loginBody),
            .status(.get, "echo", 200, json: "<html>token=SECRET-BODY&password=SECRET-PASSWORD</html>"),
        ])
        let repository = TestRepository(configuration: try makeConfiguration(decodingFailureHandler: { _ in }), transport: transport)
        let endpoint = Endpoint<[Book]>(.post, "login", parameters: ["password": "SECRET-PASSWORD"])
        let decodeError = try #require(await repository.performAuthenticationRequest(endpoint).failure)
        let jsonError = try #require(await repository.performAuthenticationRequest(Endpoint<Book>.get("echo")).failure)
        return [
            .invalidConfiguration(reason: "domainURL \"\" is empty"),
            .invalidURL(reason: "\"a b\" does not form a valid URL"),
            .invalidRequest(reason: "parameter \"price\" is nan", request: request),
            .invalidRequest(reason: "bad", request: nil),
            .unauthenticatedSession(nil),
            .unauthenticatedSession(ErrorContext(request: request, response: TransportResponse(statusCode: 401, body: response.body))),
            .requestError(context),
            .customError(name: "wrong_credentials", error: BooksError.wrongCredentials, context: context),
            .noNetworkConnection(.connectionRefused, bare),
            .timeout(bare),
            .timeout(ErrorContext(request: request, response: TransportResponse(statusCode: 202, body: response.body))),
            .tlsError(.untrustedCertificate("self-signed certificate"), bare),
            .pinningFailed(host: "api.test", context: bare),
            .pinningUnsupported(transport: "URLSessionTransport", context: bare),
            .cancelled(nil),
            .cancelled(bare),
            .invalidResponse(reason: "the response body is larger than the limit of 10 bytes", context: bare),
            decodeError,
            jsonError,
        ]
    }

    @Test("Every case has a description, naming method and URL when there is a request")
    func everyCaseDescribed() async throws {
        for error in try await Self.everyCase() {
            // Given / When
            let description = error.description
            // Then
            #expect(!description.isEmpty)
            #expect(!description.contains(".."), "\(description)")
            #expect(error.errorDescription == description)
            #expect(error.localizedDescription == description)
            if let request = error.context?.request {
                #expect(description.contains("\(request.method) http://api.test/api/v1/"), "\(description)")
            }
        }
    }

    @Test("No credential appears in any description, however it is printed")
    func noCredentials() async throws {
        for error in try await Self.everyCase() {
            for text in [error.description, "\(error)", String(reflecting: error), error.localizedDescription] {
                for secret in Self.secrets {
                    #expect(!text.contains(secret), "\(secret) leaked: \(text)")
                }
            }
        }
    }

    @Test("A refresher's error reads as part of the refresh failure's sentence, without a doubled full stop")
    func nestedInARefreshFailure() async throws {
        for error in try await Self.everyCase() {
            for context in [nil, Self.bare] {
                let description = RepositoryError.sessionRefreshFailed(.refresherFailed(error), context).description
                #expect(!description.contains(".."), "\(description)")
                #expect(description.hasSuffix(". Log in again if the session has ended."), "\(description)")
            }
        }
    }

    @Test("A refresh that failed for want of a network is a connectivity failure; one the server answered is not")
    func refreshConnectivity() {
        let offline = RepositoryError.noNetworkConnection(.connectionRefused, Self.bare)
        #expect(RepositoryError.sessionRefreshFailed(.refresherFailed(offline), Self.bare).isConnectivityFailure)
        #expect(RepositoryError.sessionRefreshFailed(.refresherFailed(.timeout(Self.bare)), nil).isConnectivityFailure)
        let answered = RepositoryError.requestError(ErrorContext(request: Self.request, response: TransportResponse(statusCode: 503)))
        #expect(!RepositoryError.sessionRefreshFailed(.refresherFailed(answered), nil).isConnectivityFailure)
        #expect(!RepositoryError.sessionRefreshFailed(.excessiveRefresh(maximum: 5, interval: 30), nil).isConnectivityFailure)
    }

    @Test(
        "A blocking call's timeout with an answer: during a retry's wait it is not a connectivity failure, during a refresh after a 401 it is"
    )
    func timeoutWithAnAnswer() {
        let busy = RepositoryError.timeout(ErrorContext(request: Self.request, response: TransportResponse(statusCode: 503)))
        #expect(!busy.isConnectivityFailure)
        #expect(
            busy.description.contains("ran out of time waiting to try again: its last answer was status 503 Service Unavailable."),
            "\(busy)")
        let refreshing = RepositoryError.timeout(ErrorContext(request: Self.request, response: TransportResponse(statusCode: 401)))
        #expect(refreshing.isConnectivityFailure)
        #expect(
            refreshing.description.contains(
                "ran out of time waiting for its session to be refreshed: its last answer was status 401 Unauthorized."), "\(refreshing)")
        #expect(RepositoryError.timeout(Self.bare).isConnectivityFailure)
    }

    @Test("A refresh failure says whether its call was held back before sending or refused with a 401")
    func refreshFailureSaysWhetherSent() {
        let failure = RefreshFailure.refresherFailed(.noNetworkConnection(.connectionRefused, Self.bare))
        let unsent = RepositoryError.sessionRefreshFailed(failure, ErrorContext(request: Self.request, attempts: 0)).description
        #expect(unsent.hasPrefix("\(Self.request) was not sent: the session could not be refreshed"), "\(unsent)")
        let refused = ErrorContext(request: Self.request, response: TransportResponse(statusCode: 401))
        let sent = RepositoryError.sessionRefreshFailed(failure, refused).description
        #expect(sent.hasPrefix("\(Self.request) was refused (status 401) and the session could not be refreshed"), "\(sent)")
        let refusedLater = ErrorContext(request: Self.request, response: TransportResponse(statusCode: 401), attempts: 3)
        let late = RepositoryError.sessionRefreshFailed(failure, refusedLater).description
        #expect(
            late.hasPrefix("\(Self.request) was refused (status 401) after 3 attempts and the session could not be refreshed"), "\(late)")
        // A retry held back after earlier attempts went out says so.
        let retry = RepositoryError.sessionRefreshFailed(failure, ErrorContext(request: Self.request, attempts: 2)).description
        #expect(retry.hasPrefix("\(Self.request) was not sent again after 2 attempts: the session could not be refreshed"), "\(retry)")
    }

    @Test("A retry not sent because its session ended says how many attempts went out, and not that nothing was sent")
    func sessionEndedBeforeRetry() {
        func ended(attempts: Int) -> String {
            var context = ErrorContext(request: Self.request, attempts: attempts)
            context.sessionEnded = true
            return RepositoryError.unauthenticatedSession(context).description
        }
        #expect(ended(attempts: 1).hasPrefix("\(Self.request) was not sent again after 1 attempt: the session it was signed in has ended"))
        #expect(!ended(attempts: 1).contains("Nothing was sent") && !ended(attempts: 1).contains("rejected"))
        #expect(ended(attempts: 0).hasPrefix("\(Self.request) was not sent: the session it was signed in has ended"))
        // A context an app made (a refresher's own error) keeps the 401 wording, and the flag is
        // not part of equality.
        let own = ErrorContext(request: Self.request)
        #expect(RepositoryError.unauthenticatedSession(own).description.contains("was rejected as unauthenticated"))
        var flagged = own
        flagged.sessionEnded = true
        #expect(flagged == own && flagged.hashValue == own.hashValue)
        let pinned = RepositoryError.pinningFailed(host: "api.test", context: ErrorContext(request: Self.request, attempts: 2))
        #expect(pinned.description.contains("Its last attempt sent nothing."), "\(pinned)")
    }

    @Test("A refresher's call that needed the session is told once; a decoding failure ends its sentence before the body")
    func nestedOnce() async throws {
        let inner = RepositoryError.sessionRefreshFailed(
            .refresherFailed(.invalidRequest(reason: "the token refresher's call needs the session it is refreshing", request: nil)), nil)
        let outer = RepositoryError.sessionRefreshFailed(.refresherFailed(inner), Self.bare).description
        #expect(outer.components(separatedBy: "Log in again").count == 2, "\(outer)")
        #expect(outer.components(separatedBy: "could not be refreshed").count == 2, "\(outer)")
        #expect(outer.contains("refreshed: the refresh failed: the request cannot be sent as it is"), "\(outer)")
        for error in try await Self.everyCase() {
            guard case .decodeError(let failure) = error else { continue }
            #expect(error.description.hasPrefix(failure.description))
            #expect(failure.description.hasSuffix("."), "\(failure.description)")
        }
    }

    @Test(
        "A sentence becomes a clause: its full stop goes, and a plain capitalised first word is lowered, not an acronym or a type",
        arguments: [
            ("The file “a.json” couldn’t be opened.", "the file “a.json” couldn’t be opened"),
            ("Unexpected character '<' at byte offset 0.", "unexpected character '<' at byte offset 0"),
            ("GET http://api.test/a did not reach the server.", "GET http://api.test/a did not reach the server"),
            ("ValidationError(field: \"name\")", "ValidationError(field: \"name\")"),
            ("JSON is not allowed here", "JSON is not allowed here"),
            ("Done.", "Done"),
        ])
    func clauses(sentence: String, clause: String) {
        #expect(sentence.clause == clause)
    }

    @Test("A client certificate's failure points at the client certificate, a server's at the server's")
    func tlsAdvice() {
        let unusable = RepositoryError.tlsError(.handshakeFailed("the client certificate could not be used: no such file"), Self.bare)
        let refused = RepositoryError.tlsError(TLSFailure(classifying: "tlsv13 alert certificate required"), Self.bare)
        let server = RepositoryError.tlsError(.untrustedCertificate("self-signed certificate"), Self.bare)
        for client in [unusable, refused] {
            #expect(client.description.hasSuffix("Check the client certificate, its key and their password."), "\(client)")
        }
        #expect(server.description.contains("Check the server's certificate"))
    }

    @Test("A refresh window of any length is described, infinite and fractional ones too")
    func refreshWindows() {
        func text(_ interval: TimeInterval) -> String {
            RepositoryError.sessionRefreshFailed(.excessiveRefresh(maximum: 5, interval: interval), nil).description
        }
        #expect(text(30).contains("more than 5 refreshes within 30 seconds"))
        #expect(text(2.5).contains("within 2.5 seconds"))
        #expect(text(.infinity).contains("within inf seconds"))
    }

    @Test("Bodies in descriptions are truncated")
    func truncated() throws {
        // Given a 2 KB body
        let error = RepositoryError.requestError(Self.context)
        // When
        let description = error.description
        // Then
        #expect(description.contains("more bytes)"))
        #expect(description.utf8.count < 600)
        #expect(description.contains("Body: {"))
    }

    @Test("A decoding failure's excerpt, cut again for the description, counts what is left of the body")
    func decodingExcerptCount() {
        let body = Data(("[" + String(repeating: "\"abcdefghij\",", count: 10_000) + "1]").utf8)
        let context = ErrorContext(request: Self.request, response: TransportResponse(statusCode: 200, body: body))
        let failure = DecodingFailure(
            kind: .mismatch, entityType: "Book", context: context, codingPath: "[0]", reason: "expected Book",
            bodyExcerpt: String(repeating: "x", count: DecodingFailure.excerptLimit) + "… (999 more bytes)")
        #expect(RepositoryError.decodeError(failure).description.hasSuffix("… (\(body.count - 300) more bytes)"))
    }

    @Test("Statuses are described with their reason phrase; unknown statuses still read well")
    func statuses() {
        let notFound = RepositoryError.requestError(
            ErrorContext(request: Self.request, response: TransportResponse(statusCode: 404)))
        let odd = RepositoryError.requestError(ErrorContext(request: Self.request, response: TransportResponse(statusCode: 599)))
        let none = RepositoryError.requestError(Self.bare)
        #expect(notFound.description.contains("failed with status 404 Not Found."), "\(notFound)")
        #expect(odd.description.contains("599"))
        #expect(none.description.contains("status unknown"))
    }

    @Test(
        "An error left after retries says how many attempts were made: a status, mapped to a custom error or not, a TLS failure, an invalid response, a proxy refusal, a rejection, a body too large, a file not saved"
    )
    func attemptsAfterRetries() {
        let retried = ErrorContext(request: Self.request, response: TransportResponse(statusCode: 503), attempts: 3)
        let plain = RepositoryError.requestError(retried)
        let custom = RepositoryError.customError(name: "maintenance", error: BooksError.wrongCredentials, context: retried)
        #expect(plain.description.contains("failed with status 503 Service Unavailable after 3 attempts."), "\(plain)")
        #expect(custom.description.contains("(status 503 Service Unavailable) after 3 attempts."), "\(custom)")
        let unanswered = ErrorContext(request: Self.request, attempts: 3)
        let tls = RepositoryError.tlsError(.handshakeFailed("unexpected EOF"), unanswered)
        let invalid = RepositoryError.invalidResponse(reason: "a malformed status line", context: unanswered)
        #expect(tls.description.contains("failed after 3 attempts: "), "\(tls)")
        #expect(invalid.description.contains("received an invalid response after 3 attempts: "), "\(invalid)")
        let rejected = ErrorContext(request: Self.request, response: TransportResponse(statusCode: 401), attempts: 2)
        let tooLarge = RepositoryError.responseTooLarge(limit: 10, context: unanswered)
        let unsaved = RepositoryError.downloadFailed(.fileSystem("no space left"), unanswered)
        let proxy = RepositoryError.noNetworkConnection(.proxyRefused(status: 403), unanswered)
        let expired = RepositoryError.unauthenticatedSession(rejected)
        let refused = RepositoryError.authenticationFailed(rejected)
        #expect(tooLarge.description.contains("was stopped after 3 attempts: "), "\(tooLarge)")
        #expect(unsaved.description.contains("could not be saved to a file after 3 attempts: "), "\(unsaved)")
        #expect(proxy.description.contains("did not reach the server after 3 attempts: "), "\(proxy)")
        #expect(expired.description.contains("(status 401) after 2 attempts; "), "\(expired)")
        #expect(refused.description.contains("(status 401) after 2 attempts: "), "\(refused)")
    }

    @Test("An echo of the request, as httpbin sends it, does not bring the credentials back")
    func echoedRequest() {
        // Given a body that repeats the request's URL and headers
        let echo = #"""
            {"url": "http://api.test/anything?access_token=SECRET-QUERY&page=2", "args": {"access_token": "SECRET-QUERY"},
             "headers": {"Authorization": "Bearer SECRET-HEADER"}, "data": "{\"password\": \"SECRET-PASSWORD\"}"}
            """#
        let error = RepositoryError.requestError(
            ErrorContext(request: Self.request, response: TransportResponse(statusCode: 500, body: Data(echo.utf8))))
        // When
        let description = error.description
        // Then
        for secret in Self.secrets { #expect(!description.contains(secret), "\(secret) leaked: \(description)") }
        #expect(description.contains("page=2"))
    }

    @Test("Error accessors expose context, status and connectivity")
    func accessors() async throws {
        let requestError = RepositoryError.requestError(Self.context)
        #expect(requestError.statusCode == 400)
        #expect(requestError.context == Self.context)
        #expect(RepositoryError.invalidConfiguration(reason: "x").context == nil)
        #expect(RepositoryError.invalidRequest(reason: "x", request: Self.request).context == Self.bare)
        #expect(RepositoryError.cancelled(nil).statusCode == nil)
    }
}

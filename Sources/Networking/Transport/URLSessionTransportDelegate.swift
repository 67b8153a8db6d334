import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Collects each task's response and body, and resumes its caller exactly once.
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    typealias Continuation = CheckedContinuation<Result<TransportResponse, TransportError>, Never>

    private struct Exchange {
        var continuation: Continuation
        var request: TransportRequest
        var body = Data()
        /// Whether the body goes to the request's sink instead of `body`.
        var streams = false
        var rejectedChallenge = false
        var failure: TransportError?
        var timer: DeadlineTimer?
        var progress = TransferProgress()

        /// Updates the progress and returns what to tell the request's progress handler, unless
        /// the exchange has already failed. The caller delivers it after releasing the lock: a
        /// handler may cancel its own call, which takes the lock again.
        mutating func report(_ update: (inout TransferProgress) -> Void) -> ProgressReport? {
            update(&progress)
            guard failure == nil, let handler = request.progress else { return nil }
            return ProgressReport(handler: handler, snapshot: progress)
        }
    }

    /// A progress update to deliver outside the lock.
    private struct ProgressReport {
        let handler: ProgressHandler
        let snapshot: TransferProgress

        func deliver() {
            BlockingGuard.runningTransportCallback { handler(snapshot) }
        }
    }

    private let maximumResponseSize: Int
    /// What every connection of this delegate's session is checked against: a session serves
    /// the requests of one ``TransportSecurity`` only, so a server-trust challenge is judged by
    /// it even when it cannot be tied to a task's request.
    let security: TransportSecurity
    // `URLSessionTask` identifiers are unique within a session.
    private let exchanges = Mutex<[Int: Exchange]>([:])

    init(maximumResponseSize: Int, security: TransportSecurity) {
        self.maximumResponseSize = maximumResponseSize
        self.security = security
    }

    func register(_ task: URLSessionTask, request: TransportRequest, continuation: Continuation) {
        var exchange = Exchange(continuation: continuation, request: request)
        exchange.progress.totalBytesToSend = request.body?.length
        exchanges.withLock { $0[task.taskIdentifier] = exchange }
    }

    func attach(_ timer: DeadlineTimer, to task: URLSessionTask) {
        let attached = exchanges.withLock { exchanges -> Bool in
            guard exchanges[task.taskIdentifier] != nil else { return false }
            exchanges[task.taskIdentifier]?.timer = timer
            return true
        }
        if !attached { timer.cancel() }
    }

    /// The request a task was registered with, while it runs.
    func request(of task: URLSessionTask) -> TransportRequest? {
        exchanges.withLock { $0[task.taskIdentifier]?.request }
    }

    /// Decides how the task ends before URLSession reports it (cancellation, timeout, pin mismatch).
    func finish(_ task: URLSessionTask, with failure: TransportError) {
        exchanges.withLock { exchanges in
            if exchanges[task.taskIdentifier]?.failure == nil { exchanges[task.taskIdentifier]?.failure = failure }
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        // The head: a request with a sink says whether it takes the body.
        if let http = response as? HTTPURLResponse, let sink = request(of: dataTask)?.responseBodySink {
            let head = ResponseHead(statusCode: http.statusCode, headers: Self.headers(of: http), url: http.url)
            let streams = BlockingGuard.runningTransportCallback { sink.begin(head, canPause: false, resume: {}) }
            exchanges.withLock { $0[dataTask.taskIdentifier]?.streams = streams }
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // Once the exchange has failed (cancelled, timed out, a sink refusal), bytes already queued
        // go nowhere: the sink and the progress handler hear nothing after the end.
        let (ended, sink) = exchanges.withLock { exchanges -> (Bool, (any ResponseBodySink)?) in
            guard let exchange = exchanges[dataTask.taskIdentifier] else { return (false, nil) }
            return (exchange.failure != nil, exchange.streams ? exchange.request.responseBodySink : nil)
        }
        if ended { return }
        if let sink {
            // Outside the lock: the sink writes (to a file, say) on this thread.
            let status = BlockingGuard.runningTransportCallback { data.withUnsafeBytes { sink.receive($0) } }
            let (failed, report) = exchanges.withLock { exchanges -> (Bool, ProgressReport?) in
                if let error = status.failureWithoutPause {
                    guard exchanges[dataTask.taskIdentifier]?.failure == nil else { return (false, nil) }
                    exchanges[dataTask.taskIdentifier]?.failure = error
                    return (true, nil)
                }
                let expected = dataTask.response?.expectedContentLength ?? -1
                let report = exchanges[dataTask.taskIdentifier]?.report {
                    $0.bytesReceived += Int64(data.count)
                    $0.totalBytesToReceive = expected >= 0 ? expected : nil
                }
                return (false, report)
            }
            if failed { dataTask.cancel() }
            report?.deliver()
            return
        }
        let (cancelNow, report) = exchanges.withLock { exchanges -> (Bool, ProgressReport?) in
            guard let received = exchanges[dataTask.taskIdentifier]?.body.count else { return (false, nil) }
            guard received + data.count <= maximumResponseSize else {
                // Cancel once: the bytes that keep arriving until URLSession processes the
                // cancellation are dropped. (`cancel()` waits for FoundationNetworking's
                // process-wide work queue; calling it for every chunk of a flood piles up
                // blocked threads.)
                guard exchanges[dataTask.taskIdentifier]?.failure == nil else { return (false, nil) }
                exchanges[dataTask.taskIdentifier]?.failure = .responseTooLarge(limit: maximumResponseSize)
                return (true, nil)
            }
            exchanges[dataTask.taskIdentifier]?.body.append(data)
            let expected = dataTask.response?.expectedContentLength ?? -1
            let report = exchanges[dataTask.taskIdentifier]?.report {
                $0.bytesReceived += Int64(data.count)
                $0.totalBytesToReceive = expected >= 0 ? expected : nil
            }
            return (false, report)
        }
        if cancelNow { dataTask.cancel() }
        report?.deliver()
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        let report = exchanges.withLock { exchanges in
            exchanges[task.taskIdentifier]?.report {
                $0.bytesSent = totalBytesSent
                if totalBytesExpectedToSend > 0 { $0.totalBytesToSend = totalBytesExpectedToSend }
            }
        }
        report?.deliver()
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Every redirect is delivered to URLSessionTransport, which follows it with the shared
        // RedirectPolicy (FoundationNetworking on Linux would drop the body of a 307/308).
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Security)
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust {
                evaluateServerTrust(challenge, task: task, completionHandler: completionHandler)
                return
            }
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodClientCertificate,
                let client = security.clientCertificate
            {
                presentClientCertificate(client, task: task, completionHandler: completionHandler)
                return
            }
            // Apple platforms: the system's handling delivers a 401 as it came (the ephemeral
            // session stores no credentials) and goes on without a client certificate when a
            // server only asks for one; cancelling would fail both as `.cancelled`.
            completionHandler(.performDefaultHandling, nil)
        #else
            // Linux: HTTP authentication challenges come from a 401 with WWW-Authenticate. Declining
            // them delivers the 401 to the caller; on Swift 6.3.1 default handling would hang forever.
            exchanges.withLock { $0[task.taskIdentifier]?.rejectedChallenge = true }
            completionHandler(.cancelAuthenticationChallenge, nil)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        exchange.timer?.cancel()
        exchange.continuation.resume(returning: Self.outcome(of: exchange, task: task, error: error))
    }

    private static func outcome(of exchange: Exchange, task: URLSessionTask, error: (any Error)?) -> Result<
        TransportResponse, TransportError
    > {
        let httpResponse = task.response as? HTTPURLResponse
        if exchange.rejectedChallenge, let httpResponse, httpResponse.statusCode == 401 {
            return .success(transportResponse(httpResponse, body: exchange.body))
        }
        if let failure = exchange.failure { return .failure(failure) }
        if let error { return .failure(URLSessionTransportErrors.map(error, sending: exchange.request)) }
        guard let httpResponse else { return .failure(.invalidResponse("the server's answer is not an HTTP response")) }
        return .success(transportResponse(httpResponse, body: exchange.body))
    }

    private static func transportResponse(_ response: HTTPURLResponse, body: Data) -> TransportResponse {
        TransportResponse(statusCode: response.statusCode, headers: headers(of: response), body: body, url: response.url)
    }

    private static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = (value as? String).map(HeaderValidation.cleaned) else { continue }
            // URLSession joins repeated fields with ", ", which cannot be undone in general; for
            // Set-Cookie (whose dates hold commas) it is undone with the cookie grammar.
            if name.caseInsensitiveEquals("Set-Cookie") {
                for cookie in SetCookieParser.split(value) { headers.add(name: name, value: cookie) }
            } else {
                headers.add(name: name, value: value)
            }
        }
        return headers
    }
}

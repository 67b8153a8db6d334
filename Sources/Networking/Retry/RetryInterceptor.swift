import Foundation

/// Sends a request again, after a wait, while the ``RetryPolicy`` says so: the call's own
/// (``RetryPolicyKey``), or else the configuration's.
///
/// The wait is taken from the configuration's clock and ends at once when the task is cancelled,
/// which ends the call with ``RepositoryError/cancelled(_:)``.
struct RetryInterceptor: Interceptor {
    let policy: RetryPolicy
    let clock: NetworkingClock

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        let policy = context.options[RetryPolicyKey.self] ?? policy
        if let problem = policy.problem {
            throw .invalidRequest(reason: "the call's retryPolicy: \(problem)", request: request.summary)
        }
        guard policy.maximumAttempts > 1 else { return try await next(request) }
        var request = request
        var attempt = 1
        while true {
            context.record.attempt = attempt
            let outcome: RetryPolicy.Outcome
            do {
                outcome = .response(try await next(request))
            } catch {
                outcome = .failure(error)
            }
            // A streamed body is read as it is sent, once, and a streamed response's reader has
            // taken bytes a new attempt would repeat: the attempt's outcome is the call's. So is
            // an answer served from storage (a cache's, a cache-only call's made-up 504 too):
            // asking again would only get it again, after a wait.
            guard request.body?.isStreamed != true, (request.responseBodySink as? ChunkSink)?.hasDelivered != true,
                !outcome.isStoredAnswer,
                let delay = policy.delay(after: outcome, attempt: attempt, method: request.method, now: clock.now())
            else {
                switch outcome {
                case .response(let response): return response
                case .failure(let error): throw error
                }
            }
            do {
                // Throws at once when the task was cancelled while the attempt ran.
                try Task.checkCancellation()
                try await clock.sleep(.clampedSeconds(delay))
            } catch {
                if case .response(let response) = outcome {
                    throw .cancelled(ErrorContext(request: request.summary, response: response))
                }
                throw .cancelled(ErrorContext(request: request.summary))
            }
            // A resumable download asks for the rest of what it kept, not again for what it has.
            if let sink = request.responseBodySink as? any ResumingBodySink { request = sink.retrying(request) }
            attempt += 1
        }
    }
}

extension RetryPolicy.Outcome {
    /// Whether the attempt was answered from storage (a cache's `.cache`, `.revalidated` or
    /// `.stale`) rather than by the server's own answer.
    fileprivate var isStoredAnswer: Bool {
        if case .response(let response) = self { return response.source != .network }
        return false
    }
}

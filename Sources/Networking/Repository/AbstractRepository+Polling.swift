import Foundation

extension AbstractRepository {
    /// Sends the endpoint and, while the server answers 202 Accepted, waits
    /// ``NetworkingConfiguration/secondsBetweenPolls`` and sends it again — same parameters, same
    /// headers — up to ``NetworkingConfiguration/pollingRetries`` more times; then decodes the
    /// first other 2xx body as `T`. A 202 with a longer `Retry-After` (seconds or a date) is
    /// polled again after that, up to the retry policy's ``RetryPolicy/maximumRetryAfter`` (the
    /// endpoint's own, when it has one); one that limit leaves at 10^12 seconds or more (an
    /// infinite limit and 31,700 years asked) ends the polls.
    ///
    /// The same request is sent each time, method included: poll with the request that reads the
    /// job's state (a `GET`), not with the `POST` that starts it, which would start it again. So
    /// a method the retry policy does not send again (`POST`, `PATCH` by default; see
    /// ``RetryPolicy/retryableMethods``) is refused before the first poll when polls may follow;
    /// for a server that deduplicates it, add it to the endpoint's own policy
    /// (``Endpoint/retrying(_:)``), which then also sends it again after a 503 or a lost connection.
    ///
    /// The polls keep to the session the first was signed in; each has its own
    /// ``RequestContext/id``. A streamed body (read once) is refused before the first poll when
    /// polls may follow.
    ///
    /// - Returns: ``RepositoryError/pollingExhausted(attempts:context:)`` carrying the last 202
    ///   response when every try was used.
    public func performPollingRequest<T: Decodable & Sendable>(_ endpoint: Endpoint<T>) async -> Result<T, RepositoryError> {
        await run(endpoint) { (endpoint) async throws(RepositoryError) -> T in
            try self.checkMapping(of: endpoint, decoding: T.self)
            let (request, response) = try await self.poll(endpoint)
            return try self.decoded(endpoint, from: response, request: request.summary)
        }
    }

    /// Polls like ``performPollingRequest(_:)-(Endpoint<T>)`` and returns the model with the final
    /// response's status, headers and URL.
    public func performPollingRequest<T: Decodable & Sendable>(_ endpoint: Endpoint<RepositoryResponse<T>>) async
        -> Result<RepositoryResponse<T>, RepositoryError>
    {
        await run(endpoint) { (endpoint) async throws(RepositoryError) -> RepositoryResponse<T> in
            try self.checkMapping(of: endpoint, decoding: T.self)
            let (request, response) = try await self.poll(endpoint)
            let value = try self.decoded(endpoint.valueEndpoint(), from: response, request: request.summary)
            return RepositoryResponse(value, of: response, to: request.summary)
        }
    }

    /// Polls like ``performPollingRequest(_:)-(Endpoint<T>)`` and ignores the final body, but for
    /// the endpoint's own ``Endpoint/decoding(_:)-((DecodingInput)->Response)`` check of it, as a call of an `Endpoint<Void>` does.
    public func performPollingRequest(_ endpoint: Endpoint<Void>) async -> Result<Void, RepositoryError> {
        await run(endpoint) { (endpoint) async throws(RepositoryError) in
            let (request, response) = try await self.poll(endpoint)
            try self.checked(endpoint, response: response, request: request.summary)
        }
    }

    /// The wait before the next poll: the configuration's, or longer when the 202 asks for it;
    /// `nil` when the asked wait, within the policy's limit, is 10^12 s or more: the call would
    /// wait until cancelled.
    private func wait(after response: TransportResponse, policy: RetryPolicy?) -> TimeInterval? {
        let between = configuration.secondsBetweenPolls
        guard let asked = RetryPolicy.retryAfter(in: response, now: configuration.clock.now()) else { return between }
        let longest = (policy ?? configuration.retryPolicy).maximumRetryAfter
        let granted = min(asked, longest.isNaN ? 0 : longest)
        guard granted < Duration.longestSeconds else { return nil }
        return max(between, granted)
    }

    private func poll<Response>(_ endpoint: Endpoint<Response>) async throws(RepositoryError) -> (TransportRequest, TransportResponse) {
        let retries = configuration.pollingRetries
        // One call across its polls: each keeps to the session the first was signed in (a logout
        // and another login between polls fails the call instead of returning the other user's
        // answer). Each poll is a request of its own, with its own id.
        let call = callContext(for: endpoint)
        // Refused before the first poll: a write that starts a job would start it again with each
        // poll, and a stream is read once, so a second poll could not send it (the server would
        // have accepted the job for nothing).
        let built = try builder.build(endpoint)
        if retries > 0, !(endpoint.retryPolicy ?? configuration.retryPolicy).retryableMethods.contains(endpoint.method) {
            throw .invalidRequest(
                reason:
                    "a polled request is sent again while the server answers 202, so its method must be one the retry policy sends again, which \(endpoint.method.rawValue) is not: it would start the job again. Start the job with performRequest and poll its state with a GET, or, if the server deduplicates it, add \(endpoint.method.rawValue) to the retryableMethods of the endpoint's own retry policy (a retry step sends it again after a 503 or a lost connection too)",
                request: built.summary)
        }
        if retries > 0, built.body?.isStreamed == true {
            throw .invalidRequest(
                reason: "a polled request is sent again while the server answers 202, so its body cannot be a stream (read once)",
                request: built.summary)
        }
        var tries = 0
        while true {
            let (request, response) = try await exchange(endpoint, in: tries == 0 ? call : call.continuing())
            tries += 1
            guard response.statusCode == 202 else { return (request, response) }
            guard tries <= retries, let wait = wait(after: response, policy: endpoint.retryPolicy) else {
                throw .pollingExhausted(
                    attempts: tries, context: ErrorContext(request: request.summary, response: response, attempts: response.attempts))
            }
            do {
                try await configuration.clock.sleep(.clampedSeconds(wait))
            } catch {
                throw .cancelled(ErrorContext(request: request.summary, response: response, attempts: response.attempts))
            }
        }
    }
}

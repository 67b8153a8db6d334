/// A response body sink that keeps what it took across the attempts of one call: the retry step
/// sends the request ``retrying(_:)`` gives, which asks only for what the sink still lacks (a
/// resumable download asks for the rest of its file).
protocol ResumingBodySink: ResponseBodySink {
    /// The request of the next attempt, after one that ended in a failure the retry policy retries.
    func retrying(_ request: TransportRequest) -> TransportRequest
}

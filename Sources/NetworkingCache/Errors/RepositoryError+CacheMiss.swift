import Networking

extension RepositoryError {
    /// Whether the call was cache-only (``CachePolicy/Mode/cacheOnly``, or a request's
    /// `Cache-Control: only-if-cached`) and the cache had no answer it could use: the cache
    /// answered `504` with ``ResponseCache/statusHeaderName`` set to `miss` and the JSON body
    /// `{"code": "not_cached", "message": …}`, and nothing was sent. Also `true` when a custom
    /// error mapping turned that 504 into a custom error.
    public var isCacheMiss: Bool {
        context?.response?.isCacheMiss ?? false
    }
}

extension TransportResponse {
    /// Whether this is the cache's made-up `504` for a cache-only call that found nothing
    /// (see ``Networking/RepositoryError/isCacheMiss``).
    public var isCacheMiss: Bool {
        statusCode == 504 && headers[ResponseCache.statusHeaderName] == "miss"
    }
}

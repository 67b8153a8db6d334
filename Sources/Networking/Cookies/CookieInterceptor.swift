/// Sends the stored cookies with each request and keeps those its response sets; the repository
/// places it right before logging when the configuration has a ``CookieStorage``.
///
/// A `Cookie` header the request already carries (set by the caller) is left as it is, also on
/// redirects to the same origin. Either way the storage travels with the request, so that the
/// transport keeps the cookies the redirects it follows set (see ``RedirectPolicy``): a login
/// answered with a 302 and a session cookie stays logged in whatever `Cookie` the call sent.
struct CookieInterceptor: Interceptor {
    let storage: CookieStorage

    func intercept(_ request: TransportRequest, context: RequestContext, next: InterceptorNext)
        async throws(RepositoryError) -> TransportResponse
    {
        var request = request
        if request.headers["Cookie"] == nil {
            let chosen = storage.headerValue(for: request.url)
            request.headers["Cookie"] = chosen
            request.cookieHeaderFromStorage = chosen
        }
        request.cookieStorage = storage
        let response = try await next(request)
        storage.store(from: response, of: request)
        return response
    }
}

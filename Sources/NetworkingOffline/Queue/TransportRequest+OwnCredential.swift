import Networking

extension TransportRequest {
    /// The first of `names` the request carries with a value of its own: not the one the
    /// configuration's `defaultHeaders` (`defaults`) give every request, which is added again
    /// wherever the request goes. The offline queue and the batch client refuse a request with
    /// one, since they send it without it.
    func ownCredential(among names: [String], defaults: HTTPHeaders) -> String? {
        names.first { name in headers[name].map { $0 != defaults[name] } ?? false }
    }
}

import Foundation

/// An ``Interceptor`` that also hears of exchanges made for a call outside its chain, so that
/// what it keeps per call stays right when the request went another way.
///
/// A batch request carries many calls, and its chain sees only the batch request. The code that
/// made such an exchange reports it with ``AbstractRepository/report(_:answeredBy:context:)``, giving the
/// context the call would have had (its name and options): a response cache then drops what the
/// write made stale, as it would have had the write gone through it.
public protocol ExchangeObserver: Interceptor {
    /// Hears that `request`, a call's, was answered with `response` outside the chain.
    ///
    /// Called once per reported exchange that got an HTTP answer, whatever its status, in the
    /// chain's order, before the code that reports it goes on (a `BatchClient` call returns after
    /// its reports): keep it short, and never send a request from it. `context` is the reporter's:
    /// the call's name and options, a fresh ``RequestContext/id``, attempt 1, and no
    /// ``RequestContext/signedSessionIdentity`` (a reporter that knows whose call it was pins
    /// ``SessionIdentityKey``). A required option it carries is not checked: the exchange happened.
    func observe(_ request: TransportRequest, answeredBy response: TransportResponse, context: RequestContext) async

    /// Whether `request`, a call's, must go through the chain itself to be served as it asks,
    /// rather than be carried outside it: a response cache answers a call that reads it
    /// (`.cacheOnly()`, a time to live, a reload) only there. A `BatchClient` sends such a call on
    /// its own, through the chain, instead of in the batch request.
    ///
    /// Asked by code about to carry a call outside the chain (a `BatchClient`, once per item),
    /// with `context` as for ``observe(_:answeredBy:context:)``: keep it short, and never send a
    /// request from it. Default `false`.
    func requiresChain(_ request: TransportRequest, context: RequestContext) -> Bool
}

extension ExchangeObserver {
    /// A call may go outside the chain unless the observer says otherwise.
    public func requiresChain(_ request: TransportRequest, context: RequestContext) -> Bool { false }
}

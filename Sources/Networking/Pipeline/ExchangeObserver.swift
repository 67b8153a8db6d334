import Foundation

/// An ``Interceptor`` that also hears of exchanges made for a call outside its chain, so that
/// what it keeps per call stays right when the request went another way.
///
/// A batch request carries many calls, and its chain sees only the batch request; an offline
/// queue sends a write long after the call that made it returned. The code that made such an
/// exchange reports it with ``AbstractRepository/report(_:answeredBy:context:)``, giving the
/// context the call would have had (its name and options): a response cache then drops what the
/// write made stale, as it would have had the write gone through it.
public protocol ExchangeObserver: Interceptor {
    /// Hears that `request`, a call's, was answered with `response` outside the chain.
    ///
    /// Called once per reported exchange, after the answer is in, whatever its status. The call's
    /// result does not wait on anything but this method: keep it short, and never send a request
    /// from it.
    func observe(_ request: TransportRequest, answeredBy response: TransportResponse, context: RequestContext) async
}

import Foundation

/// When and how soon a failed request is sent again.
///
/// Retrying is off unless a configuration or an endpoint sets a policy
/// (``NetworkingConfiguration/retryPolicy`` defaults to ``never``). With a policy, a request is
/// retried when its method is idempotent (`GET`, `HEAD`, `PUT`, `DELETE`,
/// `OPTIONS`, `TRACE`; others only when added to ``retryableMethods``) and it failed with status
/// 408, 429, 500, 502, 503 or 504, a lost connection, or a timeout — and, when
/// ``retriesConnectionFailures`` is on, a connection that could not be opened. It is sent at most
/// ``maximumAttempts`` times in all. Waits grow exponentially — `baseDelay × 2^(retry − 1)`, capped
/// at ``maximumDelay`` — with full jitter (a random wait between zero and that value), unless the
/// server's `Retry-After` (seconds or an HTTP date) says how long to wait. A `Retry-After` longer
/// than ``maximumRetryAfter`` ends the retries instead of waiting that long. A request with a
/// streamed body (`RequestBody.stream`) is never retried: the stream was read as it was sent;
/// nor is a ``ResponseChunks`` call once its reader has taken bytes of the body.
///
/// When retries run out, the last error is returned with ``ErrorContext/attempts`` set to the
/// number of attempts made.
///
/// One endpoint can have a policy of its own: ``Endpoint/retrying(_:)``.
public struct RetryPolicy: Sendable {
    /// The most times a request is sent, the first time included. Default 3.
    public var maximumAttempts: Int
    /// The methods retried. Default: the idempotent ones.
    public var retryableMethods: Set<HTTPMethod>
    /// The statuses retried: error statuses only, 400 to 599 (a success retried would send a
    /// write again however it went; the policy is refused otherwise). Default 408, 429, 500, 502,
    /// 503, 504.
    public var retryableStatusCodes: Set<Int>
    /// Whether a connection lost before the response was complete is retried. Default `true`.
    public var retriesConnectionLost: Bool
    /// Whether a timeout is retried. Default `true`.
    public var retriesTimeouts: Bool
    /// Whether a connection that could not be opened is retried, for the retryable methods:
    /// refused, its host name not resolved, or no network (``NetworkFailure/connectionRefused``,
    /// ``NetworkFailure/hostNotFound``, ``NetworkFailure/notConnected``). Default `false`: while a
    /// device is offline every call would wait out its backoff before failing. Turn it on for a
    /// server that restarts (a deploy behind no load balancer) or a network that comes back within
    /// the waits.
    public var retriesConnectionFailures: Bool
    /// The wait before the first retry, before jitter. Default 0.5 s.
    public var baseDelay: TimeInterval
    /// The longest computed wait between attempts. Default 30 s.
    public var maximumDelay: TimeInterval
    /// The longest `Retry-After` honoured; a longer one stops retrying. Default 60 s. With
    /// `.infinity`, every wait is honoured except one of 10^12 seconds or more (31,700 years;
    /// delay-seconds too large for an `Int` among them), which stops retrying; keep it finite unless the call may wait as long as the server asks.
    public var maximumRetryAfter: TimeInterval
    /// A random number in `0..<1` for jitter; injected so tests are deterministic.
    public var random: @Sendable () -> Double {
        didSet { randomFromConfiguration = false }
    }
    /// Whether a call takes ``random`` from the configuration's policy instead: set for a route
    /// file's `retry` object, which cannot name one, so a test's injected jitter reaches routed
    /// calls too. A change to another property keeps it; setting ``random`` clears it.
    var randomFromConfiguration = false

    /// Creates a policy; every argument has the documented default.
    public init(
        maximumAttempts: Int = 3,
        retryableMethods: Set<HTTPMethod> = [.get, .head, .put, .delete, .options, .trace],
        retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
        retriesConnectionLost: Bool = true,
        retriesTimeouts: Bool = true,
        retriesConnectionFailures: Bool = false,
        baseDelay: TimeInterval = 0.5,
        maximumDelay: TimeInterval = 30,
        maximumRetryAfter: TimeInterval = 60,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.maximumAttempts = maximumAttempts
        self.retryableMethods = retryableMethods
        self.retryableStatusCodes = retryableStatusCodes
        self.retriesConnectionLost = retriesConnectionLost
        self.retriesTimeouts = retriesTimeouts
        self.retriesConnectionFailures = retriesConnectionFailures
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
        self.random = random
    }

    /// The default policy.
    public static let `default` = RetryPolicy()

    /// What makes the policy unusable, or `nil`: at least one attempt, statuses that are errors
    /// (a success in ``retryableStatusCodes`` would send a write again however it went), and
    /// waits that are numbers of seconds (``maximumRetryAfter`` may be infinite: any
    /// `Retry-After` under 10^12 seconds is then honoured).
    var problem: String? { invalidSetting.map { "\($0.name) \($0.problem)" } }

    /// The first property that makes the policy unusable (see ``problem``) and what is wrong with
    /// it, for a route file to name its own key (`retry.maximumAttempts`).
    var invalidSetting: (name: String, problem: String)? {
        if maximumAttempts < 1 { return ("maximumAttempts", "must be at least 1, not \(maximumAttempts)") }
        if let status = retryableStatusCodes.sorted().first(where: { !(400...599).contains($0) }) {
            return ("retryableStatusCodes", "must be error statuses (400 to 599), not \(status)")
        }
        if !(baseDelay >= 0 && baseDelay.isFinite) {
            return ("baseDelay", "must be zero or a positive number of seconds, not \(baseDelay)")
        }
        if !(maximumDelay >= 0 && maximumDelay.isFinite) {
            return ("maximumDelay", "must be zero or a positive number of seconds, not \(maximumDelay)")
        }
        if !(maximumRetryAfter >= 0) {
            return ("maximumRetryAfter", "must be zero or a positive number of seconds, not \(maximumRetryAfter)")
        }
        return nil
    }

    /// A policy that never retries.
    public static let never = RetryPolicy(maximumAttempts: 1)

    /// What a finished attempt looked like, for deciding on the next.
    public enum Outcome: Sendable {
        /// The server answered with this response.
        case response(TransportResponse)
        /// The attempt failed with this error.
        case failure(RepositoryError)
    }

    /// How long to wait before sending `method` again after attempt number `attempt` (1 for the
    /// first) ended with `outcome`, or `nil` when it must not be sent again.
    public func delay(after outcome: Outcome, attempt: Int, method: HTTPMethod, now: Date) -> TimeInterval? {
        guard attempt < maximumAttempts, retryableMethods.contains(method) else { return nil }
        switch outcome {
        case .response(let response):
            guard retryableStatusCodes.contains(response.statusCode) else { return nil }
            if let wait = Self.retryAfter(in: response, now: now) {
                // 10^12 s or more (`.infinity`: digits past an `Int`) is longer than any limit, an
                // infinite one too: the call would wait until cancelled.
                return wait <= maximumRetryAfter && wait < Duration.longestSeconds ? wait : nil
            }
        case .failure(.noNetworkConnection(.connectionLost, _)):
            guard retriesConnectionLost else { return nil }
        case .failure(.timeout(let context)) where context.response == nil:
            guard retriesTimeouts else { return nil }
        case .failure(.noNetworkConnection(.connectionRefused, _)), .failure(.noNetworkConnection(.hostNotFound, _)),
            .failure(.noNetworkConnection(.notConnected, _)):
            guard retriesConnectionFailures else { return nil }
        case .failure:
            return nil
        }
        return backoff(retry: attempt)
    }

    /// The jittered exponential wait before retry number `retry` (1 for the first retry).
    func backoff(retry: Int) -> TimeInterval {
        // Compared before subtracting: `retry - 1` traps for Int.min, which a caller may pass.
        let exponent = Double(retry > 1 ? min(retry - 1, 62) : 0)
        let ceiling = min(maximumDelay, baseDelay * pow(2, exponent))
        // A random function outside 0..<1 (or NaN) is clamped: the wait stays within the ceiling.
        let fraction = random()
        let wait = ceiling * (fraction.isNaN ? 0 : min(max(fraction, 0), 1))
        return wait.isNaN ? 0 : max(0, wait)
    }

    /// The wait a response's `Retry-After` field asks for, `nil` without a readable one. A date
    /// counts from the response's own `Date` (the server's clock, when readable; plus its `Age`
    /// when a cache kept it), not from `now`: a device clock minutes off would otherwise wait
    /// minutes too long, or not at all.
    public static func retryAfter(in response: TransportResponse, now: Date) -> TimeInterval? {
        guard let value = response.headers["Retry-After"] else { return nil }
        let sent = response.headers["Date"].flatMap { HTTPDate.date(from: $0, now: now) }
        return retryAfter(value, now: sent.map { $0 + (response.headers.age ?? 0) } ?? now)
    }

    /// The wait a `Retry-After` value asks for: delay-seconds, or an HTTP date (IMF-fixdate,
    /// RFC 850 or asctime). A date in the past means no wait; an unreadable value gives `nil`;
    /// delay-seconds too large for an `Int` give `.infinity` (longer than any limit).
    public static func retryAfter(_ value: String, now: Date) -> TimeInterval? {
        let text = value.trimmingCharacters(in: .whitespaces)
        // Delay-seconds is digits only (RFC 9110 §10.2.3: no sign); too many for an `Int` is
        // still a wait, the longest.
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            return Int(text).map(TimeInterval.init) ?? .infinity
        }
        guard let date = HTTPDate.date(from: text, now: now) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

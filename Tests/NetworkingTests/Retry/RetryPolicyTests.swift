import Foundation
import Testing

@testable import Networking

/// Which outcomes are retried, and how long to wait: pure decisions with injected randomness.
@Suite("RetryPolicy")
struct RetryPolicyTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let request = RequestSummary(method: .get, url: URL(string: "https://api.example.com/books")!)

    func policy(random: Double = 1) -> RetryPolicy {
        RetryPolicy(baseDelay: 0.5, maximumDelay: 4, random: { random })
    }

    func response(_ status: Int, retryAfter: String? = nil) -> RetryPolicy.Outcome {
        var headers = HTTPHeaders()
        if let retryAfter { headers["Retry-After"] = retryAfter }
        return .response(TransportResponse(statusCode: status, headers: headers))
    }

    @Test("retryable statuses are retried for idempotent methods", arguments: [408, 429, 500, 502, 503, 504])
    func retryableStatuses(status: Int) {
        #expect(policy().delay(after: response(status), attempt: 1, method: .get, now: now) == 0.5)
    }

    @Test("any attempt number a caller passes gives a wait within the bounds, never a trap", arguments: [Int.min, -1, 0, 1, 63, Int.max])
    func anyAttemptNumber(attempt: Int) {
        let wait = policy().delay(after: response(503), attempt: attempt, method: .get, now: now)
        if attempt < 3 {
            #expect(wait == 0.5)
        } else {
            #expect(wait == nil)
        }
        #expect(policy().backoff(retry: attempt) <= 4)
    }

    @Test("other statuses are not retried", arguments: [200, 400, 401, 404, 422, 501])
    func otherStatuses(status: Int) {
        #expect(policy().delay(after: response(status), attempt: 1, method: .get, now: now) == nil)
    }

    @Test("POST and PATCH are not retried unless opted in")
    func methods() {
        var policy = policy()
        #expect(policy.delay(after: response(503), attempt: 1, method: .post, now: now) == nil)
        #expect(policy.delay(after: response(503), attempt: 1, method: .patch, now: now) == nil)
        for method in [HTTPMethod.get, .head, .put, .delete, .options] {
            #expect(policy.delay(after: response(503), attempt: 1, method: method, now: now) != nil)
        }
        policy.retryableMethods.insert(.post)
        #expect(policy.delay(after: response(503), attempt: 1, method: .post, now: now) == 0.5)
    }

    @Test("lost connections and timeouts are retried, connections not opened when asked; proxy refusals and other errors are not")
    func failures() {
        let context = ErrorContext(request: request)
        var policy = policy()
        #expect(policy.delay(after: .failure(.noNetworkConnection(.connectionLost, context)), attempt: 1, method: .get, now: now) != nil)
        #expect(policy.delay(after: .failure(.timeout(context)), attempt: 1, method: .get, now: now) != nil)
        let unopened: [NetworkFailure] = [.connectionRefused, .hostNotFound, .notConnected]
        for failure in unopened {
            #expect(policy.delay(after: .failure(.noNetworkConnection(failure, context)), attempt: 1, method: .get, now: now) == nil)
        }
        policy.retriesConnectionFailures = true
        for failure in unopened {
            #expect(policy.delay(after: .failure(.noNetworkConnection(failure, context)), attempt: 1, method: .get, now: now) != nil)
            #expect(policy.delay(after: .failure(.noNetworkConnection(failure, context)), attempt: 1, method: .post, now: now) == nil)
        }
        #expect(
            policy.delay(after: .failure(.noNetworkConnection(.proxyRefused(status: 407), context)), attempt: 1, method: .get, now: now)
                == nil)
        #expect(policy.delay(after: .failure(.noNetworkConnection(.other("x"), context)), attempt: 1, method: .get, now: now) == nil)
        #expect(policy.delay(after: .failure(.cancelled(context)), attempt: 1, method: .get, now: now) == nil)
        var strict = policy
        strict.retriesTimeouts = false
        strict.retriesConnectionLost = false
        strict.retriesConnectionFailures = false
        for failure in unopened {
            #expect(strict.delay(after: .failure(.noNetworkConnection(failure, context)), attempt: 1, method: .get, now: now) == nil)
        }
        #expect(strict.delay(after: .failure(.timeout(context)), attempt: 1, method: .get, now: now) == nil)
        #expect(strict.delay(after: .failure(.noNetworkConnection(.connectionLost, context)), attempt: 1, method: .get, now: now) == nil)
    }

    @Test("backoff doubles from the base delay, is capped, and stops at the attempt limit")
    func backoff() {
        let policy = RetryPolicy(maximumAttempts: 6, baseDelay: 0.5, maximumDelay: 4, random: { 1 })
        let delays = (1...6).map { policy.delay(after: response(503), attempt: $0, method: .get, now: now) }
        #expect(delays == [0.5, 1, 2, 4, 4, nil])
    }

    @Test("jitter draws the wait between zero and the backoff")
    func jitter() {
        #expect(policy(random: 0).delay(after: response(503), attempt: 2, method: .get, now: now) == 0)
        #expect(policy(random: 0.25).delay(after: response(503), attempt: 2, method: .get, now: now) == 0.25)
    }

    @Test("Retry-After in seconds and as an HTTP date is honoured; too long a wait stops retrying")
    func retryAfter() {
        let policy = policy()
        #expect(policy.delay(after: response(503, retryAfter: "7"), attempt: 1, method: .get, now: now) == 7)
        let date = "Tue, 14 Nov 2023 22:13:40 GMT"  // now + 20 s
        #expect(policy.delay(after: response(429, retryAfter: date), attempt: 1, method: .get, now: now) == 20)
        #expect(policy.delay(after: response(503, retryAfter: "3600"), attempt: 1, method: .get, now: now) == nil)
        #expect(policy.delay(after: response(503, retryAfter: "soon"), attempt: 1, method: .get, now: now) == 0.5)
        // Delay-seconds past Int.max is still a wait, too long to take: no quick retry.
        #expect(policy.delay(after: response(503, retryAfter: "99999999999999999999"), attempt: 1, method: .get, now: now) == nil)
        // An infinite limit honours any wait but that one, which would park the call for ever.
        var unbounded = policy
        unbounded.maximumRetryAfter = .infinity
        #expect(unbounded.delay(after: response(503, retryAfter: "3600"), attempt: 1, method: .get, now: now) == 3600)
        #expect(unbounded.delay(after: response(503, retryAfter: "99999999999999999999"), attempt: 1, method: .get, now: now) == nil)
        #expect(unbounded.delay(after: response(503, retryAfter: "9223372036854775807"), attempt: 1, method: .get, now: now) == nil)
    }

    @Test("A Retry-After date counts from the response's Date when it has a readable one, else from now")
    func retryAfterFromTheResponseDate() {
        func wait(_ fields: [(String, String)]) -> TimeInterval? {
            var headers = HTTPHeaders()
            for (name, value) in fields { headers[name] = value }
            return RetryPolicy.retryAfter(in: TransportResponse(statusCode: 503, headers: headers), now: now)
        }
        // `now` is Tue, 14 Nov 2023 22:13:20 GMT; the server's clock is ten minutes behind.
        let retry = ("Retry-After", "Tue, 14 Nov 2023 22:03:50 GMT")
        #expect(wait([retry, ("Date", "Tue, 14 Nov 2023 22:03:20 GMT")]) == 30)
        #expect(wait([retry]) == 0)
        #expect(wait([retry, ("Date", "yesterday")]) == 0)
        #expect(wait([("Retry-After", "7"), ("Date", "Tue, 14 Nov 2023 22:03:20 GMT")]) == 7)
        #expect(wait([("Date", "Tue, 14 Nov 2023 22:03:20 GMT")]) == nil)
        // A cache kept the answer 10 s: the server's clock reads Date plus Age.
        #expect(wait([retry, ("Date", "Tue, 14 Nov 2023 22:03:20 GMT"), ("Age", "10")]) == 20)
        #expect(wait([retry, ("Date", "Tue, 14 Nov 2023 22:03:20 GMT"), ("Age", "-3")]) == 30)
    }

    @Test("Retry-After parsing: seconds, the three HTTP date forms, past dates, garbage")
    func parsing() {
        #expect(RetryPolicy.retryAfter("120", now: now) == 120)
        #expect(RetryPolicy.retryAfter(" 0 ", now: now) == 0)
        #expect(RetryPolicy.retryAfter("-5", now: now) == nil)
        // Digits only: a sign is not delay-seconds.
        #expect(RetryPolicy.retryAfter("+30", now: now) == nil)
        #expect(RetryPolicy.retryAfter("-0", now: now) == nil)
        #expect(RetryPolicy.retryAfter("Tue, 14 Nov 2023 22:13:30 GMT", now: now) == 10)
        #expect(RetryPolicy.retryAfter("Tuesday, 14-Nov-23 22:13:30 GMT", now: now) == 10)
        #expect(RetryPolicy.retryAfter("Tue Nov 14 22:13:30 2023", now: now) == 10)
        #expect(RetryPolicy.retryAfter("Mon, 13 Nov 2023 00:00:00 GMT", now: now) == 0)
        #expect(RetryPolicy.retryAfter("tomorrow", now: now) == nil)
        #expect(RetryPolicy.retryAfter("99999999999999999999", now: now) == .infinity)
    }

    @Test("never retries at all")
    func never() {
        #expect(RetryPolicy.never.delay(after: response(503), attempt: 1, method: .get, now: now) == nil)
    }
}

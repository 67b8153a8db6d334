import Foundation

/// The token-refresh lifecycle as a pure value: what to do when a request needs a credential,
/// when a request is rejected with 401, and when a refresh ends. It performs no I/O and never
/// waits; ``SessionManager`` drives it under its lock and carries out the decisions.
///
/// The rules:
/// - Every credential has a version; signing records the version used.
/// - A 401 for an older version is replayed with the current credential, without a refresh:
///   another request already refreshed since it was signed — unless the current credential is
///   known to be expired by now (a long upload signed before that refresh), which is refreshed
///   first. (``SessionManager`` asks only for a request of the current session: versions go on
///   counting across sessions.)
/// - A 401 for the current version starts a refresh unless one is running; either way the request
///   waits for it. However many requests fail at once, there is exactly one refresh.
/// - A request that needs a credential known to be expired starts (or joins) a refresh before it
///   is sent.
/// - At most ``RefreshWindow/maximumRefreshes`` refreshes started by a 401 may start within
///   ``RefreshWindow/interval``; one more fails every waiter with an excessive-refresh error,
///   which stops refresh loops against a server that rejects every new token. A refresh started
///   because the credential is about to expire does not count: short-lived tokens renewed on
///   time are no loop. A refresh that failed without the server rejecting it leaves the window
///   when it ends: it replays nothing, so it is no loop, and a device offline must not lose its
///   session for trying.
/// - For ``RefreshPolicy/failureCoolDown`` after such a failure, a request that would refresh
///   the same credential again fails at once with that failure instead: an auth server that
///   fails fast (a 503 in 20 ms) gets one refresh per cool-down, not one per request answered
///   401 meanwhile. A replaced credential or a new session ends it.
/// - A credential replaced within the session (`update(credential:)`) abandons the running
///   refresh as a new session does: its waiters sign with the new credential at once, and the
///   replaced credential's refresh token is not sent.
/// - A new session (login, restore, end) starts afresh: the refresh of the session before is
///   abandoned (its waiters ask again, and its outcome, identified by its ``refreshID``, is
///   ignored when it comes) and the window is emptied, so one user's refreshes never hold up or
///   use up the next user's.
struct RefreshStateMachine: Sendable {
    /// What a request must do now.
    enum Decision: Equatable, Sendable {
        /// Sign with the current credential (version given) and send.
        case proceed(version: Int)
        /// Wait until the running refresh ends, then ask again.
        case wait
        /// Start a refresh, then wait for it like any other waiter.
        case startRefresh
        /// The credential cannot be refreshed: end the session.
        case giveUp
        /// Too many refreshes in the window: fail and end the session.
        case excessive
        /// The last refresh of this credential failed less than the cool-down ago: fail with
        /// its error (``coolingFailure``), keeping the session.
        case coolingDown
    }

    private(set) var version = 0
    private(set) var isRefreshing = false
    /// Identifies the running refresh (or the last one started): its outcome is taken only while
    /// it is the running one.
    private(set) var refreshID = 0
    private(set) var waiters: [Int] = []
    private var refreshStarts: [Date] = []
    private var refreshingFrom = 0
    /// Whether the running refresh has its start in the window (one a 401 started).
    private var runningCounts = false
    /// The last refresh that failed without a rejection: the version it was to replace, when,
    /// and its error. See ``coolDown``.
    private var lastFailure: (version: Int, at: Date, error: RepositoryError)?
    /// The refresh that timed out and has not ended yet, and the version it was to replace.
    /// Until it ends, no other refresh of that version starts (``isCoolingDown(at:)``): it would
    /// send the same refresh token, which a server that rotates them has used up, and its
    /// refusal would end the session. Should its credential come after all, it is kept while
    /// that version is current. `error` is what the requests held back meanwhile fail with.
    private var timedOut: (refresh: Int, from: Int, error: RepositoryError)?
    let window: RefreshWindow
    /// How long, in seconds, after a refresh failed without a rejection no other refresh of the
    /// same credential starts; 0 for none.
    let coolDown: TimeInterval

    init(window: RefreshWindow, coolDown: TimeInterval = 0) {
        // Out-of-range values are clamped: no negative count, no negative or NaN interval.
        var clamped = window
        clamped.maximumRefreshes = max(0, window.maximumRefreshes)
        clamped.interval = window.interval >= 0 ? window.interval : 0
        self.window = clamped
        self.coolDown = coolDown >= 0 ? coolDown : 0
    }

    /// The error a ``Decision/coolingDown`` request fails with: the timeout of a refresh that has
    /// not ended, or the one the waiters of the refresh that failed last failed with.
    var coolingFailure: RepositoryError? {
        if let timedOut, timedOut.from == version { return timedOut.error }
        return lastFailure?.error
    }

    /// A request that needs the session asks how to proceed.
    ///
    /// - Parameters:
    ///   - isExpired: whether the credential is expired or about to (within the leeway).
    ///   - isUsable: whether it still works (not expired yet): during a cool-down it is used
    ///     rather than the request failed.
    mutating func credentialNeeded(by waiter: Int, isExpired: Bool, isUsable: Bool = false, canRefresh: Bool, now: Date) -> Decision {
        if isRefreshing {
            waiters.append(waiter)
            return .wait
        }
        guard isExpired, canRefresh else { return .proceed(version: version) }
        if isUsable, isCoolingDown(at: now) { return .proceed(version: version) }
        return start(for: waiter, counted: false, now: now)
    }

    /// A request signed with `signedVersion` was answered 401; `isExpired` tells whether the
    /// current credential is known to be expired.
    mutating func rejected(_ waiter: Int, signedVersion: Int, isExpired: Bool, canRefresh: Bool, now: Date) -> Decision {
        if isRefreshing {
            waiters.append(waiter)
            return .wait
        }
        // A 401 for an older version is replayed with the current one — unless that one is known
        // to be expired too: its refusal would end the session, so it is refreshed first.
        if signedVersion != version, !(isExpired && canRefresh) { return .proceed(version: version) }
        guard canRefresh else { return .giveUp }
        return start(for: waiter, counted: true, now: now)
    }

    /// Whether a refresh of the current credential failed less than the cool-down ago, or timed
    /// out and has not ended.
    private func isCoolingDown(at now: Date) -> Bool {
        if let timedOut, timedOut.from == version { return true }
        guard let lastFailure, lastFailure.version == version else { return false }
        // Either way: a request reads the time before it takes the lock, so it may be a little
        // earlier than the failure it finds; a clock set back further ends the cool-down rather
        // than stretch it.
        return abs(now.timeIntervalSince(lastFailure.at)) < coolDown
    }

    /// Starts a refresh for `waiter`; `counted`: whether it takes a place in the window.
    private mutating func start(for waiter: Int, counted: Bool, now: Date) -> Decision {
        if isCoolingDown(at: now) { return .coolingDown }
        if counted {
            let interval = window.interval
            // A start the clock was set back from by more than the window is dropped too: it
            // would otherwise stay until the clock caught up, and stop refreshes meanwhile.
            refreshStarts.removeAll { abs(now.timeIntervalSince($0)) >= interval }
            guard refreshStarts.count < window.maximumRefreshes else { return .excessive }
            refreshStarts.append(now)
        }
        runningCounts = counted
        isRefreshing = true
        refreshID += 1
        refreshingFrom = version
        waiters.append(waiter)
        return .startRefresh
    }

    /// The refresh `refresh` produced a credential. Returns whether to keep it (the credential
    /// was not replaced meanwhile) and the waiters to wake; they ask again and sign with the
    /// current credential. A refresh that is no longer the running one (abandoned by a new
    /// session) keeps nothing and wakes nobody, but for one that timed out: its credential is
    /// kept while the one it refreshed is still current, and it ends the cool-down.
    mutating func refreshSucceeded(_ refresh: Int) -> (keep: Bool, waiters: [Int]) {
        guard isRunning(refresh) else {
            guard let late = timedOut, late.refresh == refresh else { return (false, []) }
            timedOut = nil
            guard late.from == version else { return (false, []) }
            version += 1
            lastFailure = nil
            return (true, [])
        }
        let keep = refreshingFrom == version
        if keep { version += 1 }
        lastFailure = nil
        return (keep, finish())
    }

    /// The refresh `refresh` failed: returns the waiters to fail (none when it is no longer the
    /// running one).
    ///
    /// - Parameters:
    ///   - counts: whether the refresh stays in the window. `false` for one the server did not
    ///     reject (unreachable, 5xx, an answer that does not decode): it replays nothing, so it
    ///     cannot be part of a loop, and must not use up the window of a device that is offline.
    ///   - coolingDown: for such a failure, its error and when it came: it starts the cool-down.
    ///     For a timed-out refresh that fails after all, it replaces the timeout's cool-down
    ///     (`nil` ends it: the next request refreshes again).
    ///   - timedOut: the refresh ran out of time (its credential may still come): the error the
    ///     requests fail with until it ends.
    mutating func refreshFailed(
        _ refresh: Int, counts: Bool = true, coolingDown: (error: RepositoryError, at: Date)? = nil, timedOut: RepositoryError? = nil
    ) -> [Int] {
        guard isRunning(refresh) else {
            // A timed-out refresh that fails after all: another refresh may start, after its own
            // failure's cool-down rather than the timeout's.
            if let late = self.timedOut, late.refresh == refresh {
                self.timedOut = nil
                if late.from == version { lastFailure = coolingDown.map { (version, $0.at, $0.error) } }
            }
            return []
        }
        if let coolingDown { lastFailure = (refreshingFrom, coolingDown.at, coolingDown.error) }
        if let timedOut { self.timedOut = (refresh, refreshingFrom, timedOut) }
        // The running refresh's start is the last one: none starts, and none is pruned, while it runs.
        if !counts, runningCounts { _ = refreshStarts.popLast() }
        return finish()
    }

    /// A new session begins (login, restore, or the end of one): requests signed before are
    /// stale, a running refresh is abandoned and the window emptied. Returns the abandoned
    /// refresh's waiters, to wake so that they ask again.
    mutating func sessionChanged() -> [Int] {
        version += 1
        refreshStarts.removeAll()
        lastFailure = nil
        timedOut = nil
        return isRefreshing ? finish() : []
    }

    private func isRunning(_ refresh: Int) -> Bool { isRefreshing && refresh == refreshID }

    /// Whether the outcome of `refresh` is still taken: it is running, or timed out and not ended.
    func awaits(_ refresh: Int) -> Bool { isRunning(refresh) || timedOut?.refresh == refresh }

    /// The credential was replaced within the session, outside a refresh (``SessionManager``'s
    /// `update(credential:)`): requests signed before are now stale, and a running (or timed-out)
    /// refresh is abandoned: its outcome is ignored, and it leaves the window (it replays
    /// nothing). Returns its waiters, to wake so that they sign with the new credential.
    mutating func credentialReplaced() -> [Int] {
        version += 1
        timedOut = nil
        guard isRefreshing else { return [] }
        if runningCounts { _ = refreshStarts.popLast() }
        return finish()
    }

    /// A waiting request was cancelled; returns whether it was still waiting.
    mutating func cancel(_ waiter: Int) -> Bool {
        guard let index = waiters.firstIndex(of: waiter) else { return false }
        waiters.remove(at: index)
        return true
    }

    private mutating func finish() -> [Int] {
        isRefreshing = false
        defer { waiters.removeAll() }
        return waiters
    }
}

/// How many refreshes may start within an interval before refreshing is considered a loop.
///
/// Only refreshes started by a 401 count. One started because the token is about to expire
/// (short-lived tokens renewed on time) is no loop; nor is a refresh that failed without the
/// server rejecting it with 400, 401 or 403 (the endpoint unreachable or slow, a 5xx, 429 or
/// another 4xx, an answer that does not decode): it replays nothing.
public struct RefreshWindow: Sendable, Hashable {
    /// The most refreshes allowed within ``interval``. Default 5.
    public var maximumRefreshes: Int
    /// The length of the window, in seconds. Default 30.
    public var interval: TimeInterval

    /// Creates a window; default at most 5 refreshes per 30 seconds.
    public init(maximumRefreshes: Int = 5, interval: TimeInterval = 30) {
        self.maximumRefreshes = maximumRefreshes
        self.interval = interval
    }
}

import Dispatch
import Foundation
import Networking
import NetworkingTestSupport
import Synchronization
import Testing

// MARK: - Test doubles

/// An in-memory store whose next `save` or `delete` can be held until the test lets it go, and
/// that says when a held operation has started.
private final class GatedStore: CredentialStore {
    private struct State {
        var stored: PersistedSession?
        var holdNext = false
        var holding = false
    }

    private let state = Mutex(State())
    /// Signalled when a held operation has started.
    let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    var stored: PersistedSession? { state.withLock { $0.stored } }
    /// Whether a held operation is waiting to be released.
    var isHolding: Bool { state.withLock { $0.holding } }

    /// Holds the next save or delete until ``release()``.
    func holdNextOperation() { state.withLock { $0.holdNext = true } }

    func release() { released.signal() }

    private func gate() {
        let hold = state.withLock { state -> Bool in
            guard state.holdNext else { return false }
            state.holdNext = false
            state.holding = true
            return true
        }
        guard hold else { return }
        entered.signal()
        // Bounded, so that a failing test never leaves a thread stuck for good.
        _ = released.wait(timeout: .now() + 30)
        state.withLock { $0.holding = false }
    }

    func load() throws(CredentialStoreError) -> PersistedSession? { stored }

    func save(_ session: PersistedSession) throws(CredentialStoreError) {
        gate()
        state.withLock { $0.stored = session }
    }

    func delete() throws(CredentialStoreError) {
        gate()
        state.withLock { $0.stored = nil }
    }
}

/// What ``ReentrantStore`` does from inside the manager's transitions.
enum ReentrantStoreAction: Sendable {
    case read
    case logout
    case login
    case updateUser
    case expire
}

/// A store that reads the manager, or starts another transition, from inside `save` and `delete`.
private final class ReentrantStore: CredentialStore {
    private let manager = Mutex<SessionManager<User>?>(nil)
    private let stored = Mutex<PersistedSession?>(nil)
    let action: ReentrantStoreAction
    /// What each save and delete saw or got.
    let seen = Recorder<String>()

    init(action: ReentrantStoreAction) { self.action = action }

    func attach(_ manager: SessionManager<User>) { self.manager.withLock { $0 = manager } }
    /// Breaks the manager → store → manager cycle.
    func detach() { manager.withLock { $0 = nil } }

    func load() throws(CredentialStoreError) -> PersistedSession? { stored.withLock { $0 } }

    func save(_ session: PersistedSession) throws(CredentialStoreError) {
        act("save")
        stored.withLock { $0 = session }
    }

    func delete() throws(CredentialStoreError) {
        act("delete")
        stored.withLock { $0 = nil }
    }

    private func act(_ operation: String) {
        guard let manager = manager.withLock({ $0 }) else { return }
        do throws(SessionError) {
            switch action {
            case .read:
                let token = manager.credential?.accessToken ?? "none"
                let user = manager.currentUser?.name ?? "none"
                seen.record("\(operation): loggedIn=\(manager.isLoggedIn) token=\(token) user=\(user)")
                return
            case .logout: try manager.logout()
            case .login: try manager.login(user: bob, token: "inner")
            case .updateUser: try manager.update(user: bob)
            case .expire:
                manager.expire()
                seen.record("\(operation): expire returned")
                return
            }
            seen.record("\(operation): no error")
        } catch {
            seen.record("\(operation): \(error == .transitionInProgress ? "transitionInProgress" : "\(error)")")
        }
    }
}

/// An in-memory store, thread-safe, that records every save and delete in order.
private final class InstrumentedStore: CredentialStore {
    enum Operation: Sendable, Equatable {
        case save(userID: Int?)
        case delete
    }

    private struct State {
        var stored: PersistedSession?
        var operations: [Operation] = []
    }

    private let state = Mutex(State())

    var stored: PersistedSession? { state.withLock { $0.stored } }
    var operations: [Operation] { state.withLock { $0.operations } }

    func load() throws(CredentialStoreError) -> PersistedSession? { stored }

    func save(_ session: PersistedSession) throws(CredentialStoreError) {
        state.withLock { state in
            state.stored = session
            state.operations.append(.save(userID: session.user?["id"]?.intValue))
        }
    }

    func delete() throws(CredentialStoreError) {
        state.withLock { state in
            state.stored = nil
            state.operations.append(.delete)
        }
    }
}

// MARK: - Helpers

/// Waits for a semaphore on a plain thread, so Swift's cooperative pool is never blocked;
/// `false` when it was not signalled within `seconds`.
private func signalled(_ semaphore: DispatchSemaphore, within seconds: Double) async -> Bool {
    await onPlainThread { semaphore.wait(timeout: .now() + seconds) == .success }
}

/// Runs `body` on a new thread and returns its result, or `nil` when it does not finish within
/// `seconds` (a deadlock fails the test instead of hanging it).
private func onThread<T: Sendable>(within seconds: Double, _ body: @escaping @Sendable () -> T) async -> T? {
    let result = Recorder<T>()
    let done = DispatchSemaphore(value: 0)
    Thread {
        result.record(body())
        done.signal()
    }.start()
    guard await signalled(done, within: seconds) else { return nil }
    return result.all.first
}

/// Sends 20 concurrent `GET books/1` while `store` holds a write, with a watchdog that releases the
/// store if they wait for it (15 s). Returns their results, what the watchdog saw, and `sample()`
/// taken once they all ended, before the watchdog stops.
private func twentyRequests<Sample>(
    through repository: TestRepository, whileHolding store: GatedStore, sample: () -> Sample
) async -> ([Result<Book, RepositoryError>], [String], Sample) {
    let requestsDone = DispatchSemaphore(value: 0)
    let watchdog = Recorder<String>()
    Thread {
        // A minute: a whole suite starting at once on 2 cores has held tasks up for 30 s; requests
        // that wait for the store never finish at all.
        if requestsDone.wait(timeout: .now() + 60) == .timedOut {
            watchdog.record("the requests waited for the store")
            store.release()
        }
    }.start()
    let results = await withTaskGroup(of: Result<Book, RepositoryError>.self) { group in
        for _ in 0..<20 { group.addTask { await repository.performRequest(.get("books/1")) } }
        return await group.reduce(into: [Result<Book, RepositoryError>]()) { $0.append($1) }
    }
    let sampled = sample()
    requestsDone.signal()
    return (results, watchdog.all, sampled)
}

/// The outcome of a transition, as a comparable text.
/// Logs `ann` in on a thread of its own (its store may act on the manager from inside a save):
/// whether the manager is then logged in, or `nil` when that took more than 10 seconds.
private func logInOnThread(_ manager: SessionManager<User>) async -> Bool? {
    await onThread(within: 10) { () -> Bool in
        _ = outcome { () throws(SessionError) in try manager.login(user: ann, token: "t1") }
        return manager.isLoggedIn
    }
}

private func outcome(_ body: () throws(SessionError) -> Void) -> String {
    do throws(SessionError) {
        try body()
        return "ok"
    } catch {
        return "\(error)"
    }
}

/// The events of a stream until `done` says so, or what arrived within `seconds`.
private func events(
    _ stream: AsyncStream<SessionEvent<User>>, within seconds: Double, until done: @escaping @Sendable ([String]) -> Bool
) async -> [String] {
    let collected = Recorder<String>()
    await withTaskGroup(of: Void.self) { group in
        group.addTask {
            var labels: [String] = []
            for await event in stream {
                labels.append(label(event))
                collected.record(label(event))
                if done(labels) { break }
            }
        }
        group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
        await group.next()
        group.cancelAll()
    }
    return collected.all
}

/// `userUpdated(uN)` → N.
private func updatedUserID(_ label: String) -> Int? {
    guard label.hasPrefix("userUpdated(u"), label.hasSuffix(")") else { return nil }
    return Int(label.dropFirst("userUpdated(u".count).dropLast())
}

private let bookJSON = #"{"id": 1, "title": "Dune", "genre": "fiction"}"#

// MARK: - Tests

@Suite("SessionManager never blocks requests on its store", .timeLimit(.minutes(1)))
struct SessionBlockingTests {
    enum HeldTransition: String, CaseIterable, Sendable {
        case updateUser, updateCredential, logout
    }

    @Test(
        "20 concurrent requests complete while a transition's store write is held; the transition completes when released",
        arguments: HeldTransition.allCases)
    func requestsDoNotWaitForTheStore(transition: HeldTransition) async throws {
        // Given: a logged-in session whose next store write is held
        let store = GatedStore()
        let manager = SessionManager<User>(store: store)
        try manager.login(user: ann, credential: Credential(accessToken: "t1"))
        store.holdNextOperation()
        let transitionDone = DispatchSemaphore(value: 0)
        let transitionOutcome = Recorder<String>()
        Thread {
            let result: String
            switch transition {
            case .updateUser: result = outcome { () throws(SessionError) in try manager.update(user: bob) }
            case .updateCredential:
                result = outcome { () throws(SessionError) in try manager.update(credential: Credential(accessToken: "t2")) }
            case .logout: result = outcome { () throws(SessionError) in try manager.logout() }
            }
            transitionOutcome.record(result)
            transitionDone.signal()
        }.start()
        try #require(await signalled(store.entered, within: 10), "the transition never reached the store")

        // When: 20 concurrent requests, with a watchdog that releases the store if they wait for it
        let transport = StubTransport(routes: [.json(.get, "books/1", bookJSON)])
        let repository = TestRepository(configuration: try makeConfiguration(), sessionManager: manager, transport: transport)
        let (results, watchdog, (stillHeld, readsWhileHeld)) = await twentyRequests(through: repository, whileHolding: store) {
            (store.isHolding && transitionOutcome.all.isEmpty, (manager.isLoggedIn, manager.sessionToken, manager.currentUser?.name))
        }

        // Then: every request finished while the store was still held
        #expect(watchdog.isEmpty)
        #expect(stillHeld, "the store was released before the requests finished")
        #expect(results.count == 20)
        switch transition {
        case .updateUser, .updateCredential:
            // The new state is used once it is saved: until then requests are signed with t1.
            #expect(results.allSatisfy { (try? $0.get()) != nil })
            #expect(transport.requests.count == 20)
            #expect(transport.requests.allSatisfy { $0.headers["Authorization"] == "Bearer t1" })
            #expect(readsWhileHeld.0 == true)
            #expect(readsWhileHeld.1 == "t1")
            #expect(readsWhileHeld.2 == "Ann")
        case .logout:
            // Requests stop being signed at once: they fail before the network, without waiting.
            for result in results {
                guard case .unauthenticatedSession(nil)? = result.failure else {
                    Issue.record("expected .unauthenticatedSession(nil), got \(result)")
                    continue
                }
            }
            #expect(transport.requests.isEmpty)
            #expect(readsWhileHeld.0 == false)
            #expect(readsWhileHeld.1 == nil)
            #expect(readsWhileHeld.2 == nil)
        }

        // When the store is released, the transition completes
        store.release()
        #expect(await signalled(transitionDone, within: 10), "the transition did not complete once released")
        #expect(transitionOutcome.all == ["ok"])
        switch transition {
        case .updateUser:
            #expect(manager.currentUser == bob)
            #expect(store.stored?.user == ["id": 2, "name": "Bob"])
        case .updateCredential:
            #expect(manager.sessionToken == "t2")
            #expect(store.stored?.credential.accessToken == "t2")
        case .logout:
            #expect(!manager.isLoggedIn)
            #expect(store.stored == nil)
        }
    }

    @Test("bootstrap() waits for its turn off Swift's cooperative threads: requests run while four wait behind a held store write")
    func bootstrapWaitsOffThePool() async throws {
        // Given: a transition holding the turn in its store write
        let store = GatedStore()
        let manager = SessionManager<User>(store: store)
        try manager.login(user: ann, credential: Credential(accessToken: "t1"))
        store.holdNextOperation()
        Thread { _ = try? manager.update(user: bob) }.start()
        try #require(await signalled(store.entered, within: 10), "the transition never reached the store")

        // When: four bootstraps wait for the turn, more than the pool's threads here
        let bootstraps = (0..<4).map { _ in Task { await manager.bootstrap() } }
        let transport = StubTransport(routes: [.json(.get, "books/1", bookJSON)])
        let repository = TestRepository(configuration: try makeConfiguration(), sessionManager: manager, transport: transport)
        let (results, watchdog, stillHeld) = await twentyRequests(through: repository, whileHolding: store) { store.isHolding }

        // Then: the requests ran meanwhile, and each bootstrap restores the session once released
        #expect(watchdog.isEmpty)
        #expect(stillHeld, "the store was released before the requests finished")
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        store.release()
        for bootstrap in bootstraps {
            guard case .restored = await bootstrap.value else {
                Issue.record("expected .restored")
                continue
            }
        }
    }

    @Test(
        "20 requests answered 401 — ending the session, or refreshing it — complete while another transition's store write is held",
        arguments: [false, true])
    func rejectedRequestsDoNotWaitForTheStore(refreshes: Bool) async throws {
        // Given: a session (with a refresher or not) whose next store write, an update(user:), is held
        let store = GatedStore()
        let refresher = ClosureRefresher { _ in .success(Credential(accessToken: "t2", refreshToken: "r2")) }
        let manager = SessionManager<User>(store: store, refresher: refreshes ? refresher : nil)
        try manager.login(user: ann, credential: Credential(accessToken: "t1", refreshToken: "r1"))
        store.holdNextOperation()
        let transitionDone = DispatchSemaphore(value: 0)
        let transitionOutcome = Recorder<String>()
        Thread {
            transitionOutcome.record(outcome { () throws(SessionError) in try manager.update(user: bob) })
            transitionDone.signal()
        }.start()
        try #require(await signalled(store.entered, within: 10), "the transition never reached the store")

        // When: 20 requests that the server answers 401 for t1 (and 200 for t2)
        let transport = StubTransport(routes: [
            StubTransport.Route(.get, "books/1") { request throws(TransportError) in
                let accepted = request.headers["Authorization"] == "Bearer t2"
                return TransportResponse(
                    statusCode: accepted ? 200 : 401, headers: ["Content-Type": "application/json"],
                    body: Data((accepted ? bookJSON : #"{"message": "expired"}"#).utf8), url: request.url)
            }
        ])
        let repository = TestRepository(configuration: try makeConfiguration(), sessionManager: manager, transport: transport)
        let (results, watchdog, stillHeld) = await twentyRequests(through: repository, whileHolding: store) {
            store.isHolding && transitionOutcome.all.isEmpty
        }

        // Then: they all finished while the store was held — replayed with t2, or failed as unauthenticated
        #expect(watchdog.isEmpty)
        #expect(stillHeld, "the store was released before the requests finished")
        #expect(results.count == 20)
        if refreshes {
            #expect(results.allSatisfy { (try? $0.get()) != nil })
            #expect(manager.sessionToken == "t2")
        } else {
            // Answered 401, or not sent at all once the session had ended.
            for result in results {
                guard case .unauthenticatedSession? = result.failure else {
                    Issue.record("expected .unauthenticatedSession, got \(result)")
                    continue
                }
            }
            #expect(!manager.isLoggedIn)
        }

        // When the store is released, the held transition ends, then what the requests left reaches the store
        store.release()
        #expect(await signalled(transitionDone, within: 10), "the transition did not complete once released")
        manager.waitUntilStored()
        if refreshes {
            #expect(transitionOutcome.all == ["ok"])
            #expect(store.stored?.credential.accessToken == "t2")
            #expect(store.stored?.user == ["id": 2, "name": "Bob"])
        } else {
            // The session ended while update(user:) was writing: it reports so, and the store ends empty.
            #expect(transitionOutcome.all == ["\(SessionError.notLoggedIn)"])
            #expect(store.stored == nil)
        }
    }

    @Test("A store that reads the manager in save and delete does not deadlock, and sees the documented state")
    func storeReadsManager() async throws {
        // Given
        let store = ReentrantStore(action: .read)
        let manager = SessionManager<User>(store: store)
        store.attach(manager)
        defer { store.detach() }
        // When
        let outcomes = await onThread(within: 10) {
            [
                outcome { () throws(SessionError) in try manager.login(user: ann, token: "t1") },
                outcome { () throws(SessionError) in try manager.update(user: bob) },
                outcome { () throws(SessionError) in try manager.update(credential: Credential(accessToken: "t2")) },
                outcome { () throws(SessionError) in try manager.logout() },
            ]
        }
        // Then
        #expect(outcomes == ["ok", "ok", "ok", "ok"], "a transition deadlocked or failed")
        #expect(
            store.seen.all == [
                // login writes the store first: the session is not visible yet
                "save: loggedIn=false token=none user=none",
                // updates are saved before they are applied
                "save: loggedIn=true token=t1 user=Ann",
                "save: loggedIn=true token=t1 user=Bob",
                // logout ends the session at once and empties the store afterwards
                "delete: loggedIn=false token=none user=none",
            ])
        #expect(!manager.isLoggedIn)
    }

    @Test(
        "A transition started from inside the store gets transitionInProgress; the outer one completes",
        arguments: [ReentrantStoreAction.logout, .login, .updateUser])
    func transitionInsideStore(action: ReentrantStoreAction) async throws {
        // Given
        let store = ReentrantStore(action: action)
        let manager = SessionManager<User>(store: store)
        store.attach(manager)
        defer { store.detach() }
        // When
        let outcomes = await onThread(within: 10) {
            [
                outcome { () throws(SessionError) in try manager.login(user: ann, token: "t1") },
                outcome { () throws(SessionError) in try manager.logout() },
            ]
        }
        // Then
        #expect(outcomes == ["ok", "ok"], "the outer transition deadlocked or failed")
        #expect(store.seen.all == ["save: transitionInProgress", "delete: transitionInProgress"])
        #expect(!manager.isLoggedIn)
        #expect(try store.load() == nil)
    }

    @Test("expire() from inside the store does nothing and does not deadlock")
    func expireInsideStore() async throws {
        // Given
        let store = ReentrantStore(action: .expire)
        let manager = SessionManager<User>(store: store)
        store.attach(manager)
        defer { store.detach() }
        // When
        let loggedIn = await logInOnThread(manager)
        // Then
        #expect(loggedIn == true)
        #expect(store.seen.all == ["save: expire returned"])
        #expect(try store.load()?.credential.accessToken == "t1")
    }
}

extension SessionBlockingTests {
    @Test(
        "A store that starts a transition from the transitions' queue (a 401's removal) is refused, not deadlocked",
        arguments: [ReentrantStoreAction.logout, .read])
    func storeReentersFromTheQueue(action: ReentrantStoreAction) async throws {
        // Given: a session whose store acts on the manager from inside delete
        let store = ReentrantStore(action: action)
        let manager = SessionManager<User>(store: store)
        store.attach(manager)
        defer { store.detach() }
        let loggedIn = await logInOnThread(manager)
        #expect(loggedIn == true)
        // When: a request answered 401 ends the session; the removal runs on the transitions' queue
        let transport = StubTransport(routes: [.status(.get, "books/1", 401, json: #"{"message": "expired"}"#)])
        let repository = TestRepository(configuration: try makeConfiguration(), sessionManager: manager, transport: transport)
        let result: Result<Book, RepositoryError> = await repository.performRequest(.get("books/1"))
        #expect(result.failure?.statusCode == 401)
        // Then: everything settles, and the store saw the documented state
        let settled = await onThread(within: 10) { () -> Bool in
            manager.waitUntilStored()
            return true
        }
        #expect(settled == true)
        switch action {
        case .logout: #expect(store.seen.all.suffix(1) == ["delete: transitionInProgress"])
        default: #expect(store.seen.all.suffix(1) == ["delete: loggedIn=false token=none user=none"])
        }
        #expect(try store.load() == nil)
    }
}

@Suite("SessionManager transitions reach the store in order", .timeLimit(.minutes(1)))
struct SessionTransitionOrderTests {
    @Test("Concurrent update(user:) calls: the store's write order is the event order, and the last one wins")
    func concurrentUpdates() async throws {
        // Given
        let store = InstrumentedStore()
        let manager = SessionManager<User>(store: store)
        try manager.login(user: User(id: 0, name: "u0"), token: "t")
        let stream = manager.events()
        let lanes = 8
        let perLane = 10
        let start = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        let failures = Recorder<String>()
        // When: 8 threads released together, each updating 10 distinct users
        for lane in 0..<lanes {
            finished.enter()
            Thread {
                start.wait()
                for index in 0..<perLane {
                    let id = lane * perLane + index + 1
                    let result = outcome { () throws(SessionError) in try manager.update(user: User(id: id, name: "u\(id)")) }
                    if result != "ok" { failures.record(result) }
                }
                finished.leave()
            }.start()
        }
        for _ in 0..<lanes { start.signal() }
        let allFinished = await onPlainThread { finished.wait(timeout: .now() + 20) == .success }
        // Then
        try #require(allFinished, "the updates did not finish")
        #expect(failures.all.isEmpty)
        let total = lanes * perLane
        let labels = await events(stream, within: 20) { $0.count == total }
        let eventOrder = labels.compactMap(updatedUserID)
        let writeOrder = store.operations.dropFirst().map { operation -> Int? in
            if case .save(let id) = operation { return id }
            return nil
        }
        #expect(eventOrder.count == total)
        #expect(Set(eventOrder) == Set(1...total))
        #expect(writeOrder == eventOrder.map { Optional($0) })
        #expect(store.stored?.user?["id"]?.intValue == manager.currentUser?.id)
        #expect(manager.currentUser?.id == eventOrder.last)
    }

    @Test("logout racing with updates ends logged out with an empty store, and nothing is written after the delete")
    func logoutRacingUpdates() async throws {
        for round in 0..<10 {
            // Given
            let store = InstrumentedStore()
            let manager = SessionManager<User>(store: store)
            try manager.login(user: User(id: 0, name: "u0"), token: "t")
            let stream = manager.events()
            let start = DispatchSemaphore(value: 0)
            let finished = DispatchGroup()
            let outcomes = Recorder<String>()
            // When: 4 updating threads and one logging out, released together
            for lane in 0..<4 {
                finished.enter()
                Thread {
                    start.wait()
                    for index in 0..<10 {
                        let id = lane * 10 + index + 1
                        outcomes.record(outcome { () throws(SessionError) in try manager.update(user: User(id: id, name: "u\(id)")) })
                    }
                    finished.leave()
                }.start()
            }
            finished.enter()
            Thread {
                start.wait()
                for _ in 0..<round { Thread.sleep(forTimeInterval: 0.0001) }
                outcomes.record("logout " + outcome { () throws(SessionError) in try manager.logout() })
                finished.leave()
            }.start()
            for _ in 0..<5 { start.signal() }
            let allFinished = await onPlainThread { finished.wait(timeout: .now() + 20) == .success }
            // Then
            try #require(allFinished, "round \(round): the transitions did not finish")
            #expect(!manager.isLoggedIn, "round \(round)")
            #expect(manager.currentUser == nil, "round \(round)")
            #expect(store.stored == nil, "round \(round)")
            #expect(store.operations.last == .delete, "round \(round): \(store.operations)")
            #expect(store.operations.filter { $0 == .delete }.count == 1, "round \(round)")
            #expect(outcomes.all.contains("logout ok"), "round \(round)")
            #expect(
                outcomes.all.allSatisfy { $0 == "ok" || $0 == "logout ok" || $0 == "\(SessionError.notLoggedIn)" },
                "round \(round): \(outcomes.all)")
            let labels = await events(stream, within: 20) { $0.last == "loggedOut" }
            #expect(labels.last == "loggedOut", "round \(round): \(labels)")
            let updatesSaved = store.operations.dropFirst().dropLast().map { operation -> Int? in
                if case .save(let id) = operation { return id }
                return nil
            }
            #expect(updatesSaved == labels.dropLast().map(updatedUserID), "round \(round)")
            #expect(outcomes.all.filter { $0 == "ok" }.count == updatesSaved.count, "round \(round)")
        }
    }
}

import Foundation
import Networking
import NetworkingOffline

// The child process of the offline queue's crash test (Tests/NetworkingOfflineTests/OfflineCrashTests):
// it opens a queue, logs in to the test API, queues numbered writes to a journal stream — printing
// "queued <run>-<n>" once each is durable — and flushes as it goes, until the test kills it with
// `kill -9` at a random moment. With --drain it only flushes what earlier runs left, then prints
// "drained <count>".
//
// Usage: OfflineStressWorker --folder F --api URL --stream S --run R [--count N] [--drain]

struct User: Codable, Sendable, Identifiable {
    let id: Int
    let name: String
}

struct Login: Decodable, Sendable {
    let user: User
    let token: String
}

final class Repository: AbstractRepository, @unchecked Sendable {}

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func work() async -> Int32 {
    guard let folder = argument("--folder"), let api = argument("--api").flatMap(URL.init(string:)), let stream = argument("--stream"),
        let host = api.host
    else {
        say("usage: OfflineStressWorker --folder F --api URL --stream S --run R [--count N] [--drain]")
        return 2
    }
    let run = argument("--run") ?? "0"
    let count = Int(argument("--count") ?? "") ?? 20
    do {
        let queue = try OfflineQueue(
            OfflineQueue.Configuration(
                folder: URL(fileURLWithPath: folder), retryDelay: 0.05,
                onFlush: { report in
                    for (ticket, error) in report.rejected { say("rejected \(ticket): \(error)") }
                }))
        var configuration = try NetworkingConfiguration(
            useSecureConnection: false, domainURL: host, port: api.port, subdomainURL: api.path, timeout: 10)
        configuration.interceptors = [queue]
        let session = SessionManager<User>()
        let repository = Repository(configuration: configuration, sessionManager: session)
        queue.connect(repository)
        let login: Login = try await repository.performAuthenticationRequest(
            .post("auth/login", parameters: ["email": "reader@example.com", "password": "secret123"])
        ).get()
        try session.login(user: login.user, token: login.token)
        if CommandLine.arguments.contains("--drain") {
            for _ in 0..<600 where queue.count > 0 {
                await queue.flush()
                if queue.count > 0 { try await Task.sleep(for: .milliseconds(50)) }
            }
            say("drained \(queue.count)")
            return queue.count == 0 ? 0 : 1
        }
        for number in 0..<count {
            let endpoint = Endpoint<Void>.post("journal/\(stream)", parameters: ["run": run, "n": number])
            switch await queue.enqueue(endpoint, through: repository) {
            case .success: say("queued \(run)-\(number)")
            case .failure(let error): say("refused \(run)-\(number): \(error)")
            }
            if number % 3 == 2 { await queue.flush() }
        }
        await queue.flush()
        return 0
    } catch {
        say("failed: \(error)")
        return 1
    }
}

let done = DispatchSemaphore(value: 0)
nonisolated(unsafe) var status: Int32 = 0
Task.detached {
    status = await work()
    done.signal()
}
done.wait()
exit(status)

import Foundation
import Networking
import NetworkingOffline
import NetworkingTestSupport
import Testing

// The README's offline and batch samples, compiled (and run against a stub) so they cannot rot.
enum ReadmeOffline {
    struct User: Codable, Sendable { let id: Int; let name: String }
    struct Book: Decodable, Sendable { let id: Int; let title: String }
    struct NewBook: Encodable, Sendable { let title: String; let author: String }
    final class LibraryRepository: AbstractRepository, @unchecked Sendable {}

    static func offlineNotes(session: SessionManager<User>, folder: URL) throws -> (LibraryRepository, OfflineQueue) {
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, queuedStatusCodes: [503]))
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.interceptors.append(queue)
        let library = LibraryRepository(configuration: configuration, sessionManager: session)
        queue.connect(library)
        return (library, queue)
    }

    static func save(_ book: NewBook, library: LibraryRepository, queue: OfflineQueue) async {
        switch await queue.perform(Endpoint<Void>.post("books", body: book), with: library) {
        case .sent: print("saved")
        case .queued(let later): print("offline: kept as", later.ticket)
        case .failed(let error): print(error.localizedDescription)
        }
    }

    static func loadShelf(_ library: LibraryRepository) async throws {
        var batch = Batch()
        let first = batch.add(Endpoint<Book>.get("books/1"))
        let marked = batch.add(Endpoint<Void>.post("users/1/notifications/read_all"))
        let results = try await BatchClient(repository: library, limit: 50).send(batch).get()
        print(try results[first].get().title, results[marked])
    }
}

@Suite("README offline samples")
struct ReadmeOfflineSamplesTests {
    @Test("The batch sample reads each item's own result")
    func batchSample() async throws {
        let transport = StubTransport(routes: [
            .json(.post, "batch", #"[{"code": 200, "body": "{\"id\": 1, \"title\": \"Dune\"}"}, {"code": 204, "body": ""}]"#)
        ])
        let library = ReadmeOffline.LibraryRepository(configuration: try NetworkingConfiguration(domainURL: "api.example.com"), transport: transport)
        try await ReadmeOffline.loadShelf(library)
        #expect(transport.requests.count == 1)
    }
}

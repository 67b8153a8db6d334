// swift-format-ignore-file
// The documentation's code, kept as the articles and the README show it (their drift tests compare
// line by line), so the formatter leaves this folder alone.
import Foundation
import Networking
import NetworkingOffline

// Every ```swift block of the NetworkingOffline catalog (Sources/NetworkingOffline/NetworkingOffline.docc),
// as it is there, so the documentation cannot drift from the API: OfflineArticleCodeBlocksTests
// checks that each line of each block is in this folder. Types live in a namespace; top-level
// statements are wrapped in functions.
enum OfflineArticle {
    struct User: Codable, Sendable, Identifiable { let id: Int; let name: String }   // see "No credentials on disk"
    struct Book: Decodable, Sendable { let id: Int; let title: String }
    struct NewBook: Encodable, Sendable { let title: String; let author: String; let genre: String; let year: Int }

    final class LibraryRepository: AbstractRepository, @unchecked Sendable {}

    static func offlineNotes(session: SessionManager<User>, folder: URL) throws -> (LibraryRepository, OfflineQueue) {
        let queue = try OfflineQueue(OfflineQueue.Configuration(folder: folder, queuedStatusCodes: [503]))
        var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
        configuration.interceptors.append(queue)
        let library = LibraryRepository(configuration: configuration, sessionManager: session)
        queue.connect(library)           // the queue flushes through it (connect once the session is restored)
        return (library, queue)
    }

    static func save(_ book: NewBook, library: LibraryRepository, queue: OfflineQueue) async {
        switch await queue.perform(Endpoint<Void>.post("books", body: book), with: library) {
        case .sent: print("saved")
        case .queued(let later): print("offline: kept as", later.ticket)   // a QueuedRequest: `await later.result()` waits for it
        case .failed(let error): print(error.localizedDescription)
        }
    }

    static func loadShelf(_ library: LibraryRepository) async throws {
        var batch = Batch()
        let first = batch.add(Endpoint<Book>.get("books/1"))
        let marked = batch.add(Endpoint<Void>.post("users/1/notifications/read_all"))
        let results = try await BatchClient(repository: library, limit: 50).send(batch).get()   // throws only if a batch request failed before any was answered (its items may have run)
        print(try results[first].get().title, results[marked])
    }
}

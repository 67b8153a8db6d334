import Foundation
import Networking
import Synchronization

/// Calls to send together in one request to a Facebook-style `/batch` endpoint, each with its own
/// response type; build it, send it with a ``BatchClient``, read each call's result by its handle.
///
/// ```swift
/// var batch = Batch()
/// let book = batch.add(Endpoint<Book>.get("books/1"))
/// let created = batch.add(Endpoint<Void>.post("books", body: newBook))
/// let results = try await client.send(batch).get()     // fails only when a batch call fails before any item was answered
/// let first: Result<Book, RepositoryError> = results[book]
/// ```
public struct Batch: Sendable {
    /// One call of the batch: its request, and how to read its answer.
    struct Item: Sendable {
        /// Which call this is, so that a handle is read only in the results of a batch holding
        /// this very call at its position (copies of a batch share the calls added before the
        /// copy, and nothing else).
        let call = Batch.nextCall.add(1, ordering: .relaxed).oldValue
        let interpret: @Sendable (AbstractRepository, TransportResponse, TransportRequest) -> Result<any Sendable, RepositoryError>
        /// The call's request, and whether it is signed with the session (then so is the batch
        /// request): its route's word, once the repository has resolved it. Its name and options
        /// are what its answer is reported with (`AbstractRepository.report`).
        let build: @Sendable (AbstractRepository) -> Result<Built, RepositoryError>

        init<T>(
            _ endpoint: Endpoint<T>,
            interpret:
                @escaping @Sendable (AbstractRepository, TransportResponse, TransportRequest) -> Result<any Sendable, RepositoryError>
        ) {
            self.interpret = interpret
            build = { repository in
                Result { () throws(RepositoryError) in
                    let resolved = try repository.resolve(endpoint)
                    let context = RequestContext(
                        requiresSession: resolved.requiresSession, name: resolved.name, options: resolved.options,
                        session: repository.sessionManager)
                    return Built(request: try repository.makeRequest(for: resolved), context: context)
                }
            }
        }
    }

    /// A call made by a repository: its request, and the context its answer is reported with.
    struct Built: Sendable {
        let request: TransportRequest
        let context: RequestContext
    }

    private(set) var items: [Item] = []

    /// The identity the next call added to a batch gets.
    private static let nextCall = Atomic<UInt64>(0)

    /// An empty batch.
    public init() {}

    /// The number of calls.
    public var count: Int { items.count }

    /// Adds a call whose answer decodes as `T`; its result is read with the handle.
    @discardableResult
    public mutating func add<T: Decodable & Sendable>(_ endpoint: Endpoint<T>) -> BatchHandle<T> {
        items.append(
            Item(endpoint) { repository, response, request in repository.interpret(response, to: request, for: endpoint).map { $0 } })
        return BatchHandle(call: items[items.count - 1].call, index: items.count - 1)
    }

    /// Adds a call whose answer's body is ignored.
    @discardableResult
    public mutating func add(_ endpoint: Endpoint<Void>) -> BatchHandle<Void> {
        items.append(
            Item(endpoint) { repository, response, request in repository.interpret(response, to: request, for: endpoint).map { $0 } })
        return BatchHandle(call: items[items.count - 1].call, index: items.count - 1)
    }
}

/// Reads one call's result from ``BatchResults``.
public struct BatchHandle<Value: Sendable>: Sendable, Hashable {
    /// The call it stands for.
    let call: UInt64
    /// The call's position in it.
    let index: Int

    /// The call's position in its batch (`0` for the first call added): the position
    /// ``BatchResults/failures`` gives a failed call, to tell which call of yours it was.
    public var position: Int { index }
}

/// The results of a sent ``Batch``, one per call.
public struct BatchResults: Sendable {
    /// The calls of the ``Batch`` these are the results of.
    let calls: [UInt64]
    let results: [Result<any Sendable, RepositoryError>]

    /// The result of the call `handle` stands for: its decoded answer, or its own error (the
    /// item's status mapped like any call's, custom errors included).
    public subscript<Value: Sendable>(handle: BatchHandle<Value>) -> Result<Value, RepositoryError> {
        guard calls.indices.contains(handle.index), calls[handle.index] == handle.call, results.indices.contains(handle.index) else {
            return .failure(.invalidRequest(reason: "this handle belongs to another batch", request: nil))
        }
        return results[handle.index].flatMap { value in
            guard let typed = value as? Value else {
                return .failure(.invalidRequest(reason: "this handle belongs to another batch", request: nil))
            }
            return .success(typed)
        }
    }

    /// How many calls the batch held.
    public var count: Int { results.count }

    /// The calls that failed, in the order they were added: each one's position in the batch
    /// (`0` for the first call added, as its handle's ``BatchHandle/position``) and its error.
    /// Empty when every call succeeded; read a call's value by its handle.
    ///
    /// ```swift
    /// for (position, error) in results.failures { log.error("call \(position): \(error)") }
    /// ```
    public var failures: [(position: Int, error: RepositoryError)] {
        results.indices.compactMap { position in
            guard case .failure(let error) = results[position] else { return nil }
            return (position, error)
        }
    }
}

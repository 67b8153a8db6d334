import Foundation
import Networking

/// Sends many calls in one request to a Facebook Graph-style batch endpoint: `POST <path>` with
/// `{"batch": [{"method", "relative_url", "headers": [{"name", "value"}], "body"}]}`, answered
/// with `[{"code", "headers": [{"name", "value"}], "body"}]` (or `null` for an item that did not run).
///
/// - Calls are split into batches of at most ``limit`` items, sent one after another.
/// - The batch request goes through the repository's chain (so the session signs it once, and
///   items inherit its `Authorization`); each item is read as its own call would be — its own
///   status, custom errors and decoding (`AbstractRepository.interpret(_:to:for:)`).
/// - Answers are matched to calls by position, after checking that there are as many answers as
///   calls.
/// - A failure of the batch call itself (network, 5xx, an answer that is not a JSON array of as
///   many items as calls) is told apart from failures of its items: ``send(_:)`` returns it as
///   its own failure, `RepositoryError.invalidResponse(reason:context:)` for an answer that does
///   not fit.
/// - The batch request is signed with the session when one of its calls requires it.
///
/// The originals' bugs it does not have: rebuilt items carried their parameters as headers,
/// answers were matched by index without a count check, and item status codes were ignored.
public struct BatchClient: Sendable {
    /// The repository whose configuration, session and chain the batch uses.
    public let repository: AbstractRepository
    /// The batch endpoint's path under the base URL. Default `"batch"`.
    public let path: String
    /// The most items in one batch request; more are split. Default 50; values below 1 become 1.
    public let limit: Int
    /// Query items of the batch request itself, if the endpoint needs some. Default none.
    public let query: Parameters?

    /// Creates a client for `repository`'s API.
    public init(repository: AbstractRepository, path: String = "batch", limit: Int = 50, query: Parameters? = nil) {
        self.repository = repository
        self.path = path
        self.limit = max(1, limit)
        self.query = query
    }

    /// Sends every call of `batch`; the results are read by handle.
    ///
    /// - Returns: the failure of a batch request itself, else every item's own result. With more
    ///   items than ``limit``, the batches before the one that failed ran, but their results are
    ///   not returned: send at most ``limit`` items to know exactly what ran.
    public func send(_ batch: Batch) async -> Result<BatchResults, RepositoryError> {
        let requests = batch.items.map { $0.build(repository) }
        let answers = await sendRaw(requests, requiresSession: batch.items.contains { $0.requiresSession })
        return answers.map { responses in
            BatchResults(
                results: zip(batch.items, zip(requests, responses)).map { item, pair in
                    let (request, response) = pair
                    return request.flatMap { request in response.flatMap { item.interpret(repository, $0, request) } }
                })
        }
    }

    /// Sends prepared requests (as `AbstractRepository.makeRequest(for:)` builds them) and
    /// returns each one's raw answer, or the failure of a batch request itself.
    ///
    /// - Parameters:
    ///   - requests: the requests, in order; a failure (a request that could not be made) is
    ///     returned in its place without being sent.
    ///   - requiresSession: whether the batch request is signed with the session (its items
    ///     inherit the signature). Default `true`.
    ///   - options: options for the interceptors of the batch request's chain.
    public func sendRaw(
        _ requests: [Result<TransportRequest, RepositoryError>], requiresSession: Bool = true, options: RequestOptions = RequestOptions()
    ) async -> Result<[Result<TransportResponse, RepositoryError>], RepositoryError> {
        var answers: [Result<TransportResponse, RepositoryError>] = []
        var start = 0
        while start < requests.count {
            let slice = Array(requests[start..<min(start + limit, requests.count)])
            switch await sendOne(slice, requiresSession: requiresSession, options: options) {
            case .success(let part): answers += part
            case .failure(let error): return .failure(error)
            }
            start += limit
        }
        return .success(answers)
    }

    /// One batch request for at most ``limit`` items.
    private func sendOne(_ requests: [Result<TransportRequest, RepositoryError>], requiresSession: Bool, options: RequestOptions) async
        -> Result<[Result<TransportResponse, RepositoryError>], RepositoryError>
    {
        var wire: [JSONValue] = []
        var positions: [Int] = []
        var answers = requests.map { $0.map { _ in TransportResponse(statusCode: 0) } }
        for (position, request) in requests.enumerated() {
            guard case .success(let request) = request else { continue }
            switch BatchWire.item(for: request, baseURL: repository.configuration.baseURL) {
            case .success(let item):
                wire.append(item)
                positions.append(position)
            case .failure(let error): answers[position] = .failure(error)
            }
        }
        guard !wire.isEmpty else { return .success(answers) }
        let endpoint = Endpoint<TransportResponse>(.post, path, parameters: Parameters(json: ["batch": .array(wire)]), query: query)
        let batchRequest: TransportRequest
        do {
            batchRequest = try repository.makeRequest(for: endpoint)
        } catch {
            return .failure(error)
        }
        let response: TransportResponse
        let context = RequestContext(
            requiresSession: requiresSession, name: "batch", options: options, session: repository.sessionManager)
        switch await repository.send(batchRequest, context: context) {
        case .success(let answer): response = answer
        case .failure(let error): return .failure(error)
        }
        if case .failure(let error) = repository.interpret(response, to: batchRequest, for: Endpoint<Void>.post(path)) {
            return .failure(error)
        }
        let items: [Result<TransportResponse, RepositoryError>]
        switch BatchWire.responses(in: response, expected: wire.count, request: batchRequest) {
        case .success(let answered): items = answered
        // Which items ran is unknown: the batch call failed as a whole.
        case .failure(let error): return .failure(error)
        }
        for (offset, position) in positions.enumerated() {
            guard case .success(let original) = requests[position] else { continue }
            answers[position] = items[offset].map { item in
                var item = item
                item.url = original.url
                return item
            }
        }
        return .success(answers)
    }
}

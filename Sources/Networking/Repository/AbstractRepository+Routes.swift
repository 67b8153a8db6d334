import Foundation

extension AbstractRepository {
    /// Fetches an object through the object route registered for its type and `GET`
    /// (WANetworkRouting's `getObject:`): the object's JSON form fills the path's placeholders,
    /// and the answer decodes as `T` (often the object's own type, for its current state).
    ///
    /// ```swift
    /// // routes.register(Book.self, methods: [.get, .put, .delete], path: "books/:id")
    /// let fresh: Result<Book, RepositoryError> = await books.getObject(book)
    /// ```
    ///
    /// No route, or several routes for the type and method, fail with
    /// ``RepositoryError/invalidRequest(reason:request:)`` naming them; nothing is sent.
    public func getObject<Object: Encodable & Sendable, T: Decodable & Sendable>(_ object: Object) async -> Result<T, RepositoryError> {
        await performRequest(.object(object, method: .get))
    }

    /// Creates an object through its `POST` object route: the object is the body (wrapped in the
    /// route's request root key), and fills the path's placeholders; the answer decodes as `T`.
    public func postObject<Object: Encodable & Sendable, T: Decodable & Sendable>(_ object: Object) async -> Result<T, RepositoryError> {
        await performRequest(.object(object, method: .post))
    }

    /// Replaces an object through its `PUT` object route; see ``postObject(_:)``.
    public func putObject<Object: Encodable & Sendable, T: Decodable & Sendable>(_ object: Object) async -> Result<T, RepositoryError> {
        await performRequest(.object(object, method: .put))
    }

    /// Updates an object through its `PATCH` object route; see ``postObject(_:)``.
    public func patchObject<Object: Encodable & Sendable, T: Decodable & Sendable>(_ object: Object) async -> Result<T, RepositoryError> {
        await performRequest(.object(object, method: .patch))
    }

    /// Deletes an object through its `DELETE` object route; the body is not sent and the answer is ignored.
    public func deleteObject<Object: Encodable & Sendable>(_ object: Object) async -> Result<Void, RepositoryError> {
        await performRequest(Endpoint<Void>.object(object, method: .delete))
    }

    /// The cookies the configuration's ``NetworkingConfiguration/cookieStorage`` would send with a
    /// call of the named route (WebApiClient's `cookiesForAPI`); empty when there are none, the
    /// route is unknown or its path variables are missing.
    public func cookies(forRoute name: String, pathVariables: Parameters? = nil) -> [Cookie] {
        // With a body, so that a raw route (which refuses a call without one) resolves too: only
        // its URL is used.
        guard let storage = configuration.cookieStorage,
            let endpoint = try? configuration.routes.resolve(
                Endpoint<Void>.route(name, pathVariables: pathVariables).uploading(.data(Data())), in: configuration),
            let url = try? builder.url(for: endpoint.path, encoded: true)
        else { return [] }
        return storage.cookies(for: url)
    }
}

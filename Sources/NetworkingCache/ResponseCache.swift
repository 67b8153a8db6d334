import Foundation
import Networking

/// A private HTTP response cache for repositories: answers kept in memory and, optionally, on
/// disk, reused under RFC 9111's rules or a time to live per route or endpoint, revalidated with
/// `ETag` and `Last-Modified`, kept apart per user, shared among concurrent identical requests,
/// and — when allowed — used stale while the network is unreachable.
///
/// It is an `Interceptor` at `InterceptorPosition.beforeSigning`: it
/// sees requests before the session signs them, so nothing it stores holds a token. Give it to a
/// configuration, and every repository made with that configuration uses it:
///
/// ```swift
/// let cache = try ResponseCache(configuration: .init(diskFolder: cachesFolder))
/// var configuration = try NetworkingConfiguration(domainURL: "api.example.com")
/// configuration.interceptors.append(cache)
/// ```
///
/// Every answer says where it came from in `TransportResponse.source` (and
/// `RepositoryResponse.source`): `ResponseSource.network`,
/// `ResponseSource.cache`, `ResponseSource.revalidated` or
/// `ResponseSource.stale`.
///
/// What is stored — `GET` answers with a `2xx` status other than 202 and 206 — and when a signed request's
/// answer may be stored is described in <doc:TheResponseCache> and on ``CachePolicy``. Answers are kept per discriminator (the session's user by default, see
/// ``Configuration/discriminator``). Requests that stream their response (downloads,
/// `ResponseChunks`), ask for a range, or carry their own `If-None-Match` / `If-Modified-Since`
/// pass through untouched.
///
/// Calls that reach the server outside its chain — items of a batch request — make stale what
/// they would have made stale here once reported (`AbstractRepository.report(_:answeredBy:context:)`,
/// which `BatchClient` and `OfflineQueue` call); their answers are neither served nor stored.
///
/// Thread-safe; share one cache among repositories. Several processes may share one disk folder.
public final class ResponseCache: ExchangeObserver, Sendable {
    /// What the cache keeps, where, and how much.
    public let configuration: Configuration

    let memory: MemoryStore
    let disk: DiskStore?
    let coalescer = RequestCoalescer()
    /// The answers being fetched, so that one fetched before a removal of its own entry is not
    /// stored after it (a removal of other entries leaves it alone).
    let pendingStores = PendingStores()

    /// The header field set on answers the cache makes up: `miss` on the `504` of a cache-only
    /// call that found nothing.
    public static let statusHeaderName = "X-Networking-Cache"

    /// Creates a cache.
    ///
    /// - Throws: `RepositoryError.invalidConfiguration(reason:)` for a negative limit,
    ///   or a disk folder that cannot be created.
    public init(configuration: Configuration = Configuration()) throws(RepositoryError) {
        if let problem = configuration.problem { throw .invalidConfiguration(reason: "ResponseCache: \(problem)") }
        self.configuration = configuration
        memory = MemoryStore(costLimit: configuration.memoryByteLimit, countLimit: configuration.memoryEntryLimit)
        if let folder = configuration.diskFolder {
            do {
                // A record holds one body of at most `maximumBodyBytes`, its head and a few
                // fields; a MiB is more than the largest head libcurl accepts (300 KiB).
                let (recordLimit, overflow) = configuration.maximumBodyBytes.addingReportingOverflow(1 << 20)
                disk = try DiskStore(
                    folder: folder, costLimit: configuration.diskByteLimit, countLimit: configuration.diskEntryLimit,
                    recordLimit: overflow ? .max : recordLimit, synchronizesWrites: configuration.synchronizesDiskWrites)
            } catch {
                // The system's sentence, as a clause of this one.
                let cause = error.localizedDescription
                throw .invalidConfiguration(
                    reason:
                        "ResponseCache: the disk folder \(folder.path) cannot be created: \(cause.hasSuffix(".") ? String(cause.dropLast()) : cause)"
                )
            }
        } else {
            disk = nil
        }
    }

    /// Before the session signs requests (see `Interceptor`).
    public var position: InterceptorPosition { .beforeSigning }

    /// A route's cache settings and an endpoint's ``CachePolicy``.
    public var handledOptions: [any RequestOptionKey.Type] { [RouteCacheSettingsKey.self, CachePolicyKey.self] }

    /// The cache as an interceptor, for `configuration.interceptors.append(cache.interceptor)`
    /// (the cache itself is one, so `append(cache)` is the same).
    public var interceptor: any Interceptor { self }

    /// Removes every stored answer, in memory and on disk (every file of the folder this cache
    /// could have written, whichever process wrote it). Does file I/O on the calling thread.
    public func removeAll() {
        remove { _ in true }
    }

    /// Removes the stored answers of these routes, for every discriminator.
    public func removeEntries(ofRoutes names: [String]) {
        let tags = Set(names.map(StoreName.tag(forRoute:)))
        remove { tags.contains($0.route) }
    }

    /// Removes the stored answers of these routes for one discriminator (`nil`: answers shared by
    /// everybody) — what a successful call with `invalidatesCachedRouteNames` does.
    public func removeEntries(ofRoutes names: [String], discriminator: String?) {
        let tags = Set(names.map(StoreName.tag(forRoute:)))
        let owner = StoreName.tag(forDiscriminator: discriminator)
        remove { tags.contains($0.route) && $0.discriminator == owner }
    }

    /// Removes every stored answer of one discriminator (`nil`: answers shared by everybody),
    /// for example when a user logs out for good.
    public func removeEntries(for discriminator: String?) {
        let owner = StoreName.tag(forDiscriminator: discriminator)
        remove { $0.discriminator == owner }
    }

    /// Removes the records whose names match from both tiers; answers in flight whose names match
    /// are not stored (see ``PendingStores``).
    ///
    /// The disk goes first: a lookup that reads a file before it is deleted puts it in memory
    /// only if memory was not cleared meanwhile (``MemoryStore/store(_:as:unlessRemovedSince:)``),
    /// and one that starts after memory is cleared finds no file.
    func remove(where matches: (StoreName) -> Bool) {
        pendingStores.removed(where: matches)
        disk?.removeAll(where: matches)
        memory.removeAll(where: matches)
    }

    /// Runs a request's stores and removals: on a thread of its own when they touch the disk
    /// (``DiskThread``), at once when the cache is in memory only.
    func storing(_ work: @escaping @Sendable () -> Void) async {
        if disk == nil { work() } else { await DiskThread.run(work) }
    }
}

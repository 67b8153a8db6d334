/// The name an entry is stored under, in memory and as a file name on disk:
/// `route_discriminator_resource_key[_variant]`, each part a cut SHA-256 digest in lowercase hex.
///
/// The parts let the cache remove groups of entries from names alone: every entry of a route
/// (for one discriminator or all of them), of a discriminator (at logout), or of a resource (after
/// a write to its URL). A response that varies (`Vary`) is stored under its key's name with the
/// variant's digest added, beside a small record under the bare name that lists the header
/// fields it varies on.
struct StoreName: Sendable, Hashable, CustomStringConvertible {
    /// The digest of the route's name (12 hex digits).
    let route: String
    /// The digest of the discriminator (12 hex digits).
    let discriminator: String
    /// The digest of the resource: scheme, host, port and path (12 hex digits).
    let resource: String
    /// The digest of the whole key (32 hex digits).
    let key: String
    /// The digest of the request header values a varying response was selected by (16 hex digits).
    let variant: String?

    /// The name as text: the file name on disk.
    var description: String {
        let base = "\(route)_\(discriminator)_\(resource)_\(key)"
        return variant.map { "\(base)_\($0)" } ?? base
    }

    /// The same name for one variant of the response.
    func variant(_ tag: String) -> StoreName {
        StoreName(route: route, discriminator: discriminator, resource: resource, key: key, variant: tag)
    }

    /// The name without a variant: where the list of varying fields is kept.
    var base: StoreName { StoreName(route: route, discriminator: discriminator, resource: resource, key: key, variant: nil) }

    /// Reads a file name; `nil` for anything else (temporary files, foreign files).
    init?(fileName: String) {
        let parts = fileName.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 4 || parts.count == 5 else { return nil }
        let lengths = [12, 12, 12, 32, 16]
        for (index, part) in parts.enumerated() {
            guard part.utf8.count == lengths[index], part.utf8.allSatisfy(Self.isHexDigit) else { return nil }
        }
        self.init(
            route: String(parts[0]), discriminator: String(parts[1]), resource: String(parts[2]), key: String(parts[3]),
            variant: parts.count == 5 ? String(parts[4]) : nil)
    }

    init(route: String, discriminator: String, resource: String, key: String, variant: String?) {
        self.route = route
        self.discriminator = discriminator
        self.resource = resource
        self.key = key
        self.variant = variant
    }

    static func tag(forRoute name: String) -> String { TagMemo.shared.tag(for: "route:" + name, characters: 12) }

    static func tag(forDiscriminator discriminator: String?) -> String {
        TagMemo.shared.tag(for: discriminator.map { "user:" + $0 } ?? "shared", characters: 12)
    }

    static func tag(forResource resource: String) -> String { TagMemo.shared.tag(for: "resource:" + resource, characters: 12) }

    static func tag(forVariant text: String) -> String { SHA256Digest.hex("variant:" + text, characters: 16) }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

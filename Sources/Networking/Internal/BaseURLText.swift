import Foundation

/// The one rule for what may be a base URL, shared by ``NetworkingConfiguration/init(baseURL:)-(String)``
/// and a route's leading `:baseURL`: an absolute `http` or `https` URL with a host, and no user,
/// query or fragment (they would be lost, or leak into every request).
enum BaseURLText {
    /// Why a text is not a base URL.
    enum Problem: Error {
        case notWebURL
        case noHost
        case userQueryOrFragment
    }

    /// The parts of `text`, once it passed the rule.
    static func components(of text: String) throws(Problem) -> (scheme: String, components: URLComponents) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else { throw .notWebURL }
        guard components.host?.isEmpty == false else { throw .noHost }
        guard components.user == nil, components.password == nil, components.query == nil, components.fragment == nil else {
            throw .userQueryOrFragment
        }
        return (scheme, components)
    }
}

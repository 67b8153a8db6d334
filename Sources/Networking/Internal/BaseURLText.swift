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
        /// A port too large for any number (`:99999999999999999999`), which Foundation reads as none.
        case portOutOfRange
    }

    /// The parts of `text`, once it passed the rule.
    static func components(of text: String) throws(Problem) -> (scheme: String, components: URLComponents) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else { throw .notWebURL }
        guard components.host?.isEmpty == false else { throw .noHost }
        // Percent-encoded: the decoded parts read as none when they are not UTF-8 (`?k=%FF`).
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil,
            components.percentEncodedQuery == nil, components.percentEncodedFragment == nil
        else { throw .userQueryOrFragment }
        if hasUnreadablePort(components) { throw .portOutOfRange }
        return (scheme, components)
    }

    /// Whether `components` has a port too large for any number (`:99999999999999999999`), which
    /// Foundation reads as none, as if the URL had no port.
    static func hasUnreadablePort(_ components: URLComponents) -> Bool {
        components.rangeOfPort?.isEmpty == false && components.port == nil
    }

    /// The host of `components` as a host name: an international one in punycode, as given
    /// (Foundation decodes `xn--bcher-kva.example` to `bücher.example`).
    static func host(of components: URLComponents) -> String {
        guard let host = components.host, !host.allSatisfy(\.isASCII) else { return components.host ?? "" }
        return components.encodedHost ?? host
    }
}

import Foundation

/// Reads `Link` header fields (RFC 8288): `<https://…/books?page=3>; rel="next", <…>; rel="prev"`.
enum LinkHeader {
    /// The target of the first link whose `rel` holds `relation` (compared case-insensitively).
    static func target(of relation: String, in fields: [String], relativeTo base: URL) -> URL? {
        let wanted = relation.lowercased()
        for field in fields {
            for link in links(in: field) where link.relations.contains(wanted) {
                return URL(string: link.target, relativeTo: base)?.absoluteURL
            }
        }
        return nil
    }

    /// Where the first `separator` outside double quotes is in `text`, or `nil`. A quoted string
    /// may hold `\"` (RFC 9110 §5.6.4), which neither ends it nor starts one.
    private static func firstOutsideQuotes(_ separator: Character, in text: Substring) -> Substring.Index? {
        var quoted = false
        var escaped = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == separator, !quoted {
                return index
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// The pieces of `text` between `separator`s that are not inside double quotes.
    private static func splitOutsideQuotes(_ text: Substring, at separator: Character) -> [Substring] {
        var pieces: [Substring] = []
        var rest = text
        while let end = firstOutsideQuotes(separator, in: rest) {
            pieces.append(rest[..<end])
            rest = rest[rest.index(after: end)...]
        }
        pieces.append(rest)
        return pieces
    }

    /// Each `<target>; params` of a field, with its relation types lower-cased.
    private static func links(in field: String) -> [(target: String, relations: [String])] {
        var result: [(String, [String])] = []
        var rest = Substring(field)
        while let open = rest.firstIndex(of: "<") {
            guard let close = rest[open...].firstIndex(of: ">") else { break }
            let target = String(rest[rest.index(after: open)..<close])
            rest = rest[rest.index(after: close)...]
            // The parameters run to the next comma outside quotes.
            let end = firstOutsideQuotes(",", in: rest) ?? rest.endIndex
            let parameters = rest[..<end]
            rest = rest[end...].drop { $0 == "," || $0 == " " }
            var relations: [String] = []
            for parameter in splitOutsideQuotes(parameters, at: ";") {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, pair[0].lowercased() == "rel" else { continue }
                let value = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                relations = value.lowercased().split(separator: " ").map(String.init)
                break  // RFC 8288 §3.3: only the first `rel` parameter counts.
            }
            result.append((target, relations))
        }
        return result
    }
}

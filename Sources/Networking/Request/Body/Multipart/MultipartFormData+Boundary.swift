import Foundation

/// Choosing, checking and validating boundaries. See ``MultipartFormData`` for why a random
/// boundary is safe and when it is replaced.
extension MultipartFormData {
    /// Draws new random boundaries until none occurs in `newContent` or the in-memory parts, unless
    /// the caller fixed the boundary. Generated boundaries all have the same length, so the lengths
    /// already added up stay right. Each draw collides with probability about (bytes in memory) × 62⁻³²,
    /// so the loop ends after one draw in practice.
    mutating func replaceBoundaryIfFound(in newContent: Data) {
        guard !isBoundaryFixed, Self.occurs(boundary, in: newContent) else { return }
        repeat {
            boundary = Self.randomBoundary()
        } while Self.occurs(boundary, in: newContent) || inMemoryContents.contains { Self.occurs(boundary, in: $0) }
    }

    /// `"Networking-"` and 32 random letters and digits.
    static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let suffix = (0..<32).map { _ in boundaryAlphabet[Int.random(in: 0..<boundaryAlphabet.count, using: &generator)] }
        return "Networking-" + String(decoding: suffix, as: UTF8.self)
    }

    /// Why `boundary` breaks RFC 2046 §5.1.1, or `nil` when it is valid.
    static func boundaryProblem(_ boundary: String) -> String? {
        let scalars = boundary.unicodeScalars
        if scalars.isEmpty { return "a boundary must have at least 1 character" }
        if scalars.count > 70 { return "a boundary must have at most 70 characters, not \(scalars.count)" }
        let punctuation = "'()+_,-./:=? ".unicodeScalars
        let isAllowed = { (scalar: Unicode.Scalar) in
            ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
                || punctuation.contains(scalar)
        }
        if let bad = scalars.first(where: { !isAllowed($0) }) {
            return "\"\(bad.escaped(asASCII: true))\" is not allowed in a boundary (letters, digits, space and '()+_,-./:=? are)"
        }
        if scalars.last == " " { return "a boundary must not end with a space" }
        return nil
    }

    /// Whether the UTF-8 bytes of `needle` occur in `haystack`.
    static func occurs(_ needle: String, in haystack: Data) -> Bool {
        let pattern = Array(needle.utf8)
        guard let first = pattern.first, haystack.count >= pattern.count else { return pattern.isEmpty }
        return haystack.withUnsafeBytes { bytes in
            let lastStart = bytes.count - pattern.count
            var index = 0
            while index <= lastStart {
                guard let found = bytes[index...lastStart].firstIndex(of: first) else { return false }
                if bytes[found..<(found + pattern.count)].elementsEqual(pattern) { return true }
                index = found + 1
            }
            return false
        }
    }
}

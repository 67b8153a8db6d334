extension String {
    /// The sentence as a clause of another: without its final full stop, and starting in lower
    /// case unless its first word is an acronym ("GET", "JSON"). For a nested error's or the
    /// system's description embedded after a colon.
    var clause: String {
        var text = self
        if text.hasSuffix(".") { text.removeLast() }
        guard let first = text.first, first.isUppercase, let second = text.dropFirst().first, second.isLowercase else { return text }
        return first.lowercased() + text.dropFirst()
    }
}

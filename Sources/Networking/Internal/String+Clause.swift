extension String {
    /// The sentence as a clause of another: without its final full stop, and with a first word
    /// in lower case when it is a plain capitalised word ("The file …", "Unexpected character
    /// …"), not an acronym ("GET", "JSON") or a type's name and fields ("ValidationError(…)").
    /// For a nested error's or the system's description embedded after a colon.
    var clause: String {
        var text = self
        if text.hasSuffix(".") { text.removeLast() }
        let word = text.prefix { $0 != " " }
        guard word.count < text.count, let first = word.first, first.isUppercase,
            word.dropFirst().allSatisfy({ $0.isLowercase || $0 == "'" || $0 == "’" })
        else { return text }
        return first.lowercased() + text.dropFirst()
    }
}

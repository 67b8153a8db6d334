/// Why one JSON value could not become the requested Swift value, before the caller (which knows the
/// coding path and the requested type) turns it into `JSONDecoder`'s error.
///
/// Value readers throw it as a typed error, so the common paths allocate nothing.
enum FastJSONValueFailure: Error {
    /// The value is of another kind (a `FastJSONTape` kind).
    case typeMismatch(found: UInt8)
    /// The value is null.
    case valueNotFound
    /// The value's text is not valid (bad number, escape, UTF-8; or a number out of range).
    case syntax(FastJSONSyntaxError)
}

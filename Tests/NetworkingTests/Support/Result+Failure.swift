extension Result {
    /// The error, when the result is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

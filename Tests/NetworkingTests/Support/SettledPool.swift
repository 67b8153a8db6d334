/// Waits, up to 30 seconds, until a new task starts within 50 ms: a test that times something
/// measures it, not a cooperative pool (two threads here) still busy starting the rest of the
/// run. It decides nothing about outcomes, which tests check whatever the timing.
func settledPool() async {
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline {
        let asked = ContinuousClock.now
        let started = await Task.detached { ContinuousClock.now }.value
        if started - asked < .milliseconds(50) { return }
        try? await Task.sleep(for: .milliseconds(100))
    }
}

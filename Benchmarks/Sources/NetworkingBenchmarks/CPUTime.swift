import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// CPU time this process has used (user + system), from `getrusage`: what spinning and
/// hand-overs cost, beside the rates they buy.
enum CPUTime {
    /// Seconds of CPU used so far by every thread of the process.
    static func current() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
            let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
            let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

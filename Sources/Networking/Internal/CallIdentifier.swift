import Foundation
import Synchronization

/// Identifiers for calls (``RequestContext/id``, ``ActivityEvent/Call/id``): UUIDs in the
/// version 4 layout, made without a system call.
///
/// `UUID()` reads the system's random source on Linux — opening, reading and closing
/// `/dev/urandom` each time — which cost about a fifth of the calling side's CPU time per request
/// with 8 small requests in flight on loopback (measured with `perf`; see Benchmarks/README.md).
/// These identifiers only need to be unique, not unpredictable: 64 random bits drawn once per
/// process, then a counter. Two processes collide only if their random halves do (one chance in
/// 2⁶² per pair).
enum CallIdentifier {
    private static let processBits = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)

    /// A new identifier, different from every other this process made.
    static func next() -> UUID {
        let count = counter.wrappingAdd(1, ordering: .relaxed).newValue
        // Version 4 in the high nibble of byte 6; variant 10 in the top bits of byte 8.
        let high = (processBits & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        let low = (count & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let h = high.bigEndian
        let l = low.bigEndian
        return withUnsafeBytes(of: (h, l)) { bytes in
            UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        }
    }
}

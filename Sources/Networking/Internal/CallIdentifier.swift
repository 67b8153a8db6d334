import Foundation
import Synchronization

/// Identifiers for calls (``RequestContext/id``, ``ActivityEvent/Call/id``): UUIDs in the
/// version 4 layout, made without a system call.
///
/// `UUID()` reads the system's random source on Linux — opening, reading and closing
/// `/dev/urandom` each time — which cost about a fifth of the calling side's CPU time per request
/// with 8 small requests in flight on loopback (measured with `perf`; see Benchmarks/README.md).
/// These are made from 64 random bits drawn once per process and a counter passed through a
/// keyed permutation (a four-round Feistel network over its 62 bits, each round Swift's
/// `Hasher`, which is seeded at random per process): unique within the process as the counter
/// is, yet not predictable from one another — an offline write sends its call's identifier as
/// its `Idempotency-Key`, which someone who saw one must not guess the next of. Two processes
/// collide only if their random halves do (one chance in 2⁶² per pair).
enum CallIdentifier {
    private static let processBits = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)

    /// A new identifier, different from every other this process made.
    static func next() -> UUID {
        let count = counter.wrappingAdd(1, ordering: .relaxed).newValue
        // Version 4 in the high nibble of byte 6; variant 10 in the top bits of byte 8.
        let high = (processBits & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        let low = permuted(count & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
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

    /// The 62-bit value `value` mapped one to one onto another 62-bit value, by a Feistel network
    /// whose round function is the process's random `Hasher` keyed further by ``processBits``.
    static func permuted(_ value: UInt64) -> UInt64 {
        let mask: UInt64 = 0x7FFF_FFFF  // 31 bits
        var left = value >> 31 & mask
        var right = value & mask
        for round in 0..<4 {
            var hasher = Hasher()
            hasher.combine(processBits)
            hasher.combine(round)
            hasher.combine(right)
            let mixed = UInt64(truncatingIfNeeded: hasher.finalize()) & mask
            (left, right) = (right, left ^ mixed)
        }
        return left << 31 | right
    }
}

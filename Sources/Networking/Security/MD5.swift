/// MD5 (RFC 1321), for the `Content-MD5` header (RFC 1864) and the upload checksums that object
/// stores still ask for.
///
/// MD5 is broken for collision resistance, so it is never used here to decide trust: it only lets a
/// server detect bytes damaged in transit. The library has no dependencies and Linux has no system
/// hashing API in Swift, hence this implementation. It is checked against the RFC 1321 test suite and
/// `openssl md5`, and hashes large buffers at several hundred MB/s in release builds: whole blocks are
/// read straight from the caller's buffer and the 64 steps are unrolled.
struct MD5 {
    /// The chaining state A, B, C, D, starting at the RFC 1321 §3.3 initial values.
    private var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
    /// Bytes waiting for a full 64-byte block.
    private var pending: [UInt8] = []
    /// The message length so far; RFC 1321 appends it modulo 2^64 bits, so wrapping is intended.
    private var totalBytes: UInt64 = 0

    /// A hasher with nothing hashed yet.
    init() { pending.reserveCapacity(64) }

    /// The 16-byte digest of `bytes`.
    static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = MD5()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Adds bytes to the message; contiguous collections (`[UInt8]`, `Data`) take the fast path.
    mutating func update(_ bytes: some Sequence<UInt8>) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { update(buffer: UnsafeRawBufferPointer($0)) }
        if handled == nil { Array(bytes).withUnsafeBytes { update(buffer: $0) } }
    }

    /// Adds the bytes of a buffer to the message: whole blocks are hashed straight from the buffer
    /// and only the tail (under 64 bytes) is copied, so this is the path for large inputs.
    mutating func update(buffer bytes: UnsafeRawBufferPointer) {
        totalBytes &+= UInt64(truncatingIfNeeded: bytes.count)
        var offset = 0
        if !pending.isEmpty {
            let taken = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<taken])
            offset = taken
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { compress($0) }
            pending.removeAll(keepingCapacity: true)
        }
        while bytes.count - offset >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 64)]))
            offset += 64
        }
        pending.append(contentsOf: bytes[offset...])
    }

    /// Pads the message (RFC 1321 §3.1–3.2) and returns the 16-byte digest, A to D little-endian.
    consuming func finalize() -> [UInt8] {
        let bitLength = totalBytes &* 8
        var tail = pending
        tail.append(0x80)
        let paddedLength = tail.count <= 56 ? 64 : 128
        tail.append(contentsOf: repeatElement(0, count: paddedLength - 8 - tail.count))
        for shift in stride(from: 0, through: 56, by: 8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        tail.withUnsafeBytes { buffer in
            compress(UnsafeRawBufferPointer(rebasing: buffer[0..<64]))
            if paddedLength == 128 { compress(UnsafeRawBufferPointer(rebasing: buffer[64..<128])) }
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(16)
        for word in [state.0, state.1, state.2, state.3] {
            for shift in stride(from: 0, through: 24, by: 8) { digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return digest
    }

    /// Processes one 64-byte block (RFC 1321 §3.4): four rounds of sixteen steps, unrolled so the
    /// shift amounts, word indices and the constants `T[i] = floor(abs(sin(i + 1)) * 2^32)` are
    /// immediates the optimizer can fold.
    private mutating func compress(_ block: UnsafeRawBufferPointer) {
        /// Message word `index` of the block, little-endian (RFC 1321 §3.4 step 4).
        @inline(__always) func word(_ index: Int) -> UInt32 {
            UInt32(littleEndian: block.loadUnaligned(fromByteOffset: index &* 4, as: UInt32.self))
        }
        var (a, b, c, d) = state

        // Round 1: F(b, c, d) = (b & c) | (~b & d), written as d ^ (b & (c ^ d)).
        a = Self.step(a, b, d ^ (b & (c ^ d)), word(0), 0xd76a_a478, 7)
        d = Self.step(d, a, c ^ (a & (b ^ c)), word(1), 0xe8c7_b756, 12)
        c = Self.step(c, d, b ^ (d & (a ^ b)), word(2), 0x2420_70db, 17)
        b = Self.step(b, c, a ^ (c & (d ^ a)), word(3), 0xc1bd_ceee, 22)
        a = Self.step(a, b, d ^ (b & (c ^ d)), word(4), 0xf57c_0faf, 7)
        d = Self.step(d, a, c ^ (a & (b ^ c)), word(5), 0x4787_c62a, 12)
        c = Self.step(c, d, b ^ (d & (a ^ b)), word(6), 0xa830_4613, 17)
        b = Self.step(b, c, a ^ (c & (d ^ a)), word(7), 0xfd46_9501, 22)
        a = Self.step(a, b, d ^ (b & (c ^ d)), word(8), 0x6980_98d8, 7)
        d = Self.step(d, a, c ^ (a & (b ^ c)), word(9), 0x8b44_f7af, 12)
        c = Self.step(c, d, b ^ (d & (a ^ b)), word(10), 0xffff_5bb1, 17)
        b = Self.step(b, c, a ^ (c & (d ^ a)), word(11), 0x895c_d7be, 22)
        a = Self.step(a, b, d ^ (b & (c ^ d)), word(12), 0x6b90_1122, 7)
        d = Self.step(d, a, c ^ (a & (b ^ c)), word(13), 0xfd98_7193, 12)
        c = Self.step(c, d, b ^ (d & (a ^ b)), word(14), 0xa679_438e, 17)
        b = Self.step(b, c, a ^ (c & (d ^ a)), word(15), 0x49b4_0821, 22)

        // Round 2: G(b, c, d) = (b & d) | (c & ~d), written as c ^ (d & (b ^ c)).
        a = Self.step(a, b, c ^ (d & (b ^ c)), word(1), 0xf61e_2562, 5)
        d = Self.step(d, a, b ^ (c & (a ^ b)), word(6), 0xc040_b340, 9)
        c = Self.step(c, d, a ^ (b & (d ^ a)), word(11), 0x265e_5a51, 14)
        b = Self.step(b, c, d ^ (a & (c ^ d)), word(0), 0xe9b6_c7aa, 20)
        a = Self.step(a, b, c ^ (d & (b ^ c)), word(5), 0xd62f_105d, 5)
        d = Self.step(d, a, b ^ (c & (a ^ b)), word(10), 0x0244_1453, 9)
        c = Self.step(c, d, a ^ (b & (d ^ a)), word(15), 0xd8a1_e681, 14)
        b = Self.step(b, c, d ^ (a & (c ^ d)), word(4), 0xe7d3_fbc8, 20)
        a = Self.step(a, b, c ^ (d & (b ^ c)), word(9), 0x21e1_cde6, 5)
        d = Self.step(d, a, b ^ (c & (a ^ b)), word(14), 0xc337_07d6, 9)
        c = Self.step(c, d, a ^ (b & (d ^ a)), word(3), 0xf4d5_0d87, 14)
        b = Self.step(b, c, d ^ (a & (c ^ d)), word(8), 0x455a_14ed, 20)
        a = Self.step(a, b, c ^ (d & (b ^ c)), word(13), 0xa9e3_e905, 5)
        d = Self.step(d, a, b ^ (c & (a ^ b)), word(2), 0xfcef_a3f8, 9)
        c = Self.step(c, d, a ^ (b & (d ^ a)), word(7), 0x676f_02d9, 14)
        b = Self.step(b, c, d ^ (a & (c ^ d)), word(12), 0x8d2a_4c8a, 20)

        // Round 3: H(b, c, d) = b ^ c ^ d.
        a = Self.step(a, b, b ^ c ^ d, word(5), 0xfffa_3942, 4)
        d = Self.step(d, a, a ^ b ^ c, word(8), 0x8771_f681, 11)
        c = Self.step(c, d, d ^ a ^ b, word(11), 0x6d9d_6122, 16)
        b = Self.step(b, c, c ^ d ^ a, word(14), 0xfde5_380c, 23)
        a = Self.step(a, b, b ^ c ^ d, word(1), 0xa4be_ea44, 4)
        d = Self.step(d, a, a ^ b ^ c, word(4), 0x4bde_cfa9, 11)
        c = Self.step(c, d, d ^ a ^ b, word(7), 0xf6bb_4b60, 16)
        b = Self.step(b, c, c ^ d ^ a, word(10), 0xbebf_bc70, 23)
        a = Self.step(a, b, b ^ c ^ d, word(13), 0x289b_7ec6, 4)
        d = Self.step(d, a, a ^ b ^ c, word(0), 0xeaa1_27fa, 11)
        c = Self.step(c, d, d ^ a ^ b, word(3), 0xd4ef_3085, 16)
        b = Self.step(b, c, c ^ d ^ a, word(6), 0x0488_1d05, 23)
        a = Self.step(a, b, b ^ c ^ d, word(9), 0xd9d4_d039, 4)
        d = Self.step(d, a, a ^ b ^ c, word(12), 0xe6db_99e5, 11)
        c = Self.step(c, d, d ^ a ^ b, word(15), 0x1fa2_7cf8, 16)
        b = Self.step(b, c, c ^ d ^ a, word(2), 0xc4ac_5665, 23)

        // Round 4: I(b, c, d) = c ^ (b | ~d).
        a = Self.step(a, b, c ^ (b | ~d), word(0), 0xf429_2244, 6)
        d = Self.step(d, a, b ^ (a | ~c), word(7), 0x432a_ff97, 10)
        c = Self.step(c, d, a ^ (d | ~b), word(14), 0xab94_23a7, 15)
        b = Self.step(b, c, d ^ (c | ~a), word(5), 0xfc93_a039, 21)
        a = Self.step(a, b, c ^ (b | ~d), word(12), 0x655b_59c3, 6)
        d = Self.step(d, a, b ^ (a | ~c), word(3), 0x8f0c_cc92, 10)
        c = Self.step(c, d, a ^ (d | ~b), word(10), 0xffef_f47d, 15)
        b = Self.step(b, c, d ^ (c | ~a), word(1), 0x8584_5dd1, 21)
        a = Self.step(a, b, c ^ (b | ~d), word(8), 0x6fa8_7e4f, 6)
        d = Self.step(d, a, b ^ (a | ~c), word(15), 0xfe2c_e6e0, 10)
        c = Self.step(c, d, a ^ (d | ~b), word(6), 0xa301_4314, 15)
        b = Self.step(b, c, d ^ (c | ~a), word(13), 0x4e08_11a1, 21)
        a = Self.step(a, b, c ^ (b | ~d), word(4), 0xf753_7e82, 6)
        d = Self.step(d, a, b ^ (a | ~c), word(11), 0xbd3a_f235, 10)
        c = Self.step(c, d, a ^ (d | ~b), word(2), 0x2ad7_d2bb, 15)
        b = Self.step(b, c, d ^ (c | ~a), word(9), 0xeb86_d391, 21)

        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }

    /// One MD5 step: `b + ((a + f + x + t) <<< s)`, where `f` is the round function of b, c, d.
    @inline(__always)
    private static func step(_ a: UInt32, _ b: UInt32, _ f: UInt32, _ x: UInt32, _ t: UInt32, _ s: UInt32) -> UInt32 {
        let sum = a &+ f &+ x &+ t
        return b &+ ((sum &<< s) | (sum &>> (32 &- s)))
    }
}

/// Turns the bytes of a JSON number into Swift numbers with exactly `JSONDecoder`'s results.
///
/// `JSONDecoder` reads doubles with `strtod`, which rounds correctly; so does this: a fast path
/// that is exact by construction (at most 19 significant digits, a significand of at most 2^53 and a
/// power of ten small enough to be exact, so one IEEE operation rounds once), and otherwise the
/// standard library's correctly rounded parser.
enum FastJSONNumberParser {
    @inline(__always) static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    /// Whether the bytes are a number by RFC 8259's grammar — exactly the numbers `JSONDecoder`
    /// manages to decode (it fails on everything else, late but surely).
    static func isValid(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        if i < n, p[i] == UInt8(ascii: "-") { i &+= 1 }
        guard i < n else { return false }
        if p[i] == UInt8(ascii: "0") {
            i &+= 1
        } else if isDigit(p[i]) {
            while i < n, isDigit(p[i]) { i &+= 1 }
        } else {
            return false
        }
        if i < n, p[i] == UInt8(ascii: ".") {
            i &+= 1
            guard i < n, isDigit(p[i]) else { return false }
            while i < n, isDigit(p[i]) { i &+= 1 }
        }
        if i < n, p[i] == UInt8(ascii: "e") || p[i] == UInt8(ascii: "E") {
            i &+= 1
            if i < n, p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-") { i &+= 1 }
            guard i < n, isDigit(p[i]) else { return false }
            while i < n, isDigit(p[i]) { i &+= 1 }
        }
        return i == n
    }

    /// For a number the scanner marked as a plain integer (a `-` or digit, then digits): whether it
    /// has a digit and no leading zero.
    @inline(__always) static func isValidPlainInteger(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        let start = p[0] == UInt8(ascii: "-") ? 1 : 0
        guard n > start else { return false }
        return p[start] != UInt8(ascii: "0") || n == start &+ 1
    }

    /// A valid plain integer as `T`, or nil if it is out of `T`'s range.
    @inline(__always) static func plainInteger<T: FixedWidthInteger>(_ p: UnsafePointer<UInt8>, _ n: Int, as type: T.Type) -> T? {
        let negative = p[0] == UInt8(ascii: "-")
        var i = negative ? 1 : 0
        if n &- i <= 18 {
            // At most 18 digits fit in Int64 without overflow checks.
            var magnitude: Int64 = 0
            while i < n {
                magnitude = magnitude &* 10 &+ Int64(p[i] &- UInt8(ascii: "0"))
                i &+= 1
            }
            return T(exactly: negative ? -magnitude : magnitude)
        }
        var value: T = 0
        while i < n {
            let digit = T(truncatingIfNeeded: p[i] &- UInt8(ascii: "0"))
            let (scaled, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? scaled.subtractingReportingOverflow(digit) : scaled.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = next
            i &+= 1
        }
        return value
    }

    /// JSONDecoder's "true zero" test: no nonzero digit before the exponent. A number that rounds
    /// to zero without being zero is not representable.
    ///
    /// This follows swift-foundation's loop exactly, including its quirk: bytes are examined four
    /// at a time from the start, and the last `n % 4` bytes from the end backwards, so that `0e1`
    /// (which meets the `1` before the `e`) is not a true zero while `0e-1` is.
    static func isTrueZero(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        @inline(__always) func verdict(_ byte: UInt8) -> Bool? {
            if byte >= UInt8(ascii: "1"), byte <= UInt8(ascii: "9") { return false }
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return true }
            return nil
        }
        let whole = n - n % 4
        var i = 0
        while i < whole {
            if let result = verdict(p[i]) { return result }
            i &+= 1
        }
        i = n &- 1
        while i >= whole {
            if let result = verdict(p[i]) { return result }
            i &-= 1
        }
        return true
    }

    /// 10^e for 0 ≤ e ≤ 22, all exactly representable as doubles.
    @inline(__always) private static func exactPowerOfTen(_ e: Int) -> Double {
        switch e {
        case 0: 1e0
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        case 15: 1e15
        case 16: 1e16
        case 17: 1e17
        case 18: 1e18
        case 19: 1e19
        case 20: 1e20
        case 21: 1e21
        default: 1e22
        }
    }

    /// A valid number as the nearest double (infinity when too large, zero when too small, as strtod).
    static func double(_ p: UnsafePointer<UInt8>, _ n: Int) -> Double? {
        let negative = p[0] == UInt8(ascii: "-")
        var i = negative ? 1 : 0
        var significand: UInt64 = 0
        var digits = 0
        var exponent = 0
        while i < n, isDigit(p[i]) {
            let digit = UInt64(p[i] &- UInt8(ascii: "0"))
            if significand != 0 || digit != 0 {
                digits &+= 1
                significand = significand &* 10 &+ digit
            }
            i &+= 1
        }
        if i < n, p[i] == UInt8(ascii: ".") {
            i &+= 1
            while i < n, isDigit(p[i]) {
                let digit = UInt64(p[i] &- UInt8(ascii: "0"))
                if significand != 0 || digit != 0 {
                    digits &+= 1
                    significand = significand &* 10 &+ digit
                }
                exponent &-= 1
                i &+= 1
            }
        }
        // Set when the exponent has more digits than are read: the sum above is then not the number's
        // power of ten, so only the correctly rounded parser may answer.
        var exponentIsCapped = false
        if i < n {
            // An exponent (the grammar was checked).
            i &+= 1
            var exponentNegative = false
            if p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-") {
                exponentNegative = p[i] == UInt8(ascii: "-")
                i &+= 1
            }
            var value = 0
            while i < n {
                if value < 100_000 {
                    value = value &* 10 &+ Int(p[i] &- UInt8(ascii: "0"))
                } else {
                    exponentIsCapped = true
                }
                i &+= 1
            }
            exponent &+= exponentNegative ? -value : value
        }
        if digits <= 19 {
            if significand == 0 { return negative ? -0.0 : 0.0 }
            if significand <= 1 << 53, !exponentIsCapped {
                var result: Double?
                if exponent == 0 {
                    result = Double(significand)
                } else if exponent > 0, exponent <= 22 {
                    result = Double(significand) * exactPowerOfTen(exponent)
                } else if exponent < 0, exponent >= -22 {
                    result = Double(significand) / exactPowerOfTen(-exponent)
                } else if exponent > 22, exponent <= 22 + 15 {
                    // Move some of the power into the significand while it stays exact.
                    var scaled = significand
                    var overflow = false
                    for _ in 0..<(exponent - 22) {
                        let (next, o) = scaled.multipliedReportingOverflow(by: 10)
                        scaled = next
                        overflow = overflow || o
                    }
                    if !overflow, scaled <= 1 << 53 { result = Double(scaled) * 1e22 }
                }
                if let result { return negative ? -result : result }
            }
        }
        return Double(String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self))
    }

    /// A valid number as the nearest float (strtof's result: rounded once, from the decimal text).
    static func float(_ p: UnsafePointer<UInt8>, _ n: Int) -> Float? {
        Float(String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self))
    }
}

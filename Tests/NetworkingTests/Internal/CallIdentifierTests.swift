import Foundation
import Testing

@testable import Networking

@Suite("Call identifiers")
struct CallIdentifierTests {
    @Test("identifiers are distinct, in the version 4 layout, and share this process's random half")
    func layout() {
        let identifiers = (0..<10_000).map { _ in CallIdentifier.next() }
        #expect(Set(identifiers).count == identifiers.count)
        for identifier in identifiers.prefix(100) {
            let bytes = identifier.uuid
            #expect(bytes.6 >> 4 == 4, "version 4")
            #expect(bytes.8 >> 6 == 0b10, "RFC 4122 variant")
            #expect(identifier.uuidString.count == 36)
        }
        let first = identifiers[0].uuidString.prefix(18)
        #expect(identifiers.allSatisfy { $0.uuidString.hasPrefix(first) })
    }

    @Test("the counter half is a permutation, not the counter: one identifier does not tell the next")
    func unpredictable() {
        // One to one on a run of counters, and within 62 bits.
        let mapped = (0..<50_000).map { CallIdentifier.permuted(UInt64($0)) }
        #expect(Set(mapped).count == mapped.count)
        #expect(mapped.allSatisfy { $0 >> 62 == 0 })
        #expect(CallIdentifier.permuted(0x3FFF_FFFF_FFFF_FFFF) >> 62 == 0)
        // Consecutive identifiers differ in many bits of their second half, not by one.
        let low = (0..<1_000).map { _ in CallIdentifier.next() }.map { id in
            withUnsafeBytes(of: id.uuid) { UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        }
        let distances = zip(low, low.dropFirst()).map { ($0 ^ $1).nonzeroBitCount }
        #expect(distances.reduce(0, +) / distances.count >= 20, "\(distances.prefix(10))")
    }

    @Test("a context and an activity call get one each")
    func contexts() {
        let one = RequestContext(requiresSession: false)
        let two = RequestContext(requiresSession: false)
        #expect(one.id != two.id)
    }
}

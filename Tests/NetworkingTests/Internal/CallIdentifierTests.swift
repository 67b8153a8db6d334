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

    @Test("a context and an activity call get one each")
    func contexts() {
        let one = RequestContext(requiresSession: false)
        let two = RequestContext(requiresSession: false)
        #expect(one.id != two.id)
    }
}

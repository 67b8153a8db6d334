import Foundation
import Networking
import Testing

@testable import NetworkingCache

@Suite struct EntryCodecTests {
    @Test func roundTripsEveryField() throws {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "ETag": "\"v1\""]
        headers.add(name: "Set-Cookie", value: "a=1")
        headers.add(name: "Set-Cookie", value: "b=2")
        let entry = Entries.entry(for: Entries.key("books?page=1", user: "user:7"), body: Data([0, 1, 2, 255]), headers: headers)
        let decoded = try EntryCodec.decode(EntryCodec.encode(.response(entry)))
        #expect(decoded == .response(entry))
        guard case .response(let read) = decoded else { return }
        #expect(read.discriminator == "user:7")
        #expect(read.headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        #expect(read.vary.last?.value == nil)
        let variants = StoredRecord.variants(key: "k", fields: ["accept", "accept-language"])
        #expect(try EntryCodec.decode(EntryCodec.encode(variants)) == variants)
    }

    @Test func everyTruncationIsRefused() {
        let data = EntryCodec.encode(.response(Entries.entry(for: Entries.key("x"))))
        for length in 0..<data.count {
            #expect(throws: EntryCodec.Corruption.self) { try EntryCodec.decode(data.prefix(length)) }
        }
        var extended = data
        extended.append(0)
        #expect(throws: EntryCodec.Corruption.self) { try EntryCodec.decode(extended) }
    }

    @Test("Lengths that add up past Int.max are refused, not summed")
    func hugeLengthsAreRefused() {
        // Refused on 64 bits before too; the header's length alone passes `Int.max` on 32 bits.
        var header: [UInt8] = Array("NWCE".utf8) + [2, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]
        header += [UInt8](repeating: 0xFF, count: 8) + [UInt8](repeating: 0, count: 16)
        #expect(throws: EntryCodec.Corruption.self) { try EntryCodec.decode(Data(header)) }
    }

    @Test func everyFlippedBitIsRefused() {
        let data = EntryCodec.encode(.response(Entries.entry(for: Entries.key("x"))))
        for index in 0..<data.count {
            for bit in [0, 3, 7] {
                var damaged = data
                damaged[index] ^= UInt8(1 << bit)
                #expect(throws: EntryCodec.Corruption.self) { try EntryCodec.decode(damaged) }
            }
        }
    }

    @Test func foreignAndFutureFilesAreRefused() {
        // A later version, and the first (which kept keys and Vary values in clear).
        for version: UInt8 in [3, 1] {
            var other = EntryCodec.encode(.variants(key: "k", fields: []))
            other[4] = version
            #expect(throws: EntryCodec.Corruption.self) { try EntryCodec.decode(other) }
        }
        #expect(throws: EntryCodec.Corruption.self) { try EntryCodec.decode(Data("{\"not\": \"an entry\"}".utf8)) }
        #expect(throws: EntryCodec.Corruption.self) { try EntryCodec.decode(Data()) }
    }

    @Test func hostileLengthsWithAValidChecksumAreRefused() {
        // A record whose metadata claims a string far longer than the file, checksummed correctly.
        var bytes = Array("NWCE".utf8) + [1, 0, 0, 0]
        let metadata: [UInt8] = [0xff, 0xff, 0xff, 0x7f]
        bytes += [UInt8(metadata.count), 0, 0, 0] + [UInt8](repeating: 0, count: 8) + metadata
        var data = Data(bytes)
        let checksum = EntryCodec.crc(data)
        data.append(contentsOf: (0..<4).map { UInt8(truncatingIfNeeded: checksum >> UInt32($0 * 8)) })
        #expect(throws: EntryCodec.Corruption.self) { try EntryCodec.decode(data) }
    }

    @Test func randomBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 19, 24, 25, 100, 4096] {
            for _ in 0..<50 {
                var data = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
                if length >= 4 { data.replaceSubrange(0..<4, with: Array("NWCE".utf8)) }
                _ = try? EntryCodec.decode(data)
            }
        }
    }
}

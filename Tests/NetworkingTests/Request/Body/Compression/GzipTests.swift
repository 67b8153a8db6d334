import CZlib
import Foundation
import Testing

@testable import Networking

/// Serialized so the large allocations of one test (the bomb) do not show up in the resident memory
/// the flat-memory test measures.
@Suite("Gzip", .serialized)
struct GzipTests {
    /// Text-like bytes that compress the way real bodies do.
    private static func sample(_ count: Int, seed: UInt64) -> Data {
        var generator = SeededGenerator(seed: seed)
        let words = ["alpha ", "beta ", "gamma ", "delta ", "{\"id\": ", "42, ", "\"name\": \"x\"}\n"]
        var text = ""
        while text.utf8.count < count { text += words.randomElement(using: &generator) ?? "" }
        return Data(text.utf8.prefix(count))
    }

    @Test("Round trip at every level and size", arguments: [0, 1, 6, 9])
    func roundTrip(level: Int) throws {
        var generator = SeededGenerator(seed: UInt64(level))
        for data in [Data(), Data([42]), Self.sample(1000, seed: 1), Self.sample(300_000, seed: 2), Data(generator.bytes(100_000))] {
            let compressed = try GzipCompressor.compress(data, level: level)
            #expect(compressed.starts(with: [0x1F, 0x8B, 0x08]))
            #expect(try GzipDecompressor.decompress(compressed, maximumOutputSize: data.count) == data)
        }
    }

    @Test("Streaming in uneven pieces gives the same stream as compressing at once")
    func streamingMatchesOneShot() throws {
        let data = Self.sample(500_000, seed: 3)
        var compressor = try GzipCompressor()
        var streamed = Data()
        var offset = 0
        var generator = SeededGenerator(seed: 4)
        while offset < data.count {
            let count = min(Int.random(in: 0...70_000, using: &generator), data.count - offset)
            let piece = data.subdata(in: offset..<(offset + count))
            streamed.append(try piece.withUnsafeBytes { try compressor.compress($0) })
            offset += count
        }
        streamed.append(try compressor.finish())
        #expect(streamed == (try GzipCompressor.compress(data)))

        var decompressor = try GzipDecompressor(maximumOutputSize: data.count)
        var output = Data()
        for start in stride(from: 0, to: streamed.count, by: 777) {
            let piece = streamed.subdata(in: start..<min(start + 777, streamed.count))
            output.append(try piece.withUnsafeBytes { try decompressor.decompress($0) })
        }
        try decompressor.finish()
        #expect(output == data)
    }

    @Test("A flush gives out every byte compressed so far: the receiver decompresses it before the stream ends")
    func flushGivesOutEverything() throws {
        var compressor = try GzipCompressor()
        var decompressor = try GzipDecompressor(maximumOutputSize: 1024)
        for line in ["first line\n", "second line\n"] {
            // Alone, a short input stays in zlib until more comes.
            let held = try Data(line.utf8).withUnsafeBytes { try compressor.compress($0) }
            let flushed = held + (try compressor.flush())
            #expect(try flushed.withUnsafeBytes { try decompressor.decompress($0) } == Data(line.utf8))
        }
        // Nothing new: a flush gives no more input to decompress; the stream still ends validly.
        let empty = try compressor.flush()
        #expect(try empty.withUnsafeBytes { try decompressor.decompress($0) }.isEmpty)
        let end = try compressor.finish()
        #expect(try end.withUnsafeBytes { try decompressor.decompress($0) }.isEmpty)
        try decompressor.finish()
    }

    @Test("Empty input gives a valid gzip stream of nothing")
    func emptyInput() throws {
        var compressor = try GzipCompressor()
        let stream = try compressor.finish()
        #expect(stream.count == 20)
        #expect(stream.starts(with: [0x1F, 0x8B, 0x08]))
        #expect(try GzipDecompressor.decompress(stream, maximumOutputSize: 0) == Data())
    }

    @Test("Levels outside 0…9 are refused", arguments: [-1, 10, Int.max, Int.min])
    func invalidLevel(level: Int) {
        #expect(throws: CompressionError.invalidLevel(level)) { try GzipCompressor(level: level) }
    }

    @Test("The compressor refuses to be used after finish")
    func afterFinish() throws {
        var compressor = try GzipCompressor()
        _ = try compressor.finish()
        #expect(throws: CompressionError.alreadyFinished) { try compressor.finish() }
        #expect(throws: CompressionError.alreadyFinished) {
            try Data([1]).withUnsafeBytes { try compressor.compress($0) }
        }
    }

    @Test("Copies are independent values (copy-on-write of the zlib state)")
    func copyOnWrite() throws {
        var original = try GzipCompressor()
        // Output already returned (the gzip header at least) belongs to both copies' streams.
        let prefix = try Data("shared prefix ".utf8).withUnsafeBytes { try original.compress($0) }
        var copy = original
        var first = prefix + (try Data("first".utf8).withUnsafeBytes { try original.compress($0) })
        first.append(try original.finish())
        var second = prefix + (try Data("second".utf8).withUnsafeBytes { try copy.compress($0) })
        second.append(try copy.finish())
        #expect(try GzipDecompressor.decompress(first, maximumOutputSize: 100) == Data("shared prefix first".utf8))
        #expect(try GzipDecompressor.decompress(second, maximumOutputSize: 100) == Data("shared prefix second".utf8))
    }

    @Test("gzip -d and python's gzip.decompress read our output", arguments: [0, 1, 100_000])
    func readableByReferenceTools(size: Int) async throws {
        let data = Self.sample(size, seed: 5)
        let compressed = try GzipCompressor.compress(data)
        var checked = 0
        if let gzip = Subprocess.find("gzip") {
            let result = try await Subprocess.run(gzip, ["-dc"], input: compressed)
            #expect(result.status == 0)
            #expect(result.output == data)
            checked += 1
        }
        if let python = Subprocess.find("python3") {
            let script = "import gzip, sys; sys.stdout.buffer.write(gzip.decompress(sys.stdin.buffer.read()))"
            let result = try await Subprocess.run(python, ["-c", script], input: compressed)
            #expect(result.status == 0)
            #expect(result.output == data)
            checked += 1
        }
        try #require(checked > 0, "neither gzip nor python3 is installed")
    }

    @Test("The decompressor reads gzip's output, including concatenated members")
    func readsReferenceOutput() async throws {
        let gzip = try #require(Subprocess.find("gzip"), "gzip is not installed")
        let first = Self.sample(50_000, seed: 6)
        let second = Data("second member".utf8)
        let a = try await Subprocess.run(gzip, ["-c", "-9"], input: first).output
        let b = try await Subprocess.run(gzip, ["-c", "-1"], input: second).output
        #expect(try GzipDecompressor.decompress(a, maximumOutputSize: first.count) == first)
        #expect(try GzipDecompressor.decompress(a + b, maximumOutputSize: first.count + second.count) == first + second)
        #expect(try GzipDecompressor.decompress(a + (try GzipCompressor.compress(second)), maximumOutputSize: 1 << 20) == first + second)
    }

    @Test("A gzip bomb is refused at the output limit")
    func bomb() throws {
        var compressor = try GzipCompressor(level: 9)
        var bomb = Data()
        let zeros = Data(count: 1 << 20)
        for _ in 0..<16 { bomb.append(try zeros.withUnsafeBytes { try compressor.compress($0) }) }
        bomb.append(try compressor.finish())
        #expect(bomb.count < 30_000)
        #expect(throws: CompressionError.outputLimitExceeded(limit: 1_000_000)) {
            try GzipDecompressor.decompress(bomb, maximumOutputSize: 1_000_000)
        }
        #expect(try GzipDecompressor.decompress(bomb, maximumOutputSize: 16 << 20).count == 16 << 20)
    }

    @Test("Corrupt, truncated and non-gzip input are errors")
    func badInput() throws {
        let compressed = try GzipCompressor.compress(Self.sample(10_000, seed: 7))
        var flipped = compressed
        flipped[compressed.count / 2] ^= 0xFF
        #expect(throws: CompressionError.self) { try GzipDecompressor.decompress(flipped, maximumOutputSize: 1 << 20) }
        var badCRC = compressed
        badCRC[compressed.count - 6] ^= 0x01
        #expect {
            try GzipDecompressor.decompress(badCRC, maximumOutputSize: 1 << 20)
        } throws: { error in
            if case .corruptData? = error as? CompressionError { true } else { false }
        }
        #expect(throws: CompressionError.truncated) {
            try GzipDecompressor.decompress(compressed.prefix(compressed.count - 3), maximumOutputSize: 1 << 20)
        }
        #expect(throws: CompressionError.truncated) { try GzipDecompressor.decompress(Data(), maximumOutputSize: 10) }
        #expect(throws: CompressionError.self) {
            try GzipDecompressor.decompress(Data("not gzip at all".utf8), maximumOutputSize: 1 << 20)
        }
        #expect(throws: CompressionError.self) {
            try GzipDecompressor.decompress(compressed + Data("trailing".utf8), maximumOutputSize: 1 << 20)
        }
    }

    @Test("Compressing 64 MiB in 64 KiB chunks keeps memory flat")
    func flatMemory() throws {
        // Sixteen distinct 64 KiB chunks, cycled, so the input is large but costs 1 MiB to hold. Half
        // of each is random, so the compressed stream is over 32 MiB: a compressor that kept its
        // output, or a decompressor that kept its input, would exceed the limit below.
        var generator = SeededGenerator(seed: 100)
        let chunks = (0..<16).map { _ in Self.sample(32 * 1024, seed: generator.next()) + Data(generator.bytes(32 * 1024)) }
        let totalChunks = 1024  // × 64 KiB = 64 MiB
        var compressor = try GzipCompressor()
        var decompressor = try GzipDecompressor(maximumOutputSize: totalChunks * 64 * 1024)
        var inputCRC = crc32(0, nil, 0)
        var outputCRC = crc32(0, nil, 0)
        var compressedCount = 0
        var outputCount = 0
        let baseline = ProcessMemory.bytes()
        var peak = baseline ?? 0

        func consume(_ compressed: Data) throws {
            compressedCount += compressed.count
            let output = try compressed.withUnsafeBytes { try decompressor.decompress($0) }
            outputCount += output.count
            outputCRC = output.withUnsafeBytes { crc32(outputCRC, $0.bindMemory(to: Bytef.self).baseAddress, uInt($0.count)) }
        }
        for index in 0..<totalChunks {
            let chunk = chunks[index % chunks.count]
            inputCRC = chunk.withUnsafeBytes { crc32(inputCRC, $0.bindMemory(to: Bytef.self).baseAddress, uInt($0.count)) }
            try consume(try chunk.withUnsafeBytes { try compressor.compress($0) })
            if index % 100 == 0, let resident = ProcessMemory.bytes() { peak = max(peak, resident) }
        }
        try consume(try compressor.finish())
        try decompressor.finish()

        #expect(outputCount == totalChunks * 64 * 1024)
        #expect(outputCRC == inputCRC)
        #expect(compressedCount > 32 << 20 && compressedCount < outputCount)
        // Alone, resident memory grows by under 1 MB; the limit leaves room for the other suites,
        // which run in parallel in the same process, while still catching output that accumulates.
        if let baseline {
            #expect(peak - baseline < 32 << 20, "resident memory grew by \(peak - baseline) bytes")
        }
    }
}

import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// A full PNG decode inflates a clean file's image data whole with libdeflate and gives it to libpng in stored blocks
/// (CShims/png.c, `prepare_inflated`); any other file goes to zlib inside libpng. Both ways must give the same header,
/// pixels, warnings and errors: for every PNG of the corpora, and for PngSuite's files damaged where the image data
/// is.
@Suite(.enabled(if: Corpora.available, Corpora.skipComment))
struct PNGWholeInflateTests {
    struct Outcome: Equatable {
        var result: String
        var pixels: PixelSummary?
        var warnings: [String]
        /// The image data was inflated whole (only known for a decode that succeeded).
        var whole: Bool

        func with(whole: Bool) -> Outcome {
            var outcome = self
            outcome.whole = whole
            return outcome
        }
    }

    static func decode(_ bytes: [UInt8], whole: Bool, maxAllocation: Int = 32 << 20, maxChunkBytes: Int = 8 << 20)
        -> Outcome
    {
        let limits = LibPNG.Limits(
            maxPixels: 1 << 26, maxChunkBytes: maxChunkBytes, maxAllocation: maxAllocation, inflatesWhole: whole)
        let pixels = PixelAccumulator()
        var warnings: [String] = []
        let result = bytes.withUnsafeBufferPointer { body in
            LibPNG.read(body, limits: limits, pixels: pixels, warnings: &warnings)
        }
        switch result {
        case .success(var header):
            let inflatedWhole = header.inflatedWhole
            header.inflatedWhole = false
            return Outcome(result: "\(header)", pixels: pixels.summary(), warnings: warnings, whole: inflatedWhole)
        case .failure(let failure):
            return Outcome(result: "\(failure)", pixels: nil, warnings: warnings, whole: false)
        }
    }

    /// Decodes `bytes` both ways and records a difference; returns the outcome of the whole-inflate way.
    @discardableResult
    static func compare(_ bytes: [UInt8], _ label: String, maxAllocation: Int = 32 << 20, maxChunkBytes: Int = 8 << 20)
        -> Outcome
    {
        var zlib = decode(bytes, whole: false, maxAllocation: maxAllocation, maxChunkBytes: maxChunkBytes)
        #expect(!zlib.whole, "\(label): inflated whole with the option off")
        let whole = decode(bytes, whole: true, maxAllocation: maxAllocation, maxChunkBytes: maxChunkBytes)
        zlib.whole = whole.whole
        #expect(whole == zlib, "\(label)")
        return whole
    }

    static func pngs(in folder: String) throws -> [URL] {
        try Corpora.files(in: folder, suffix: ".png")
    }

    @Test func everyCorpusPNGGivesTheSameResultBothWays() throws {
        var files = 0
        var inflatedWhole = 0
        for folder in ["png/PngSuite", "png/pillow", "png/image-png-extra"] {
            for url in try Self.pngs(in: folder) {
                let outcome = Self.compare(try Corpora.bytes(url), "\(folder)/\(url.lastPathComponent)")
                files += 1
                if outcome.whole { inflatedWhole += 1 }
            }
        }
        #expect(files >= 220)
        // The fast way is the common one, not a path no file takes.
        #expect(inflatedWhole * 2 > files, "\(inflatedWhole) of \(files) inflated whole")
    }

    /// Every PngSuite file that is not one of its corrupted `x*` files is clean: each is inflated whole.
    @Test func pngSuiteGoodFilesAreInflatedWhole() throws {
        for url in try Self.pngs(in: "png/PngSuite") where !url.lastPathComponent.hasPrefix("x") {
            let outcome = Self.decode(try Corpora.bytes(url), whole: true)
            #expect(outcome.whole, "\(url.lastPathComponent): \(outcome.result)")
        }
    }

    /// Image data larger than the allocation limit is left to zlib, with the same result.
    @Test func imageDataOverTheAllocationLimitGoesToZlib() throws {
        // 400 × 400 RGB: 400 × 1,201 bytes of scanlines.
        let bytes = try Corpora.bytes("png/image-png-extra/F-exif-chunk-early.png")
        let under = Self.compare(bytes, "F-exif-chunk-early, limit 480,399", maxAllocation: 480_399)
        #expect(under.pixels != nil && !under.whole)
        let at = Self.compare(bytes, "F-exif-chunk-early, limit 480,400", maxAllocation: 480_400)
        #expect(at.pixels != nil && at.whole)
    }

    struct Chunk {
        var type: [UInt8]
        var data: [UInt8]
        var crc: UInt32? // nil: computed when written
    }

    static func chunks(_ bytes: [UInt8]) -> [Chunk] {
        var out: [Chunk] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard offset + 12 + length <= bytes.count else { break }
            let crc = bytes[offset + 8 + length..<offset + 12 + length].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            out.append(
                Chunk(
                    type: Array(bytes[offset + 4..<offset + 8]), data: Array(bytes[offset + 8..<offset + 8 + length]),
                    crc: crc))
            offset += 12 + length
        }
        return out
    }

    static func png(_ chunks: [Chunk]) -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func word(_ value: UInt32) {
            for shift in [24, 16, 8, 0] { out.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        for chunk in chunks {
            let typeAndData = chunk.type + chunk.data
            word(UInt32(chunk.data.count))
            out += typeAndData
            word(chunk.crc ?? typeAndData.withUnsafeBufferPointer { CRC32.checksum($0) })
        }
        return out
    }

    /// Damage that reaches the image data (CRCs made right again, so that it is not caught before), and damage that
    /// the CRCs catch: each gives the same result both ways. Some of these files still decode (libpng does not check
    /// the Adler-32 of the image data; a flipped byte may only change pixels); the rest are errors.
    @Test func damagedImageDataGivesTheSameResultBothWays() throws {
        let idat: [UInt8] = Array("IDAT".utf8)
        var cases = 0
        var stillDecoded = 0
        for url in try Self.pngs(in: "png/PngSuite") where !url.lastPathComponent.hasPrefix("x") {
            let original = Self.chunks(try Corpora.bytes(url))
            let dataChunks = original.indices.filter { original[$0].type == idat && !original[$0].data.isEmpty }
            guard let first = dataChunks.first, let last = dataChunks.last else { continue }
            var variants: [(String, [Chunk])] = []
            func variant(_ name: String, _ change: (inout [Chunk]) -> Void) {
                var chunks = original
                change(&chunks)
                variants.append((name, chunks))
            }
            for (name, index) in [("first", first), ("last", last)] {
                let count = original[index].data.count
                for position in Set([min(2, count - 1), count / 2, max(count - 5, 0), count - 1]) {
                    variant("\(name) IDAT byte \(position) flipped, CRC made right") {
                        $0[index].data[position] ^= 0x55
                        $0[index].crc = nil
                    }
                }
                variant("\(name) IDAT byte flipped, CRC left") { $0[index].data[count / 2] ^= 0x01 }
            }
            variant("the last IDAT without its last 4 bytes") {
                $0[last].data.removeLast(min(4, $0[last].data.count))
                $0[last].crc = nil
            }
            variant("3 bytes after the zlib stream") {
                $0[last].data += [1, 2, 3]
                $0[last].crc = nil
            }
            variant("the image data split into 1-byte IDAT chunks") {
                let data = dataChunks.flatMap { original[$0].data }
                let split = data.map { Chunk(type: idat, data: [$0], crc: nil) }
                $0.replaceSubrange(first...last, with: split)
            }
            variant("an empty IDAT chunk between the others") {
                $0.insert(Chunk(type: idat, data: [], crc: nil), at: last)
            }
            variant("an ancillary chunk with a bad CRC before the image data") {
                $0.insert(Chunk(type: Array("tIME".utf8), data: [7, 234, 12, 7, 20, 0, 0], crc: 0), at: first)
            }
            variant("IEND missing") { $0.removeAll { $0.type == Array("IEND".utf8) } }
            // zlib rejects a distance past the window the stream's header declares; libdeflate would not.
            if original[first].data.count >= 2 {
                func smallWindow(_ chunks: inout [Chunk]) {
                    let cmf: UInt8 = 0x08
                    var flg = chunks[first].data[1] & 0xC0
                    flg |= UInt8((31 - (Int(cmf) * 256 + Int(flg)) % 31) % 31)
                    chunks[first].data[0] = cmf
                    chunks[first].data[1] = flg
                    chunks[first].crc = nil
                }
                variant("the zlib header declaring a 256-byte window") { smallWindow(&$0) }
                // The header is then in the second IDAT chunk, not the first.
                variant("an empty IDAT chunk first, the zlib header declaring a 256-byte window") {
                    smallWindow(&$0)
                    $0.insert(Chunk(type: idat, data: [], crc: nil), at: first)
                }
            }
            for (name, chunks) in variants {
                let bytes = Self.png(chunks)
                let outcome = Self.compare(bytes, "\(url.lastPathComponent): \(name)")
                // The fuzz target's check finds what this test finds (none of these is the difference it allows).
                let same = Self.decode(bytes, whole: false).with(whole: outcome.whole) == outcome
                let checked = bytes.withUnsafeBufferPointer { PNGInflateCheck.difference($0, limits: Limits()) }
                #expect((checked == nil) == same, "\(url.lastPathComponent): \(name): \(checked ?? "no difference")")
                cases += 1
                if outcome.pixels != nil { stillDecoded += 1 }
            }
        }
        #expect(cases >= 1_600)
        // Both kinds are among them: files that still decode, and files that are errors.
        #expect(stillDecoded > 100 && stillDecoded < cases - 100, "\(stillDecoded) of \(cases) decoded")
    }

    /// libpng warns about an IDAT chunk longer than both the chunk limit and what the image's scanlines need with
    /// zlib's framing; image data that long is left to libpng, which gives the same pixels with its warning. Here the
    /// stream is padded with empty stored blocks (5 bytes each, no data) after its zlib header.
    @Test func paddedImageDataGoesToLibpngWithItsWarning() throws {
        let idat: [UInt8] = Array("IDAT".utf8)
        var warned = 0
        for name in ["basn0g08.png", "basn2c08.png", "basn6a16.png", "basi3p04.png"] {
            var chunks = Self.chunks(try Corpora.bytes("png/PngSuite/\(name)"))
            let indices = chunks.indices.filter { chunks[$0].type == idat }
            let stream = indices.flatMap { chunks[$0].data }
            let padded =
                Array(stream[..<2]) + Array(repeating: [0, 0, 0, 0xFF, 0xFF], count: 4_000).joined()
                + Array(stream[2...])
            chunks.replaceSubrange(indices.first!...indices.last!, with: [Chunk(type: idat, data: padded, crc: nil)])
            let bytes = Self.png(chunks)
            // Under the limit of 8 MB the padded file is clean, and is inflated whole.
            let clean = Self.compare(bytes, "\(name) padded, chunk limit 8 MB")
            #expect(clean.whole && clean.pixels != nil && clean.warnings.isEmpty, "\(name): \(clean)")
            let over = Self.compare(bytes, "\(name) padded, chunk limit 1,000 bytes", maxChunkBytes: 1_000)
            #expect(!over.whole && over.pixels == clean.pixels, "\(name): \(over)")
            if over.warnings.contains(where: { $0.contains("chunk data is too large") }) { warned += 1 }
        }
        #expect(warned == 4)
    }
}

/// ``PNGInflateCheck``, which the png fuzz target runs on every input: it lets through the one difference
/// docs/output.md names, which this test also shows is real.
struct PNGInflateCheckTests {
    /// Deflate's bits, least significant first; a Huffman code is sent from its most significant bit.
    struct Bits {
        var bytes: [UInt8] = []
        var count = 0
        mutating func put(_ value: Int, _ width: Int) {
            for i in 0..<width { bit(value >> i & 1) }
        }
        mutating func code(_ value: Int, _ width: Int) {
            for i in (0..<width).reversed() { bit(value >> i & 1) }
        }
        mutating func bit(_ b: Int) {
            if count % 8 == 0 { bytes.append(0) }
            bytes[bytes.count - 1] |= UInt8(b << (count % 8))
            count += 1
        }
    }

    /// A 1×1 gray PNG in one dynamic block that declares `codes` literal and length codes (deflate allows at most
    /// 286): the first 512 − `codes` symbols take 8 bits and the rest 9, a complete code; two distance codes of 1
    /// bit. It holds the filter byte 0 and the pixel 0x80.
    static func png(declaring codes: Int) -> [UInt8] {
        let short = 512 - codes
        var bits = Bits()
        bits.put(1, 1) // the last block
        bits.put(2, 2) // dynamic Huffman codes
        bits.put(codes - 257, 5)
        bits.put(2 - 1, 5)
        bits.put(19 - 4, 4)
        // The code-length code: 8 in 1 bit (0), 1 and 9 in 2 bits (10, 11), in deflate's order of its 19 symbols.
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        let lengthOf: [Int: Int] = [8: 1, 1: 2, 9: 2]
        for symbol in order { bits.put(lengthOf[symbol] ?? 0, 3) }
        let codeOf: [Int: (Int, Int)] = [8: (0, 1), 1: (2, 2), 9: (3, 2)]
        for length in Array(repeating: 8, count: short) + Array(repeating: 9, count: codes - short) + [1, 1] {
            bits.code(codeOf[length]!.0, codeOf[length]!.1)
        }
        bits.code(0, 8) // literal 0
        bits.code(0x80, 8) // literal 0x80
        bits.code(short << 1 + (256 - short), 9) // end of block
        let adler: [UInt8] = [0x00, 0x82, 0x00, 0x81]
        let stream: [UInt8] = [0x78, 0x01] + bits.bytes + adler
        return PNGWholeInflateTests.png([
            .init(type: Array("IHDR".utf8), data: [0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0], crc: nil),
            .init(type: Array("IDAT".utf8), data: stream, crc: nil),
            .init(type: Array("IEND".utf8), data: [], crc: nil),
        ])
    }

    @Test func aBlockDeclaringTooManyCodesIsTheDifferenceAllowed() throws {
        let bytes = Self.png(declaring: 288)
        let whole = PNGWholeInflateTests.decode(bytes, whole: true)
        #expect(whole.whole && whole.pixels?.meanColor == [128, 128, 128, 255], "\(whole)")
        let zlib = PNGWholeInflateTests.decode(bytes, whole: false)
        #expect(zlib.pixels == nil && zlib.result.contains("too many length or distance symbols"), "\(zlib)")
        #expect(bytes.withUnsafeBufferPointer { PNGInflateCheck.difference($0, limits: Limits()) } == nil)
    }

    /// The same block declaring the 286 codes deflate allows decodes alike both ways.
    @Test func theSameBlockWithinDeflatesCodesDecodesAlike() throws {
        let bytes = Self.png(declaring: 286)
        let whole = PNGWholeInflateTests.decode(bytes, whole: true)
        #expect(whole.whole && whole.pixels?.meanColor == [128, 128, 128, 255], "\(whole)")
        #expect(PNGWholeInflateTests.decode(bytes, whole: false) == whole.with(whole: false))
        #expect(bytes.withUnsafeBufferPointer { PNGInflateCheck.difference($0, limits: Limits()) } == nil)
    }
}

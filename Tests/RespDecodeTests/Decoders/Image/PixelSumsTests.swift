import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The channel sums behind `--inflate`'s summary (PixelSummary.swift): the AVX2 path of Sources/CShims/pixelsums.c,
/// the Swift vector loop and the palette-word sums, each against a plain byte-by-byte sum, at every length around
/// their block sizes and with every byte 255 (where a 16-bit lane or field would overflow first).
@Suite("Pixel sums") struct PixelSumsTests {
    /// Plain sums of pixels of `channels` bytes, as RGBA8.
    static func naive(_ bytes: [UInt8], channels: Int) -> SIMD4<UInt64> {
        var sums = SIMD4<UInt64>.zero
        for start in stride(from: 0, to: bytes.count - channels + 1, by: channels) {
            switch channels {
            case 1: sums &+= SIMD4(UInt64(bytes[start]), UInt64(bytes[start]), UInt64(bytes[start]), 255)
            case 2:
                let gray = UInt64(bytes[start])
                sums &+= SIMD4(gray, gray, gray, UInt64(bytes[start + 1]))
            default:
                sums &+= SIMD4((0..<4).map { UInt64(bytes[start + $0]) })
            }
        }
        return sums
    }

    /// Pixel counts around the vector code's 8-pixel steps and 256-step blocks, and a few large ones.
    static let counts: [Int] =
        Array(0...80) + [255, 256, 257, 511, 512, 513, 2047, 2048, 2049, 2055, 2056, 4096 + 7, 65_536 + 3, 300_001]

    @Test(arguments: [1, 2, 4]) func rgbaSumsMatchAPlainSum(channels: Int) {
        var generator = SplitMix64(seed: 2205 + UInt64(channels))
        for count in Self.counts {
            for fill in [nil, UInt8(255)] as [UInt8?] {
                let bytes = (0..<(count * channels)).map { _ in fill ?? UInt8(truncatingIfNeeded: generator.next()) }
                let expected = Self.naive(bytes, channels: channels)
                let (vector, plain) = bytes.withUnsafeBufferPointer { buffer in
                    let base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
                    return (
                        PixelAccumulator.rgbaSums(base, count, channels: channels, vector: true),
                        PixelAccumulator.rgbaSums(base, count, channels: channels, vector: false)
                    )
                }
                #expect(vector == expected, "\(channels) channels, \(count) pixels, fill \(String(describing: fill))")
                #expect(plain == expected, "\(channels) channels, \(count) pixels, fill \(String(describing: fill))")
            }
        }
    }

    /// Over unaligned starts too: the vector code loads 32 bytes from any address.
    @Test func rgbaSumsFromEveryOffset() {
        var generator = SplitMix64(seed: 2206)
        let bytes = (0..<(4 * 600 + 64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        bytes.withUnsafeBufferPointer { buffer in
            for offset in 0..<33 {
                let slice = Array(buffer[offset..<(offset + 4 * 600)])
                let sums = PixelAccumulator.rgbaSums(buffer.baseAddress! + offset, 600, channels: 4)
                #expect(sums == Self.naive(slice, channels: 4), "offset \(offset)")
            }
        }
    }

    @Test func paletteSumsMatchAPlainLookup() {
        var generator = SplitMix64(seed: 2207)
        for opaqueWhite in [false, true] {
            let palette = (0..<1024).map { _ in opaqueWhite ? 255 : UInt8(truncatingIfNeeded: generator.next()) }
            let words = (0..<256).map { index in
                (0..<4).reduce(UInt64(0)) { $0 | UInt64(palette[4 * index + $1]) << (16 * UInt64($1)) }
            }
            for count in Self.counts {
                let indices = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
                var expected = SIMD4<UInt64>.zero
                for index in indices { expected &+= SIMD4((0..<4).map { UInt64(palette[4 * Int(index) + $0]) }) }
                let sums = indices.withUnsafeBufferPointer { buffer in
                    words.withUnsafeBufferPointer {
                        PixelAccumulator.paletteSums(buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!, count, $0)
                    }
                }
                #expect(sums == expected, "\(count) indices, opaque white \(opaqueWhite)")
            }
        }
    }

    /// Whole rows of palette indices, which go to the AVX-512 VBMI code when the CPU has it (PixelAccumulator's
    /// `paletteRowSums`): the summary is the Swift loop's, and the mean colour is the plain one, at widths around the
    /// 64-index blocks and the nine cell columns, with and without transparency in the palette.
    @Test func paletteRowsGiveTheSameSummaryEitherWay() {
        var generator = SplitMix64(seed: 2208)
        let widths = Array(1...20) + [63, 64, 65, 127, 128, 129, 575, 576, 577, 1024, 1031]
        for opaque in [true, false] {
            let palette = (0..<1024).map { at in
                opaque && at % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: generator.next())
            }
            for width in widths {
                let height = 1 + Int(generator.next() % 40)
                let rows = (0..<height).map { _ in (0..<width).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
                }
                var expected = SIMD4<UInt64>.zero
                for index in rows.joined() { expected &+= SIMD4((0..<4).map { UInt64(palette[4 * Int(index) + $0]) }) }
                let n = UInt64(width * height)
                let mean = (0..<4).map { Int((expected[$0] &* 2 &+ n) / (2 * n)) }
                let summaries = [true, false].map { vector in
                    let pixels = PixelAccumulator(vector: vector)
                    palette.withUnsafeBufferPointer { palette in
                        for (y, row) in rows.enumerated() {
                            row.withUnsafeBufferPointer {
                                pixels.addRow(
                                    $0.baseAddress!, count: width, channels: 0, y: y, x0: 0, step: 1, width: width,
                                    height: height, palette: palette.baseAddress)
                            }
                        }
                    }
                    return pixels.summary()
                }
                #expect(summaries[0] == summaries[1], "\(width) × \(height), opaque \(opaque)")
                #expect(summaries[0].meanColor == mean, "\(width) × \(height), opaque \(opaque)")
            }
        }
    }

    /// Whole rows of four-byte pixels, whose nine cell columns go to the C code in one call when the CPU has AVX2
    /// (PixelAccumulator's `rgbaRowSums`): the summary is the Swift loop's, and the mean colour is the plain one, at
    /// widths around the 32-byte blocks and the nine cell columns, and one row long enough to need the 16-bit lanes
    /// emptied (a column of over 256 blocks of 32 bytes) with every byte 255.
    @Test func rgbaRowsGiveTheSameSummaryEitherWay() {
        var generator = SplitMix64(seed: 2211)
        let widths = Array(1...20) + [63, 64, 65, 127, 128, 129, 575, 576, 577, 1024, 1031]
        var images: [(width: Int, rows: [[UInt8]])] = widths.map { width in
            let height = 1 + Int(generator.next() % 40)
            let rows = (0..<height).map { _ in
                (0..<4 * width).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            }
            return (width, rows)
        }
        images.append((9 * 2100, [[UInt8](repeating: 255, count: 4 * 9 * 2100)]))
        for (width, rows) in images {
            let height = rows.count
            var expected = SIMD4<UInt64>.zero
            for row in rows {
                for (at, byte) in row.enumerated() { expected[at % 4] &+= UInt64(byte) }
            }
            let n = UInt64(width * height)
            let mean = (0..<4).map { Int((expected[$0] &* 2 &+ n) / (2 * n)) }
            let summaries = [true, false].map { vector in
                let pixels = PixelAccumulator(vector: vector)
                for (y, row) in rows.enumerated() {
                    row.withUnsafeBufferPointer {
                        pixels.addRow(
                            $0.baseAddress!, count: width, channels: 4, y: y, x0: 0, step: 1, width: width,
                            height: height)
                    }
                }
                return pixels.summary()
            }
            #expect(summaries[0] == summaries[1], "\(width) × \(height)")
            #expect(summaries[0].meanColor == mean, "\(width) × \(height)")
        }
    }
}

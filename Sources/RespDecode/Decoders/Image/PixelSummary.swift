internal import CShims

/// What `--inflate` reports about a fully decoded image (docs/output.md#image, `decoded`): the RGBA8 byte count, the
/// mean
/// colour and a 64-bit difference hash.
///
/// Both statistics are defined on the image's RGBA8 pixels (8 bits per channel, no gamma or colour management
/// applied, 16-bit samples reduced to their high byte, transparency chunks turned into alpha):
/// - `meanColor`: per channel, the sum over all pixels divided by the pixel count, rounded half up.
/// - `dhash`: the image is cut into 9 columns × 8 rows of cells, column `j` holding pixels
///   `x` in `floor(j·w/9) ..< max(floor((j+1)·w/9), floor(j·w/9)+1)` and row `i` the rows `y` in the same way with
///   8 and `h` (so a cell is never empty, and cells of images under 9×8 pixels overlap). A cell's brightness is the
///   mean of `299·R + 587·G + 114·B` over its pixels (alpha ignored). Bit `8·i + j`, counted from the most
///   significant bit, is 1 when cell `(i, j+1)` is brighter than cell `(i, j)`. Written as 16 lower-case hex digits.
///   Brightness is compared exactly (sums cross-multiplied by counts in 128 bits), so there are no rounding ties.
struct PixelSummary: Sendable, Equatable {
    /// `width × height × 4`.
    var bytes: Int
    /// Mean red, green, blue and alpha, 0–255 each.
    var meanColor: [Int]
    var dhash: UInt64

    func write(to out: OutputBuffer) {
        out.append(ascii: "{\"bytes\":")
        out.append(decimal: bytes)
        out.append(ascii: ",\"meanColor\":[")
        for (i, c) in meanColor.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(decimal: c)
        }
        out.append(ascii: "],\"dhash\":\"")
        out.append(hex64: dhash)
        out.append(ascii: "\"}")
    }
}

extension OutputBuffer {
    /// 16 lower-case hex digits.
    func append(hex64 value: UInt64) {
        let digits: StaticString = "0123456789abcdef"
        reserve(16)
        let p = end
        for i in 0..<16 {
            p[i] = digits.utf8Start[Int((value >> UInt64(60 - 4 * i)) & 0xF)]
        }
        commit(16)
    }
}

/// Takes an image's decoded rows as a decoder produces them — whole rows or the rows of an Adam7 pass, as gray,
/// gray + alpha, RGB, RGBA or palette indices — and keeps only the sums ``PixelSummary`` needs, as if every pixel
/// had been written out as RGBA8 (no alpha counts as 255, gray as R = G = B, an index as its palette entry). A full
/// decode so needs one row of memory, not the whole image.
final class PixelAccumulator {
    /// The image's size, known from the first row on.
    @exclusivity(unchecked) private(set) var width = 0
    @exclusivity(unchecked) private(set) var height = 0
    /// Cell bounds: column `j` is `colLow[j] ..< colHigh[j]`, row `i` is `rowLow[i] ..< rowHigh[i]`.
    @exclusivity(unchecked) private var colLow = [Int](repeating: 0, count: 9)
    @exclusivity(unchecked) private var colHigh = [Int](repeating: 0, count: 9)
    @exclusivity(unchecked) private var rowLow = [Int](repeating: 0, count: 8)
    @exclusivity(unchecked) private var rowHigh = [Int](repeating: 0, count: 8)
    /// Whether every pixel is in exactly one cell (images at least 9 × 8 pixels).
    @exclusivity(unchecked) private var cellsPartition = false
    /// Per cell (`8·9`), the R, G, B (and A) sums and the pixel count.
    @exclusivity(unchecked) private var cellSums = [SIMD4<UInt64>](repeating: .zero, count: 72)
    @exclusivity(unchecked) private var cellCounts = [UInt64](repeating: 0, count: 72)
    /// R, G, B, A summed over every pixel.
    @exclusivity(unchecked) private var totals = SIMD4<UInt64>.zero
    /// Palette images: each index's RGBA entry as four 16-bit fields of one word (R lowest), made from the first
    /// row's palette (``paletteSums(_:_:_:)``).
    @exclusivity(unchecked) private var paletteWords: [UInt64] = []
    /// Palette images on CPUs with AVX-512 VBMI (``paletteRowSums(_:count:)``): the palette as four planes of 256
    /// bytes (R, G, B, A), whether every alpha is 255; and per row the nine cell columns' bounds and sums (also for
    /// four-byte pixels, ``rgbaRowSums(_:count:)``).
    @exclusivity(unchecked) private var palettePlanes: [UInt8] = []
    @exclusivity(unchecked) private var paletteOpaque = false
    @exclusivity(unchecked) private var columnBounds = [Int](repeating: 0, count: 18)
    @exclusivity(unchecked) private var columnSums = [UInt64](repeating: 0, count: 36)
    /// Whether whole palette rows go to the C code: the CPU has AVX-512 VBMI, and the caller did not say no (the
    /// tests compare both paths). Asked once, so a CPU without it builds no planes and makes no call per row.
    private let paletteVector: Bool
    /// Whether four-byte pixels are summed by the C code, a whole row's cell columns in one call
    /// (``rgbaRowSums(_:count:)``), other runs one by one: the CPU has AVX2, and the caller did not say no (the tests
    /// compare it with the Swift loop).
    private let rgbaVector: Bool
    /// Pixels taken so far: a complete decode gives exactly `width × height`.
    @exclusivity(unchecked) private(set) var pixelsSeen = 0

    init(vector: Bool = true) {
        paletteVector = vector && respdecode_cpu_has_avx512vbmi() != 0
        rgbaVector = vector && respdecode_cpu_has_avx2() != 0
    }

    private func start(width: Int, height: Int) {
        self.width = width
        self.height = height
        for j in 0..<9 {
            colLow[j] = j * width / 9
            colHigh[j] = max((j + 1) * width / 9, colLow[j] + 1)
        }
        for i in 0..<8 {
            rowLow[i] = i * height / 8
            rowHigh[i] = max((i + 1) * height / 8, rowLow[i] + 1)
        }
        cellsPartition = width >= 9 && height >= 8
    }

    /// Adds one row of `count` pixels of `channels` bytes (1, 2 or 4; 0: palette indices; the decoders give RGB
    /// with a filler byte) of image row `y` of a
    /// `width × height` image; pixel `k` is at `x = x0 + k·step` (`x0 = 0, step = 1` for a whole row; an Adam7 pass
    /// row has its pass's start and step). Indices come with `palette`, 256 RGBA entries (the same for every row;
    /// without it an index counts as opaque black).
    func addRow(
        _ pixels: UnsafePointer<UInt8>, count: Int, channels: Int, y: Int, x0: Int, step: Int, width: Int, height: Int,
        palette: UnsafePointer<UInt8>? = nil
    ) {
        if self.width == 0 { start(width: width, height: height) }
        guard count > 0, y >= 0, y < self.height, step > 0, width == self.width, height == self.height,
            channels == 0 || channels == 1 || channels == 2 || channels == 4
        else { return }
        pixelsSeen &+= count
        if channels == 0 && paletteWords.isEmpty {
            paletteWords = (0..<256).map { index in
                guard let palette else { return 255 << 48 }
                let entry = palette + 4 * index
                return UInt64(entry[0]) | UInt64(entry[1]) << 16 | UInt64(entry[2]) << 32 | UInt64(entry[3]) << 48
            }
            if paletteVector {
                palettePlanes = (0..<1024).map { at in
                    UInt8(truncatingIfNeeded: paletteWords[at % 256] >> (16 * (at / 256)))
                }
                paletteOpaque = palettePlanes[768...].allSatisfy { $0 == 255 }
            }
        }
        // The cell rows this image row is in: one, unless the image is under 8 rows high.
        var firstCellRow = 8
        var lastCellRow = 0
        for i in 0..<8 where rowLow[i] <= y && y < rowHigh[i] {
            firstCellRow = min(firstCellRow, i)
            lastCellRow = i
        }
        var rowTotal = SIMD4<UInt64>.zero
        // A whole row (the common case) needs no division to find its pixels in a cell column.
        let wholeRow = x0 == 0 && step == 1
        // A whole row of palette indices or four-byte pixels: the nine cell columns' sums at once, when the CPU can.
        let columnsSummed =
            wholeRow
            && (channels == 0
                ? paletteVector && paletteRowSums(pixels, count: count)
                : channels == 4 && rgbaVector && rgbaRowSums(pixels, count: count))
        paletteWords.withUnsafeBufferPointer { words in
            /// RGBA sums of the row's pixels `first ..< first + n`.
            func sums(_ first: Int, _ n: Int) -> SIMD4<UInt64> {
                channels == 0
                    ? Self.paletteSums(pixels + first, n, words)
                    : Self.rgbaSums(pixels + channels * first, n, channels: channels, vector: rgbaVector)
            }
            cellSums.withUnsafeMutableBufferPointer { cellSums in
                cellCounts.withUnsafeMutableBufferPointer { cellCounts in
                    for j in 0..<9 {
                        // Pixels k with colLow ≤ x0 + k·step < colHigh, clipped to the row.
                        let first =
                            wholeRow ? min(colLow[j], count) : min(max(Self.ceilDiv(colLow[j] - x0, step), 0), count)
                        let last =
                            wholeRow
                            ? min(colHigh[j], count) : min(max(Self.ceilDiv(colHigh[j] - x0, step), 0), count)
                        guard last > first else { continue }
                        let cell =
                            columnsSummed
                            ? SIMD4(
                                columnSums[4 * j], columnSums[4 * j + 1], columnSums[4 * j + 2], columnSums[4 * j + 3])
                            : sums(first, last - first)
                        rowTotal &+= cell
                        var i = firstCellRow
                        while i <= lastCellRow {
                            cellSums[i * 9 + j] &+= cell
                            cellCounts[i * 9 + j] &+= UInt64(last - first)
                            i += 1
                        }
                    }
                }
            }
            // Cells of images under 9 pixels wide overlap: the row's total is then taken once, directly.
            totals &+= width >= 9 ? rowTotal : sums(0, count)
        }
    }

    /// The sums of a whole row of palette indices over each cell column, into ``columnSums`` (the C code of
    /// Sources/CShims/pixelsums.c, when the CPU has AVX-512 VBMI).
    /// - Returns: false, with nothing done, when the CPU has no such path.
    private func paletteRowSums(_ pixels: UnsafePointer<UInt8>, count: Int) -> Bool {
        setColumnBounds(count: count)
        return palettePlanes.withUnsafeBufferPointer { planes in
            columnBounds.withUnsafeBufferPointer { bounds in
                columnSums.withUnsafeMutableBufferPointer { sums in
                    respdecode_palette_sums(
                        pixels, bounds.baseAddress, 9, planes.baseAddress, paletteOpaque ? 1 : 0, sums.baseAddress)
                        == 0
                }
            }
        }
    }

    /// The sums of a whole row of four-byte pixels over each cell column, into ``columnSums``, in one call to the C
    /// code of Sources/CShims/pixelsums.c (AVX2).
    /// - Returns: false, with nothing done, when the CPU has no such path.
    private func rgbaRowSums(_ pixels: UnsafePointer<UInt8>, count: Int) -> Bool {
        setColumnBounds(count: count)
        return columnBounds.withUnsafeBufferPointer { bounds in
            columnSums.withUnsafeMutableBufferPointer { sums in
                respdecode_rgba_row_sums(pixels, bounds.baseAddress, 9, sums.baseAddress) == 0
            }
        }
    }

    /// ``columnBounds``: each cell column's pixels in a whole row of `count`.
    private func setColumnBounds(count: Int) {
        for j in 0..<9 {
            columnBounds[2 * j] = min(colLow[j], count)
            columnBounds[2 * j + 1] = min(colHigh[j], count)
        }
    }

    /// The summary, once every pixel has been added.
    func summary() -> PixelSummary {
        let n = UInt64(max(width * height, 1))
        let mean = (0..<4).map { Int((totals[$0] &* 2 &+ n) / (2 * n)) }
        var hash: UInt64 = 0
        for i in 0..<8 {
            for j in 0..<8 {
                hash <<= 1
                if brighter(i * 9 + j + 1, than: i * 9 + j) { hash |= 1 }
            }
        }
        return PixelSummary(bytes: width * height * 4, meanColor: mean, dhash: hash)
    }

    /// Whether cell `a`'s mean brightness is above cell `b`'s, compared exactly.
    private func brighter(_ a: Int, than b: Int) -> Bool {
        func luma(_ s: SIMD4<UInt64>) -> UInt64 { 299 &* s[0] &+ 587 &* s[1] &+ 114 &* s[2] }
        let lhs = luma(cellSums[a]).multipliedFullWidth(by: cellCounts[b])
        let rhs = luma(cellSums[b]).multipliedFullWidth(by: cellCounts[a])
        return lhs.high > rhs.high || (lhs.high == rhs.high && lhs.low > rhs.low)
    }

    @inline(__always) private static func ceilDiv(_ a: Int, _ b: Int) -> Int {
        a >= 0 ? (a + b - 1) / b : -((-a) / b)
    }

    /// R, G, B and A summed over `n` palette indices, each looked up in `words` (``paletteWords``) and added as one
    /// word: a field holds at most 255 × 256 within a run of 256 indices, so the fields are split out after each.
    /// (Counting indices per cell and weighting the palette at the end took a memory increment per pixel and a
    /// 72 × 256 table cleared per image: 289 M instructions for bench/small's 60 palette PNGs where this takes 205 M.)
    @inline(__always) static func paletteSums(
        _ p: UnsafePointer<UInt8>, _ n: Int, _ words: UnsafeBufferPointer<UInt64>
    ) -> SIMD4<UInt64> {
        guard let table = words.baseAddress, words.count == 256 else { return .zero }
        var result = SIMD4<UInt64>.zero
        var i = 0
        while i < n {
            let end = min(n, i &+ 256)
            // Four sums, so that each addition does not wait on the one before.
            var s0: UInt64 = 0
            var s1: UInt64 = 0
            var s2: UInt64 = 0
            var s3: UInt64 = 0
            while end &- i >= 4 {
                s0 &+= table[Int(p[i])]
                s1 &+= table[Int(p[i &+ 1])]
                s2 &+= table[Int(p[i &+ 2])]
                s3 &+= table[Int(p[i &+ 3])]
                i &+= 4
            }
            while i < end {
                s0 &+= table[Int(p[i])]
                i &+= 1
            }
            let s = s0 &+ s1 &+ s2 &+ s3
            result &+= SIMD4(s & 0xFFFF, (s >> 16) & 0xFFFF, (s >> 32) & 0xFFFF, s >> 48)
        }
        return result
    }

    /// R, G, B and A summed over `n` pixels of `channels` bytes (1, 2 or 4), as RGBA8: gray counts for R, G and B,
    /// missing alpha as 255. (RGB rows come with a filler byte: libpng and libjpeg-turbo add it as they write.) Four-
    /// byte pixels go to the AVX2 code of Sources/CShims/pixelsums.c when the CPU has it (`vector`; false for the
    /// tests).
    @inline(__always) static func rgbaSums(
        _ p: UnsafePointer<UInt8>, _ n: Int, channels: Int, vector: Bool = true
    ) -> SIMD4<UInt64> {
        switch channels {
        case 1:
            let s = byteSums(p, n, period: 1)
            return SIMD4(s[0], s[0], s[0], 255 &* UInt64(n))
        case 2:
            let s = byteSums(p, 2 * n, period: 2)
            return SIMD4(s[0], s[0], s[0], s[1])
        default:
            if vector {
                var sums = SIMD4<UInt64>.zero
                let done = withUnsafeMutableBytes(of: &sums) {
                    respdecode_rgba_sums(p, n, $0.baseAddress!.assumingMemoryBound(to: UInt64.self))
                }
                if done == 0 { return sums }
            }
            return byteSums(p, 4 * n, period: 4)
        }
    }

    /// The bytes at positions `≡ c (mod period)` summed, for `c` in `0 ..< period` (`period` 1, 2 or 4). Bytes are
    /// read 32 at a time as sixteen 16-bit lanes, split into even and odd bytes by mask and shift, and added in
    /// 16-bit lanes for up to 256 steps (256 × 255 fits); seen as eight 32-bit lanes, the low and high halves then
    /// hold positions 4m and 4m + 2 (even bytes) or 4m + 1 and 4m + 3 (odd bytes).
    @inline(__always) static func byteSums(_ p: UnsafePointer<UInt8>, _ count: Int, period: Int) -> SIMD4<UInt64> {
        var result = SIMD4<UInt64>.zero
        let raw = UnsafeRawPointer(p)
        let lowByte = SIMD16<UInt16>(repeating: 0x00FF)
        let lowHalf = SIMD8<UInt32>(repeating: 0xFFFF)
        var i = 0
        while count &- i >= 32 {
            let blockEnd = i &+ min((count &- i) / 32, 256) &* 32
            var even = SIMD16<UInt16>.zero
            var odd = SIMD16<UInt16>.zero
            var even2 = SIMD16<UInt16>.zero
            var odd2 = SIMD16<UInt16>.zero
            // Two independent pairs of accumulators per step, so the additions do not wait on each other.
            while blockEnd &- i >= 64 {
                let v = raw.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt16>.self)
                let w = raw.loadUnaligned(fromByteOffset: i &+ 32, as: SIMD16<UInt16>.self)
                even &+= v & lowByte
                odd &+= v &>> SIMD16<UInt16>(repeating: 8)
                even2 &+= w & lowByte
                odd2 &+= w &>> SIMD16<UInt16>(repeating: 8)
                i &+= 64
            }
            if i < blockEnd {
                let v = raw.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt16>.self)
                even &+= v & lowByte
                odd &+= v &>> SIMD16<UInt16>(repeating: 8)
                i &+= 32
            }
            // Each pair saw at most 128 steps: adding them keeps within 16 bits.
            even &+= even2
            odd &+= odd2
            let e = unsafeBitCast(even, to: SIMD8<UInt32>.self)
            let o = unsafeBitCast(odd, to: SIMD8<UInt32>.self)
            let p0 = UInt64((e & lowHalf).wrappedSum())
            let p2 = UInt64((e &>> SIMD8<UInt32>(repeating: 16)).wrappedSum())
            let p1 = UInt64((o & lowHalf).wrappedSum())
            let p3 = UInt64((o &>> SIMD8<UInt32>(repeating: 16)).wrappedSum())
            switch period {
            case 1: result[0] &+= p0 &+ p1 &+ p2 &+ p3
            case 2: result &+= SIMD4(p0 &+ p2, p1 &+ p3, 0, 0)
            default: result &+= SIMD4(p0, p1, p2, p3)
            }
        }
        // The last pixels (under 32 bytes), in scalars: a SIMD4 element updated in a loop goes through memory.
        var t0: UInt64 = 0
        var t1: UInt64 = 0
        var t2: UInt64 = 0
        var t3: UInt64 = 0
        switch period {
        case 1:
            while i < count {
                t0 &+= UInt64(p[i])
                i += 1
            }
        case 2:
            while i + 2 <= count {
                t0 &+= UInt64(p[i])
                t1 &+= UInt64(p[i + 1])
                i += 2
            }
        default:
            while i + 4 <= count {
                t0 &+= UInt64(p[i])
                t1 &+= UInt64(p[i + 1])
                t2 &+= UInt64(p[i + 2])
                t3 &+= UInt64(p[i + 3])
                i += 4
            }
        }
        return result &+ SIMD4(t0, t1, t2, t3)
    }
}

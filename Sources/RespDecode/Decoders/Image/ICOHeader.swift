/// Reads the directory of a Windows icon (ICO) or cursor (CUR) file: one entry per stored image.
///
/// Every entry's data range is checked against the body; at most ``ImageInfo/maxEntries`` entries are reported.
/// The work is linear in the number of entries, which the directory check bounds by the body size.
enum ICOHeader {
    /// Whether the body starts with an icon (`00 00 01 00`) or cursor (`00 00 02 00`) header.
    static func matches(_ r: ByteReader) -> Bool {
        r.u16le(0) == 0 && (r.u16le(2) == 1 || r.u16le(2) == 2)
    }

    /// The metadata, or an `invalidImage` RecordError (message says what is wrong, location = byte offset) when the
    /// header is broken or truncated. Non-fatal oddities go to `warnings` (short English sentences, lower-case start).
    ///
    /// Reports format `ico` (icons and cursors alike), `entries` (width and height, 0 meaning 256, the bit depth and
    /// whether the image is stored as `png` or `bmp`; a PNG entry's size comes from its IHDR) and, as the top-level
    /// size, the largest entry by area (the first of equal ones). The bit depth is the entry's bit count field when
    /// non-zero; for cursors (whose field is the hotspot) and zero fields it is the embedded image's bits per pixel.
    static func read(_ r: ByteReader, warnings: inout [String]) throws(RecordError) -> ImageInfo {
        guard let reserved = r.u16le(0), let type = r.u16le(2), let count = r.u16le(4) else {
            throw invalid("ico header is truncated", at: r.count)
        }
        guard reserved == 0 else { throw invalid("ico reserved field is \(reserved), not 0", at: 0) }
        guard type == 1 || type == 2 else {
            throw invalid("ico type \(type) is neither icon (1) nor cursor (2)", at: 2)
        }
        guard count > 0 else { throw invalid("ico has no entries", at: 4) }
        let directoryEnd = 6 + 16 * count
        guard r.has(0, directoryEnd) else {
            throw invalid(
                "ico directory of \(count) entries needs \(directoryEnd) bytes but the body has \(r.count)",
                at: r.count)
        }

        var entries: [ImageInfo.Entry] = []
        entries.reserveCapacity(min(count, ImageInfo.maxEntries))
        var best = (width: 0, height: 0, area: -1)
        for i in 0..<count {
            let e = 6 + 16 * i
            // The directory is inside the body, so these reads succeed.
            let dirWidth = r.u8(e) ?? 0
            let dirHeight = r.u8(e + 1) ?? 0
            let bitField = r.u16le(e + 6) ?? 0
            let size = r.u32le(e + 8) ?? 0
            let dataOffset = r.u32le(e + 12) ?? 0
            guard r.has(dataOffset, size) else {
                throw invalid(
                    "ico entry \(i + 1) data (\(size) bytes at \(dataOffset)) is outside the body of \(r.count) bytes",
                    at: e + 8)
            }
            var width = dirWidth == 0 ? 256 : dirWidth
            var height = dirHeight == 0 ? 256 : dirHeight
            var bitDepth = type == 1 && bitField != 0 ? bitField : nil
            let format: String
            if size >= 8 && r.u32be(dataOffset) == 0x8950_4E47 && r.u32be(dataOffset + 4) == 0x0D0A_1A0A {
                format = "png"
                if size >= 24, r.matches("IHDR", at: dataOffset + 12), let w = r.u32be(dataOffset + 16),
                    let h = r.u32be(dataOffset + 20), w > 0, h > 0
                {
                    width = w
                    height = h
                }
                if bitDepth == nil, size >= 26, let depth = r.u8(dataOffset + 24),
                    let colorType = r.u8(dataOffset + 25),
                    let samples = pngSamples(colorType)
                {
                    bitDepth = depth * samples
                }
            } else {
                format = "bmp"
                if bitDepth == nil, size >= 16, let headerSize = r.u32le(dataOffset) {
                    let bits = headerSize == 12 ? r.u16le(dataOffset + 10) : r.u16le(dataOffset + 14)
                    if let bits, bits != 0 { bitDepth = bits }
                }
            }
            let (product, overflow) = width.multipliedReportingOverflow(by: height)
            let area = overflow ? Int.max : product
            if area > best.area { best = (width, height, area) }
            if entries.count < ImageInfo.maxEntries {
                entries.append(ImageInfo.Entry(width: width, height: height, bitDepth: bitDepth, format: format))
            }
        }
        if count > ImageInfo.maxEntries {
            warnings.append(
                "ico has \(count - ImageInfo.maxEntries) more entries than the \(ImageInfo.maxEntries) listed")
        }

        var info = ImageInfo(format: "ico", width: best.width, height: best.height)
        info.entries = entries
        return info
    }

    /// Samples per pixel of a PNG colour type; nil for invalid types.
    private static func pngSamples(_ colorType: Int) -> Int? {
        switch colorType {
        case 0, 3: 1
        case 4: 2
        case 2: 3
        case 6: 4
        default: nil
        }
    }

    /// An `invalidImage` error at `offset`.
    private static func invalid(_ message: String, at offset: Int) -> RecordError {
        RecordError(.invalidImage, message, location: .init(offset: offset))
    }
}

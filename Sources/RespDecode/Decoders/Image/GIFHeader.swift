/// Reads the metadata of a GIF (GIF87a, GIF89a) without decoding it.
///
/// The reader walks every block once — image descriptors, their colour tables and LZW data sub-blocks, extensions
/// and their sub-blocks — skipping each by its stated length, so it takes linear time in the body and allocates
/// nothing per frame. It counts the image descriptors (frames), notes transparency in any graphic control extension
/// and the loop count of a NETSCAPE2.0 or ANIMEXTS1.0 application extension.
enum GIFHeader {
    /// Whether the body starts with `GIF87a` or `GIF89a`.
    static func matches(_ r: ByteReader) -> Bool {
        r.matches("GIF87a", at: 0) || r.matches("GIF89a", at: 0)
    }

    /// The metadata, or an `invalidImage` RecordError (message says what is wrong, location = byte offset) when the
    /// header is broken or truncated. Non-fatal oddities go to `warnings` (short English sentences, lower-case start).
    ///
    /// Reports the logical screen size, `palette` colour type with 1 channel, the bit depth of the global colour table
    /// (or of the first frame's local one), `frames` when there is more than one image, `loopCount`, `hasAlpha`
    /// (whether any graphic control extension sets the transparency flag) and the first image's interlace flag.
    static func read(_ r: ByteReader, warnings: inout [String]) throws(RecordError) -> ImageInfo {
        guard matches(r) else { throw invalid("gif signature is missing", at: 0) }
        guard let width = r.u16le(6), let height = r.u16le(8), let screenFlags = r.u8(10), r.has(11, 2) else {
            throw invalid("gif logical screen descriptor is truncated", at: r.count)
        }
        var bitDepth: Int?
        var p = 13
        if screenFlags & 0x80 != 0 {
            let bits = (screenFlags & 7) + 1
            bitDepth = bits
            p += 3 << bits
        }

        var frames = 0
        var hasAlpha = false
        var interlaced: Bool?
        var loopCount: Int?
        var sawTrailer = false
        walk: while let introducer = r.u8(p) {
            switch introducer {
            case 0x2C: // image descriptor
                guard let flags = r.u8(p + 9) else { break walk }
                if interlaced == nil { interlaced = flags & 0x40 != 0 }
                p += 10
                if flags & 0x80 != 0 {
                    let bits = (flags & 7) + 1
                    if bitDepth == nil && frames == 0 { bitDepth = bits }
                    p += 3 << bits
                }
                // The LZW minimum code size, then the data sub-blocks.
                guard r.has(p, 1), let end = skipSubBlocks(r, from: p + 1) else { break walk }
                p = end
                frames += 1
            case 0x21: // extension
                guard let label = r.u8(p + 1) else { break walk }
                p += 2
                if label == 0xF9, let size = r.u8(p), size >= 1, let flags = r.u8(p + 1), flags & 1 != 0 {
                    hasAlpha = true
                }
                if label == 0xFF, loopCount == nil, r.u8(p) == 11,
                    r.matches("NETSCAPE2.0", at: p + 1) || r.matches("ANIMEXTS1.0", at: p + 1),
                    let size = r.u8(p + 12), size >= 3, r.u8(p + 13) == 1, let loops = r.u16le(p + 14)
                {
                    loopCount = loops
                }
                guard let end = skipSubBlocks(r, from: p) else { break walk }
                p = end
            case 0x3B: // trailer
                sawTrailer = true
                break walk
            default:
                guard frames > 0 else {
                    throw invalid("gif has an unknown block introducer 0x\(hex(introducer)) before any image", at: p)
                }
                warnings.append("gif has an unknown block introducer 0x\(hex(introducer)); the rest is ignored")
                sawTrailer = true
                break walk
            }
        }
        if !sawTrailer {
            guard frames > 0 else { throw invalid("gif data ends before the first image is complete", at: r.count) }
            warnings.append("gif data ends before the trailer")
        }
        guard frames > 0 else { throw invalid("gif has no image", at: p) }
        if width == 0 || height == 0 { warnings.append("gif logical screen has a zero width or height") }

        var info = ImageInfo(format: "gif", width: width, height: height)
        info.bitDepth = bitDepth
        info.channels = 1
        info.colorType = "palette"
        info.hasAlpha = hasAlpha
        info.interlaced = interlaced
        info.frames = frames > 1 ? frames : nil
        info.loopCount = loopCount
        return info
    }

    /// The offset after the sub-blocks starting at `p` (after their zero-length terminator), or nil when the body
    /// ends first.
    private static func skipSubBlocks(_ r: ByteReader, from start: Int) -> Int? {
        var p = start
        while let size = r.u8(p) {
            p += 1
            if size == 0 { return p }
            p += size
        }
        return nil
    }

    /// `byte` as two upper-case hex digits.
    private static func hex(_ byte: Int) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count < 2 ? "0" + digits : digits
    }

    /// An `invalidImage` error at `offset`.
    private static func invalid(_ message: String, at offset: Int) -> RecordError {
        RecordError(.invalidImage, message, location: .init(offset: offset))
    }
}

/// Reads the metadata of a WebP file (`RIFF` size `WEBP`) from its chunk headers: the simple lossy (`VP8 `) and
/// lossless (`VP8L`) forms and the extended form (`VP8X`), whose other chunks are walked for animation, ICC, EXIF and
/// alpha information.
///
/// Chunks are walked by their stated sizes (padded to even), within the RIFF size or the body, whichever is shorter;
/// the walk is linear in the body and allocates nothing per chunk. A chunk that claims more bytes than remain is an
/// error.
enum WebPHeader {
    /// Whether the body starts with `RIFF`, a size and `WEBP`.
    static func matches(_ r: ByteReader) -> Bool {
        r.matches("RIFF", at: 0) && r.matches("WEBP", at: 8)
    }

    /// The metadata, or an `invalidImage` RecordError (message says what is wrong, location = byte offset) when the
    /// header is broken or truncated. Non-fatal oddities go to `warnings` (short English sentences, lower-case start).
    ///
    /// Reports the canvas (extended) or frame (simple) size, bit depth 8, `hasAlpha` (VP8X alpha flag, VP8L alpha
    /// hint or an ALPH chunk), 4 channels with alpha and 3 without, compression `lossy` or `lossless` (still images),
    /// and for extended files the ANIM loop count, the number of ANMF frames (animated files only), the ICCP chunk size
    /// and the EXIF orientation.
    static func read(_ r: ByteReader, warnings: inout [String]) throws(RecordError) -> ImageInfo {
        guard matches(r), let riffSize = r.u32le(4) else { throw invalid("webp signature is missing", at: 0) }
        guard riffSize >= 4 else { throw invalid("webp riff size \(riffSize) is too small", at: 4) }
        var end = 8 + riffSize
        if end > r.count {
            warnings.append("riff size says \(end) bytes but the body has \(r.count)")
            end = r.count
        }

        let first = try chunk(r, at: 12, end: end)
        var info: ImageInfo
        if r.matches("VP8 ", at: 12) {
            let size = try lossySize(r, first)
            info = ImageInfo(format: "webp", width: size.width, height: size.height)
            info.compression = "lossy"
            info.hasAlpha = false
        } else if r.matches("VP8L", at: 12) {
            let header = try losslessHeader(r, first)
            info = ImageInfo(format: "webp", width: header.width, height: header.height)
            info.compression = "lossless"
            info.hasAlpha = header.alpha
        } else if r.matches("VP8X", at: 12) {
            info = try extended(r, first, end: end, warnings: &warnings)
        } else {
            throw invalid("webp first chunk \(fourCC(r, 12)) is not VP8, VP8L or VP8X", at: 12)
        }
        info.bitDepth = 8
        info.channels = info.hasAlpha == true ? 4 : 3
        return info
    }

    // MARK: Chunks

    /// A chunk: where its header is, where its data starts, its size and where the next chunk starts.
    private struct Chunk {
        var at: Int
        var data: Int
        var size: Int
        var next: Int
    }

    /// The chunk whose header is at `p`, checked to end by `end` (a missing final pad byte is tolerated).
    private static func chunk(_ r: ByteReader, at p: Int, end: Int) throws(RecordError) -> Chunk {
        guard p <= end - 8, let size = r.u32le(p + 4) else {
            throw invalid("webp chunk header is truncated", at: p)
        }
        let data = p + 8
        guard size <= end - data else {
            throw invalid(
                "webp chunk \(fourCC(r, p)) says \(size) bytes but only \(end - data) remain", at: p + 4)
        }
        return Chunk(at: p, data: data, size: size, next: min(data + size + (size & 1), end))
    }

    /// The frame size of a `VP8 ` chunk (lossy key frame).
    private static func lossySize(_ r: ByteReader, _ c: Chunk) throws(RecordError) -> (width: Int, height: Int) {
        guard c.size >= 10, let tag = r.u8(c.data), let w = r.u16le(c.data + 6), let h = r.u16le(c.data + 8) else {
            throw invalid("webp vp8 chunk is too short for a frame header", at: c.data)
        }
        guard tag & 1 == 0 else { throw invalid("webp vp8 frame is not a key frame", at: c.data) }
        guard r.u8(c.data + 3) == 0x9D && r.u8(c.data + 4) == 0x01 && r.u8(c.data + 5) == 0x2A else {
            throw invalid("webp vp8 start code is missing", at: c.data + 3)
        }
        let width = w & 0x3FFF
        let height = h & 0x3FFF
        guard width > 0 && height > 0 else {
            throw invalid("webp vp8 frame has a zero width or height", at: c.data + 6)
        }
        return (width, height)
    }

    /// The image size and alpha hint of a `VP8L` chunk (lossless).
    private static func losslessHeader(_ r: ByteReader, _ c: Chunk) throws(RecordError)
        -> (width: Int, height: Int, alpha: Bool)
    {
        guard c.size >= 5, let signature = r.u8(c.data), let bits = r.u32le(c.data + 1) else {
            throw invalid("webp vp8l chunk is too short for a header", at: c.data)
        }
        guard signature == 0x2F else { throw invalid("webp vp8l signature is missing", at: c.data) }
        guard bits >> 29 == 0 else { throw invalid("webp vp8l version \(bits >> 29) is not 0", at: c.data + 4) }
        return ((bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1, bits >> 28 & 1 != 0)
    }

    /// An extended file: the VP8X canvas and flags, then the other chunks.
    private static func extended(_ r: ByteReader, _ vp8x: Chunk, end: Int, warnings: inout [String])
        throws(RecordError) -> ImageInfo
    {
        guard vp8x.size >= 10, let flags = r.u8(vp8x.data), let w = r.u24le(vp8x.data + 4),
            let h = r.u24le(vp8x.data + 7)
        else { throw invalid("webp vp8x chunk is too short", at: vp8x.data) }
        let animated = flags & 0x02 != 0
        var info = ImageInfo(format: "webp", width: w + 1, height: h + 1)
        var hasAlpha = flags & 0x10 != 0
        var frames = 0
        var sawImage = false
        var p = vp8x.next
        while p < end {
            let c = try chunk(r, at: p, end: end)
            if r.matches("ANIM", at: p) {
                if info.loopCount == nil, c.size >= 6 { info.loopCount = r.u16le(c.data + 4) }
            } else if r.matches("ANMF", at: p) {
                frames += 1
            } else if r.matches("ICCP", at: p) {
                if info.iccProfile == nil { info.iccProfile = c.size }
            } else if r.matches("EXIF", at: p) {
                if info.exifOrientation == nil { readExif(r, c, into: &info, warnings: &warnings) }
            } else if r.matches("ALPH", at: p) {
                hasAlpha = true
            } else if r.matches("VP8 ", at: p), !animated {
                if !sawImage { info.compression = "lossy" }
                sawImage = true
            } else if r.matches("VP8L", at: p), !animated {
                if !sawImage {
                    info.compression = "lossless"
                    if let header = try? losslessHeader(r, c), header.alpha { hasAlpha = true }
                }
                sawImage = true
            }
            p = c.next
        }
        if animated {
            guard frames > 0 else { throw invalid("webp animation has no frames", at: p) }
            info.frames = frames
        } else {
            guard sawImage else { throw invalid("webp extended file has no vp8 or vp8l image chunk", at: p) }
            if frames > 0 { warnings.append("webp has anmf chunks but the animation flag is not set") }
        }
        info.hasAlpha = hasAlpha
        return info
    }

    /// The orientation from an EXIF chunk (a TIFF block, possibly after an `Exif\0\0` prefix).
    private static func readExif(_ r: ByteReader, _ c: Chunk, into info: inout ImageInfo, warnings: inout [String]) {
        let skip = c.size >= 6 && r.matches("Exif\0\0", at: c.data) ? 6 : 0
        guard let block = r.slice(c.data + skip, c.size - skip), let ifd = TIFFDirectory(tiff: block) else {
            warnings.append("webp exif chunk is not a tiff block")
            return
        }
        guard let orientation = ifd.integer(274) else { return }
        if (1...8).contains(orientation) {
            info.exifOrientation = orientation
        } else {
            warnings.append("webp exif orientation \(orientation) is not between 1 and 8")
        }
    }

    /// The chunk name at `p` for messages: its four characters when printable, else their hex value.
    private static func fourCC(_ r: ByteReader, _ p: Int) -> String {
        guard let value = r.u32be(p) else { return "(truncated)" }
        var text = ""
        for shift in [24, 16, 8, 0] {
            let byte = value >> shift & 0xFF
            guard byte >= 0x20 && byte < 0x7F else { return "0x" + String(value, radix: 16, uppercase: true) }
            text.unicodeScalars.append(Unicode.Scalar(UInt8(byte)))
        }
        return "\"" + text + "\""
    }

    /// An `invalidImage` error at `offset`.
    private static func invalid(_ message: String, at offset: Int) -> RecordError {
        RecordError(.invalidImage, message, location: .init(offset: offset))
    }
}

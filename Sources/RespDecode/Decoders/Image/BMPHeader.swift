/// Reads the metadata of a Windows or OS/2 bitmap (`BM`) from its file header and DIB header.
///
/// The DIB header is told by its size: 12 bytes (OS/2 1.x `BITMAPCOREHEADER`, 16-bit dimensions), 40
/// (`BITMAPINFOHEADER`), 52 and 56 (the Adobe variants with colour masks), 64 (OS/2 2.x `BITMAPCOREHEADER2`, whose
/// first 40 bytes lie as a `BITMAPINFOHEADER`'s), 108 (V4) and 124 (V5). Each family names its compression codes:
/// 3 and 4 are bit fields and JPEG in the Windows headers, but Huffman 1D and RLE24 in OS/2 2.x (docs/output.md#image).
/// Only the headers are read; the pixel data is not looked at.
enum BMPHeader {
    /// Whether the body starts with `BM`.
    static func matches(_ r: ByteReader) -> Bool {
        r.matches("BM", at: 0)
    }

    /// The metadata, or an `invalidImage` RecordError (message says what is wrong, location = byte offset) when the
    /// header is broken or truncated. Non-fatal oddities go to `warnings` (short English sentences, lower-case start).
    ///
    /// Reports width, height (a negative height — a top-down bitmap — as its absolute value), bits per pixel as
    /// `bitDepth`, `palette` (≤ 8 bpp, 1 channel), `rgba` (an alpha mask is present, 4 channels) or `rgb`
    /// (3 channels), `hasAlpha`, the compression name and the resolution in dpi when both pixels-per-metre fields are
    /// positive. JPEG- and PNG-compressed bitmaps may have a bit count of 0; they get no bit depth or colour type.
    static func read(_ r: ByteReader, warnings: inout [String]) throws(RecordError) -> ImageInfo {
        guard matches(r) else { throw invalid("bmp signature is missing", at: 0) }
        guard let dataOffset = r.u32le(10), let headerSize = r.u32le(14) else {
            throw invalid("bmp file header is truncated", at: r.count)
        }
        guard [12, 40, 52, 56, 64, 108, 124].contains(headerSize) else {
            throw invalid("bmp dib header size \(headerSize) is not supported", at: 14)
        }
        guard r.has(14, headerSize) else { throw invalid("bmp dib header is truncated", at: r.count) }

        let width: Int
        let height: Int
        let bitCount: Int
        var compression = 0
        var dpi: (x: Double, y: Double)?
        var alphaMask = 0
        if headerSize == 12 {
            guard let w = r.u16le(18), let h = r.u16le(20), let bits = r.u16le(24) else {
                throw invalid("bmp dib header is truncated", at: r.count)
            }
            width = w
            height = h
            bitCount = bits
        } else {
            guard let w = r.i32le(18), let h = r.i32le(22), let bits = r.u16le(28), let c = r.u32le(30),
                let xppm = r.i32le(38), let yppm = r.i32le(42)
            else { throw invalid("bmp dib header is truncated", at: r.count) }
            guard w >= 0 else { throw invalid("bmp width \(w) is negative", at: 18) }
            guard h != Int(Int32.min) else { throw invalid("bmp height \(h) is out of range", at: 22) }
            width = w
            height = abs(h)
            bitCount = bits
            compression = c
            if xppm > 0 && yppm > 0 { dpi = (Double(xppm) * 0.0254, Double(yppm) * 0.0254) }
            // The alpha mask is the fourth colour mask, at 66 for every header that has one: inside V3-with-alpha,
            // V4 and V5 headers, or after a 40- or 52-byte header with ALPHABITFIELDS.
            let hasAlphaMask = headerSize == 56 || headerSize >= 108 || (headerSize <= 52 && compression == 6)
            if hasAlphaMask {
                guard let mask = r.u32le(66) else { throw invalid("bmp alpha mask is truncated", at: r.count) }
                alphaMask = mask
            } else if headerSize == 40 && compression == 3 && !r.has(54, 12) {
                throw invalid("bmp colour masks are truncated", at: r.count)
            }
        }
        guard width > 0 && height > 0 else {
            throw invalid("bmp has a zero width or height", at: 18)
        }
        let os2 = headerSize == 12 || headerSize == 64
        // JPEG and PNG bitmaps (Windows headers only) may give no bit count.
        let embedded = !os2 && (compression == 4 || compression == 5)
        guard [1, 2, 4, 8, 16, 24, 32].contains(bitCount) || (bitCount == 0 && embedded) else {
            throw invalid("bmp bit count \(bitCount) is not 1, 2, 4, 8, 16, 24 or 32", at: headerSize == 12 ? 24 : 28)
        }
        if dataOffset > r.count { warnings.append("bmp pixel data offset \(dataOffset) is past the end of the body") }

        var info = ImageInfo(format: "bmp", width: width, height: height)
        if bitCount != 0 {
            info.bitDepth = bitCount
            let alpha = bitCount >= 16 && (compression == 6 || alphaMask != 0)
            if bitCount <= 8 {
                info.colorType = "palette"
                info.channels = 1
            } else {
                info.colorType = alpha ? "rgba" : "rgb"
                info.channels = alpha ? 4 : 3
            }
            info.hasAlpha = alpha
        }
        info.compression = os2 ? os2CompressionName(compression) : compressionName(compression)
        info.dpi = dpi
        return info
    }

    /// The name of an OS/2 2.x `ulCompression` code (OS/2 1.x headers have none: 0).
    private static func os2CompressionName(_ code: Int) -> String {
        switch code {
        case 0: "none"
        case 1: "rle8"
        case 2: "rle4"
        case 3: "huffman1d"
        case 4: "rle24"
        default: "code \(code)"
        }
    }

    /// The name of a Windows `biCompression` code.
    private static func compressionName(_ code: Int) -> String {
        switch code {
        case 0: "none"
        case 1: "rle8"
        case 2: "rle4"
        case 3: "bitfields"
        case 4: "jpeg"
        case 5: "png"
        case 6: "alphabitfields"
        default: "code \(code)"
        }
    }

    /// An `invalidImage` error at `offset`.
    private static func invalid(_ message: String, at offset: Int) -> RecordError {
        RecordError(.invalidImage, message, location: .init(offset: offset))
    }
}

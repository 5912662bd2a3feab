/// Reads the metadata of a classic TIFF file (`II*\0` little endian or `MM\0*` big endian) from its first image file
/// directory, and counts the directories of its chain.
///
/// BigTIFF (`II+\0`, `MM\0+`) does not match. The chain walk is bounded by ``maxDirectories`` and stops at the first
/// offset it has already visited, so a looping chain ends with a warning, not a hang.
enum TIFFHeader {
    /// Most directories counted in the chain; a longer chain is reported with this count and a warning.
    static let maxDirectories = 10_000

    /// Whether the body starts with a classic TIFF header in either byte order.
    static func matches(_ r: ByteReader) -> Bool {
        r.matches("II*\0", at: 0) || r.matches("MM\0*", at: 0)
    }

    /// The metadata, or an `invalidImage` RecordError (message says what is wrong, location = byte offset) when the
    /// header is broken or truncated. Non-fatal oddities go to `warnings` (short English sentences, lower-case start).
    ///
    /// Reports, from the first directory: width (tag 256), height (257), bits per sample (258, first value, default 1),
    /// samples per pixel as `channels` (277, default 1), the compression name (259, default `none`), the colour type
    /// from the photometric interpretation (262), `hasAlpha` when ExtraSamples (338) is present, the EXIF orientation
    /// (274, 1–8), the resolution in dpi (282, 283 and unit 296) and the ICC profile size (34675); and `frames`, the
    /// number of directories in the chain, when it is more than one.
    static func read(_ r: ByteReader, warnings: inout [String]) throws(RecordError) -> ImageInfo {
        guard matches(r) else { throw invalid("tiff signature is missing", at: 0) }
        guard let firstOffset = r.u32(4, bigEndian: r.matches("MM", at: 0)) else {
            throw invalid("tiff header is truncated", at: r.count)
        }
        guard firstOffset >= 8 else {
            throw invalid("tiff first directory offset \(firstOffset) points into the header", at: 4)
        }
        guard let ifd = TIFFDirectory(tiff: r.bytes) else {
            throw invalid("tiff first directory offset \(firstOffset) is outside the body of \(r.count) bytes", at: 4)
        }
        guard let width = ifd.integer(256), let height = ifd.integer(257) else {
            throw invalid("tiff first directory has no image width or height", at: ifd.offset)
        }
        guard width > 0 && height > 0 else {
            throw invalid("tiff image width or height is zero or negative", at: ifd.offset)
        }

        var info = ImageInfo(format: "tiff", width: width, height: height)
        // Non-positive counts (signed types) are treated as missing.
        info.bitDepth = ifd.integer(258).flatMap { $0 > 0 ? $0 : nil } ?? 1
        info.channels = ifd.integer(277).flatMap { $0 > 0 ? $0 : nil } ?? 1
        info.compression = compressionName(ifd.integer(259) ?? 1)
        let alpha = ifd.byteCount(338) != nil
        info.hasAlpha = alpha
        if let photometric = ifd.integer(262) {
            info.colorType = colorTypeName(photometric, alpha: alpha)
        }
        if let orientation = ifd.integer(274) {
            if (1...8).contains(orientation) {
                info.exifOrientation = orientation
            } else {
                warnings.append("tiff orientation \(orientation) is not between 1 and 8")
            }
        }
        if let x = ifd.rational(282), let y = ifd.rational(283), x > 0, y > 0 {
            switch ifd.integer(296) ?? 2 {
            case 2: info.dpi = (x, y)
            case 3: info.dpi = (x * 2.54, y * 2.54)
            default: break
            }
        }
        info.iccProfile = ifd.byteCount(34675)

        // Count the chain. Each step is constant work; `visited` holds at most `maxDirectories` offsets.
        var frames = 1
        var visited: Set<Int> = [ifd.offset]
        var next = ifd.nextOffset
        while next != 0 {
            guard frames < maxDirectories else {
                warnings.append("tiff has more than \(maxDirectories) directories; only \(maxDirectories) are counted")
                break
            }
            guard visited.insert(next).inserted else {
                warnings.append("tiff directory chain loops back to offset \(next)")
                break
            }
            guard let directory = ifd.directory(at: next) else {
                warnings.append("tiff directory offset \(next) is outside the body")
                break
            }
            frames += 1
            next = directory.nextOffset
        }
        if frames > 1 { info.frames = frames }
        return info
    }

    /// The name of a Compression (259) value.
    private static func compressionName(_ code: Int) -> String {
        switch code {
        case 1: "none"
        case 2: "ccitt-rle"
        case 3: "ccitt-g3"
        case 4: "ccitt-g4"
        case 5: "lzw"
        case 6, 7: "jpeg"
        case 8, 32946: "deflate"
        case 32773: "packbits"
        case 34712: "jpeg2000"
        default: "code \(code)"
        }
    }

    /// The colour type of a PhotometricInterpretation (262) value.
    private static func colorTypeName(_ photometric: Int, alpha: Bool) -> String {
        switch photometric {
        case 0, 1: alpha ? "gray-alpha" : "gray"
        case 2: alpha ? "rgba" : "rgb"
        case 3: "palette"
        case 5: "cmyk"
        case 6: "ycbcr"
        default: "code \(photometric)"
        }
    }

    /// An `invalidImage` error at `offset`.
    private static func invalid(_ message: String, at offset: Int) -> RecordError {
        RecordError(.invalidImage, message, location: .init(offset: offset))
    }
}

/// What the image decoder reports about one image: the `value` of an image line (docs/output.md#image).
///
/// Every format reader fills what its header holds and leaves the rest `nil`; ``write(to:scale:)`` writes the set
/// keys in one fixed order, so lines of one format always look alike.
struct ImageInfo: Sendable, Equatable {
    /// `png`, `jpeg`, `gif`, `bmp`, `ico`, `tiff` or `webp`: what the bytes are, whatever the Content-Type said.
    var format: String
    /// Stored size in pixels (before any EXIF orientation is applied).
    var width: Int
    var height: Int
    /// Bits per sample (PNG bit depth, JPEG precision, BMP/TIFF bits per sample or pixel as the format defines it).
    var bitDepth: Int?
    /// Samples per pixel as stored (a palette image has 1).
    var channels: Int?
    /// `gray`, `gray-alpha`, `rgb`, `rgba` or `palette` (PNG, GIF, BMP, TIFF, ICO entries).
    var colorType: String?
    /// JPEG: `gray`, `ycbcr`, `rgb`, `cmyk` or `ycck`.
    var colorSpace: String?
    var hasAlpha: Bool?
    /// PNG Adam7, GIF interlaced first frame.
    var interlaced: Bool?
    /// JPEG: progressive (SOF2/SOF6/SOF10/SOF14) and arithmetic-coded (SOF9–SOF15).
    var progressive: Bool?
    var arithmetic: Bool?
    /// JPEG lossless (SOF3/SOF7/SOF11/SOF15); written only when true.
    var lossless: Bool?
    /// JPEG chroma subsampling: `4:4:4`, `4:2:2`, `4:2:0`, `4:4:0`, `4:1:1`, or the factors (`2x2,1x1,1x1`).
    var subsampling: String?
    /// BMP/TIFF compression name, WebP `lossy`/`lossless`.
    var compression: String?
    /// PNG gAMA in units of 1/100000 (45455 is 0.45455).
    var gamma100000: Int?
    /// PNG sRGB rendering intent: `perceptual`, `relative`, `saturation` or `absolute`.
    var srgb: String?
    /// ICC profile size in bytes (PNG iCCP after decompression, JPEG APP2 chunks, WebP ICCP, TIFF tag 34675).
    var iccProfile: Int?
    /// Resolution in dots per inch, x and y, when the file states it in absolute units.
    var dpi: (x: Double, y: Double)?
    /// EXIF Orientation 1–8 (other values are reported as a warning, not here).
    var exifOrientation: Int?
    /// PNG tEXt/zTXt/iTXt keywords in file order, at most ``ImageInfo/maxTextKeys``.
    var textKeys: [String] = []
    /// Frames of an animation (APNG acTL, GIF image descriptors, WebP ANMF chunks); `nil` when not animated.
    var frames: Int?
    /// Animation loop count (0 = forever): APNG num_plays, GIF NETSCAPE2.0, WebP ANIM.
    var loopCount: Int?
    /// ICO/CUR directory entries, at most ``ImageInfo/maxEntries``.
    var entries: [Entry]?
    /// With `--inflate`: what the full decode to RGBA8 gave.
    var decoded: PixelSummary?

    /// One ICO/CUR directory entry.
    struct Entry: Sendable, Equatable {
        var width: Int
        var height: Int
        var bitDepth: Int?
        /// `png` or `bmp`: how the entry's image is stored.
        var format: String
    }

    /// Keys of text chunks reported per image; more are counted in a warning.
    static let maxTextKeys = 64
    /// ICO entries reported per image.
    static let maxEntries = 256

    init(format: String, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }

    static func == (a: ImageInfo, b: ImageInfo) -> Bool {
        a.format == b.format && a.width == b.width && a.height == b.height && a.bitDepth == b.bitDepth
            && a.channels == b.channels && a.colorType == b.colorType && a.colorSpace == b.colorSpace
            && a.hasAlpha == b.hasAlpha && a.interlaced == b.interlaced && a.progressive == b.progressive
            && a.arithmetic == b.arithmetic && a.lossless == b.lossless && a.subsampling == b.subsampling
            && a.compression == b.compression && a.gamma100000 == b.gamma100000 && a.srgb == b.srgb
            && a.iccProfile == b.iccProfile && a.dpi?.x == b.dpi?.x && a.dpi?.y == b.dpi?.y
            && a.exifOrientation == b.exifOrientation && a.textKeys == b.textKeys && a.frames == b.frames
            && a.loopCount == b.loopCount && a.entries == b.entries && a.decoded == b.decoded
    }

    /// Writes the JSON object. `scale` (AFNetworking's `imageScale`), when given, adds `pointWidth`/`pointHeight`:
    /// the display size (EXIF orientations 5–8 swap width and height, as `UIImage.size` does) divided by the scale.
    func write(to out: OutputBuffer, scale: Double?) {
        out.append(ascii: "{\"format\":")
        out.appendJSONString(format)
        out.append(ascii: ",\"width\":")
        out.append(decimal: width)
        out.append(ascii: ",\"height\":")
        out.append(decimal: height)
        if let bitDepth {
            out.append(ascii: ",\"bitDepth\":")
            out.append(decimal: bitDepth)
        }
        if let channels {
            out.append(ascii: ",\"channels\":")
            out.append(decimal: channels)
        }
        if let colorType {
            out.append(ascii: ",\"colorType\":")
            out.appendJSONString(colorType)
        }
        if let colorSpace {
            out.append(ascii: ",\"colorSpace\":")
            out.appendJSONString(colorSpace)
        }
        if let hasAlpha {
            out.append(ascii: ",\"hasAlpha\":")
            out.append(bool: hasAlpha)
        }
        if let interlaced {
            out.append(ascii: ",\"interlaced\":")
            out.append(bool: interlaced)
        }
        if let progressive {
            out.append(ascii: ",\"progressive\":")
            out.append(bool: progressive)
        }
        if let arithmetic {
            out.append(ascii: ",\"arithmetic\":")
            out.append(bool: arithmetic)
        }
        if lossless == true { out.append(ascii: ",\"lossless\":true") }
        if let subsampling {
            out.append(ascii: ",\"subsampling\":")
            out.appendJSONString(subsampling)
        }
        if let compression {
            out.append(ascii: ",\"compression\":")
            out.appendJSONString(compression)
        }
        if let gamma100000 {
            out.append(ascii: ",\"gamma\":")
            out.append(fixed: Int64(gamma100000), fractionDigits: 5)
        }
        if let srgb {
            out.append(ascii: ",\"srgb\":")
            out.appendJSONString(srgb)
        }
        if let iccProfile {
            out.append(ascii: ",\"iccProfile\":")
            out.append(decimal: iccProfile)
        }
        if let dpi {
            out.append(ascii: ",\"dpi\":[")
            out.append(hundredths: dpi.x)
            out.append(UInt8(ascii: ","))
            out.append(hundredths: dpi.y)
            out.append(UInt8(ascii: "]"))
        }
        if let exifOrientation {
            out.append(ascii: ",\"exifOrientation\":")
            out.append(decimal: exifOrientation)
        }
        if !textKeys.isEmpty {
            out.append(ascii: ",\"textKeys\":[")
            for (i, key) in textKeys.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                out.appendJSONString(key)
            }
            out.append(UInt8(ascii: "]"))
        }
        if let frames {
            out.append(ascii: ",\"frames\":")
            out.append(decimal: frames)
        }
        if let loopCount {
            out.append(ascii: ",\"loopCount\":")
            out.append(decimal: loopCount)
        }
        if let entries {
            out.append(ascii: ",\"entries\":[")
            for (i, entry) in entries.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                out.append(ascii: "{\"width\":")
                out.append(decimal: entry.width)
                out.append(ascii: ",\"height\":")
                out.append(decimal: entry.height)
                if let bitDepth = entry.bitDepth {
                    out.append(ascii: ",\"bitDepth\":")
                    out.append(decimal: bitDepth)
                }
                out.append(ascii: ",\"format\":")
                out.appendJSONString(entry.format)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
        }
        if let scale {
            let swapped = (exifOrientation ?? 1) >= 5
            out.append(ascii: ",\"pointWidth\":")
            out.append(hundredths: Double(swapped ? height : width) / scale)
            out.append(ascii: ",\"pointHeight\":")
            out.append(hundredths: Double(swapped ? width : height) / scale)
        }
        if let decoded {
            out.append(ascii: ",\"decoded\":")
            decoded.write(to: out)
        }
        out.append(UInt8(ascii: "}"))
    }
}

extension OutputBuffer {
    @inline(__always) func append(bool value: Bool) {
        if value { append(ascii: "true") } else { append(ascii: "false") }
    }

    /// `value / 10^fractionDigits` as a JSON number without trailing zeros (`45455, 5` → `0.45455`, `100000, 5` → `1`).
    func append(fixed value: Int64, fractionDigits: Int) {
        var divisor: Int64 = 1
        for _ in 0..<fractionDigits { divisor *= 10 }
        if value < 0 { append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        append(decimal: Int64(magnitude / UInt64(divisor)))
        var fraction = magnitude % UInt64(divisor)
        guard fraction != 0 else { return }
        append(UInt8(ascii: "."))
        var digits = fractionDigits
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        var scratch = [UInt8](repeating: UInt8(ascii: "0"), count: digits)
        var i = digits
        while fraction > 0 {
            i -= 1
            scratch[i] = UInt8(ascii: "0") + UInt8(fraction % 10)
            fraction /= 10
        }
        append(scratch)
    }

    /// A finite, non-negative `value` rounded to hundredths (`72.0094` → `72.01`, `425.0` → `425`); anything else as
    /// `0`.
    func append(hundredths value: Double) {
        guard value.isFinite, value >= 0, value < 1e15 else { return append(UInt8(ascii: "0")) }
        append(fixed: Int64((value * 100).rounded()), fractionDigits: 2)
    }
}

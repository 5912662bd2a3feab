internal import CShims

/// The only Swift file that drives libjpeg-turbo (through the C shim, which owns libjpeg's setjmp).
enum LibJPEG {
    /// What `jpeg_read_header` read.
    struct Header {
        var width: Int
        var height: Int
        var precision: Int
        var components: Int
        /// `gray`, `rgb`, `ycbcr`, `cmyk`, `ycck`, or nil when libjpeg does not know it.
        var colorSpace: String?
        var progressive: Bool
        var arithmetic: Bool
        /// Sampling factors (horizontal, vertical) of the first four components.
        var sampling: [(h: Int, v: Int)]
        /// JFIF density: unit 1 = per inch, 2 = per cm.
        var jfifDensity: (unit: Int, x: Int, y: Int)?
        var adobeTransform: Int?
    }

    struct Limits {
        var maxPixels: Int
        var maxScans: Int
        var maxScanPixels: Int
        var maxMemory: Int
    }

    /// Reads the header, and with `pixels` the whole image as RGBA8 rows into it; in that case a corrupt-data
    /// warning is fatal. Without `pixels`, libjpeg's warnings go to `warnings`.
    static func read(
        _ body: UnsafeBufferPointer<UInt8>, limits: Limits, pixels: PixelAccumulator?, warnings: inout [String]
    ) -> Result<Header, ImageShim.Failure> {
        var cLimits = respdecode_jpeg_limits(
            max_pixels: UInt64(max(limits.maxPixels, 0)), max_scans: Int32(clamping: limits.maxScans),
            max_scan_pixels: UInt64(max(limits.maxScanPixels, 0)),
            max_memory: max(limits.maxMemory, 0))
        var header = respdecode_jpeg_header()
        if let failure = ImageShim.run(
            library: "libjpeg", pixels: pixels, warnings: &warnings,
            {
                respdecode_jpeg_read(body.baseAddress, body.count, &cLimits, &header, $0, $1, $2)
            })
        {
            return .failure(failure)
        }
        let components = Int(header.components)
        let sampling = withUnsafeBytes(of: header.h_samp) { h in
            withUnsafeBytes(of: header.v_samp) { v in
                (0..<min(max(components, 0), 4)).map {
                    (
                        h: Int(h.load(fromByteOffset: 4 * $0, as: Int32.self)),
                        v: Int(v.load(fromByteOffset: 4 * $0, as: Int32.self))
                    )
                }
            }
        }
        return .success(
            Header(
                width: Int(header.width), height: Int(header.height), precision: Int(header.precision),
                components: components, colorSpace: colorSpaceName(Int(header.color_space)),
                progressive: header.progressive != 0, arithmetic: header.arithmetic != 0, sampling: sampling,
                jfifDensity: header.saw_jfif != 0
                    ? (Int(header.density_unit), Int(header.x_density), Int(header.y_density)) : nil,
                adobeTransform: header.saw_adobe != 0 ? Int(header.adobe_transform) : nil))
    }

    /// The shim's colour space code as a name (a switch, not a dictionary literal built for every record).
    private static func colorSpaceName(_ code: Int) -> String? {
        switch code {
        case 1: "gray"
        case 2: "rgb"
        case 3: "ycbcr"
        case 4: "cmyk"
        case 5: "ycck"
        default: nil
        }
    }
}

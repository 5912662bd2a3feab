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

    enum Failure: Error {
        case invalid(String)
        case limit(String)
        /// A valid file this libjpeg build cannot decode (12-bit, lossless).
        case unsupported(String)
    }

    /// Reads the header, and with `pixels` the whole image as RGBA8 rows into it; in that case a corrupt-data
    /// warning is fatal. Without `pixels`, libjpeg's warnings go to `warnings`.
    static func read(
        _ body: UnsafeBufferPointer<UInt8>, limits: Limits, pixels: PixelAccumulator?, warnings: inout [String]
    ) -> Result<Header, Failure> {
        var cLimits = respdecode_jpeg_limits(
            max_pixels: UInt64(max(limits.maxPixels, 0)), max_scans: Int32(clamping: limits.maxScans),
            max_scan_pixels: UInt64(max(limits.maxScanPixels, 0)),
            max_memory: max(limits.maxMemory, 0))
        var header = respdecode_jpeg_header()
        var outcome = respdecode_image_outcome()
        let status: Int32
        if let pixels {
            status = respdecode_jpeg_read(
                body.baseAddress, body.count, &cLimits, &header,
                { context, width, height, channels, row, count, y, x0, step in
                    guard let context, let row else { return }
                    Unmanaged<PixelAccumulator>.fromOpaque(context)._withUnsafeGuaranteedRef {
                        $0.addRow(row, count: Int(count), channels: Int(channels), y: Int(y), x0: Int(x0),
                            step: Int(step), width: Int(width), height: Int(height))
                    }
                }, Unmanaged.passUnretained(pixels).toOpaque(), &outcome)
        } else {
            status = respdecode_jpeg_read(body.baseAddress, body.count, &cLimits, &header, nil, nil, &outcome)
        }
        let (message, firstWarning) = ImageShimText.strings(of: &outcome)
        if outcome.warnings > 0 {
            warnings.append(ImageShimText.warning("libjpeg", firstWarning, count: Int(outcome.warnings)))
        }
        switch Int(status) {
        case RESPDECODE_IMAGE_OK:
            break
        case RESPDECODE_IMAGE_LIMIT:
            return .failure(.limit(message))
        case RESPDECODE_IMAGE_UNSUPPORTED:
            return .failure(.unsupported(message))
        default:
            return .failure(.invalid(message))
        }
        let spaces = [1: "gray", 2: "rgb", 3: "ycbcr", 4: "cmyk", 5: "ycck"]
        let components = Int(header.components)
        let sampling = withUnsafeBytes(of: header.h_samp) { h in
            withUnsafeBytes(of: header.v_samp) { v in
                (0..<min(max(components, 0), 4)).map {
                    (h: Int(h.load(fromByteOffset: 4 * $0, as: Int32.self)),
                        v: Int(v.load(fromByteOffset: 4 * $0, as: Int32.self)))
                }
            }
        }
        return .success(
            Header(
                width: Int(header.width), height: Int(header.height), precision: Int(header.precision),
                components: components, colorSpace: spaces[Int(header.color_space)],
                progressive: header.progressive != 0, arithmetic: header.arithmetic != 0, sampling: sampling,
                jfifDensity: header.saw_jfif != 0
                    ? (Int(header.density_unit), Int(header.x_density), Int(header.y_density)) : nil,
                adobeTransform: header.saw_adobe != 0 ? Int(header.adobe_transform) : nil))
    }
}

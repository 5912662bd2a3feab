/// JPEG: libjpeg-turbo reads the header (and, with `--inflate`, the pixels); a walk over the marker segments before
/// the first scan adds what libjpeg does not keep — EXIF orientation and resolution, the ICC profile's size — and the
/// frame header of files this libjpeg build cannot decode (12-bit, lossless), which still get their metadata.
enum JPEGImage {
    static func matches(_ r: ByteReader) -> Bool {
        r.count >= 3 && r.bytes[0] == 0xFF && r.bytes[1] == 0xD8 && r.bytes[2] == 0xFF
    }

    static func read(
        _ body: UnsafeBufferPointer<UInt8>, options: ImageOptions, warnings: inout [String]
    ) throws(RecordError) -> ImageInfo {
        let segments = Segments(body)
        let pixels = options.inflate ? PixelAccumulator() : nil
        let limits = LibJPEG.Limits(
            maxPixels: options.maxPixels, maxScans: options.maxScans, maxScanPixels: options.maxScanPixels,
            maxMemory: options.maxMemory)
        var info: ImageInfo
        switch LibJPEG.read(body, limits: limits, pixels: pixels, warnings: &warnings) {
        case .success(let header):
            info = ImageInfo(format: "jpeg", width: header.width, height: header.height)
            info.bitDepth = header.precision
            info.channels = header.components
            info.colorSpace = header.colorSpace
            info.progressive = header.progressive
            info.arithmetic = header.arithmetic
            info.subsampling = subsampling(header.sampling)
            if let density = header.jfifDensity, density.unit == 1 || density.unit == 2, density.x > 0, density.y > 0 {
                let perInch = density.unit == 1 ? 1.0 : 2.54
                info.dpi = (Double(density.x) * perInch, Double(density.y) * perInch)
            }
        case .failure(.unsupported(let message)):
            // Valid, but not for this libjpeg (8-bit only, no lossless): the frame header still tells what it is.
            guard !options.inflate, let frame = segments.frame else {
                throw RecordError(
                    .unsupportedFormat, "jpeg: \(message) (libjpeg-turbo decodes 8-bit lossy JPEG up to 65500 pixels)")
            }
            warnings.append("jpeg: \(message); metadata from the frame header only")
            info = ImageInfo(format: "jpeg", width: frame.width, height: frame.height)
            info.bitDepth = frame.precision
            info.channels = frame.sampling.count
            info.colorSpace =
                [
                    1: "gray", 3: segments.adobeTransform == 0 ? "rgb" : "ycbcr",
                    4: segments.adobeTransform == 2 ? "ycck" : "cmyk",
                ][frame.sampling.count]
            info.progressive = frame.progressive
            info.arithmetic = frame.arithmetic
            info.lossless = frame.lossless
            info.subsampling = subsampling(frame.sampling)
        case .failure(.invalid(let message)):
            throw RecordError(.invalidImage, "jpeg: \(message)")
        case .failure(.limit(let message)):
            throw RecordError(.limitExceeded, "jpeg: \(message)")
        }
        info.hasAlpha = false
        if let exif = segments.exif {
            if let orientation = exif.integer(0x0112) {
                if (1...8).contains(orientation) {
                    info.exifOrientation = orientation
                } else {
                    warnings.append("jpeg: EXIF orientation \(orientation) is not 1–8; ignored")
                }
            }
            if info.dpi == nil, let x = exif.rational(0x011A), let y = exif.rational(0x011B), x > 0, y > 0,
                x.isFinite, y.isFinite
            {
                switch exif.integer(0x0128) ?? 2 {
                case 2: info.dpi = (x, y)
                case 3: info.dpi = (x * 2.54, y * 2.54)
                default: break
                }
            }
        }
        if segments.iccBytes > 0 { info.iccProfile = segments.iccBytes }
        warnings += segments.warnings
        if let pixels {
            guard pixels.pixelsSeen == info.width * info.height else {
                throw RecordError(.invalidImage, "jpeg: the scan data ended before every pixel was decoded")
            }
            info.decoded = pixels.summary()
        } else if !segments.endsWithEOI {
            warnings.append("jpeg: no EOI marker at the end; the image data may be truncated")
        }
        return info
    }

    /// `4:2:0` and friends when every component but the first is sampled 1×1, else the factors (`2x2,1x2,1x1`).
    static func subsampling(_ factors: [(h: Int, v: Int)]) -> String? {
        guard factors.count > 1, let first = factors.first else { return nil }
        if factors.dropFirst().allSatisfy({ $0.h == 1 && $0.v == 1 }) {
            switch (first.h, first.v) {
            case (1, 1): return "4:4:4"
            case (2, 1): return "4:2:2"
            case (2, 2): return "4:2:0"
            case (1, 2): return "4:4:0"
            case (4, 1): return "4:1:1"
            case (4, 2): return "4:1:0"
            default: break
            }
        }
        return factors.map { "\($0.h)x\($0.v)" }.joined(separator: ",")
    }

    /// The marker segments before the first scan (SOS), read once: the frame header, the first EXIF block, the ICC
    /// profile chunks and the Adobe transform. Linear in the header's size; junk between segments is skipped, as
    /// libjpeg does.
    struct Segments {
        struct Frame {
            var width: Int
            var height: Int
            var precision: Int
            var sampling: [(h: Int, v: Int)]
            var progressive: Bool
            var arithmetic: Bool
            var lossless: Bool
        }

        var frame: Frame?
        var exif: TIFFDirectory?
        var sawExif = false
        /// Sum of the ICC_PROFILE chunks' payloads.
        var iccBytes = 0
        /// ICC_PROFILE chunks as (sequence number, count of chunks, payload size).
        private var iccChunks: [(sequence: Int, count: Int, bytes: Int)] = []
        var adobeTransform: Int?
        /// Whether an EOI marker (FF D9) is among the last bytes (trailing padding after it is common).
        var endsWithEOI = false
        var warnings: [String] = []

        init(_ body: UnsafeBufferPointer<UInt8>) {
            let r = ByteReader(body)
            var offset = 2
            scan: while offset < r.count {
                guard r.bytes[offset] == 0xFF else {
                    offset += 1 // junk before a marker (libjpeg warns and skips it too)
                    continue
                }
                var m = offset + 1
                while m < r.count && r.bytes[m] == 0xFF { m += 1 } // fill bytes
                guard let marker = r.u8(m) else { break }
                if marker == 0x00 || marker == 0x01 || (0xD0...0xD7).contains(marker) {
                    offset = m + 1
                    continue
                }
                if marker == 0xDA || marker == 0xD9 { break }
                guard let length = r.u16be(m + 1), length >= 2, let data = r.slice(m + 3, length - 2) else { break }
                let d = ByteReader(data)
                switch marker {
                case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                    if frame == nil, let precision = d.u8(0), let height = d.u16be(1), let width = d.u16be(3),
                        let n = d.u8(5)
                    {
                        var sampling: [(h: Int, v: Int)] = []
                        for c in 0..<n {
                            guard let hv = d.u8(6 + 3 * c + 1) else { break }
                            sampling.append((hv >> 4, hv & 15))
                        }
                        let kind = marker & 0x0F
                        frame = Frame(
                            width: width, height: height, precision: precision, sampling: sampling,
                            progressive: kind == 2 || kind == 6 || kind == 10 || kind == 14,
                            arithmetic: marker >= 0xC9, lossless: kind == 3 || kind == 7 || kind == 11 || kind == 15)
                    }
                case 0xE1 where !sawExif && d.matches("Exif\0", at: 0):
                    sawExif = true
                    exif = data.count > 6 ? TIFFDirectory(tiff: UnsafeBufferPointer(rebasing: data[6...])) : nil
                    if exif == nil { warnings.append("jpeg: EXIF block is not valid TIFF; ignored") }
                case 0xE2 where d.matches("ICC_PROFILE\0", at: 0) && data.count >= 14:
                    if iccChunks.count < 256 { iccChunks.append((Int(data[12]), Int(data[13]), data.count - 14)) }
                case 0xEE where d.matches("Adobe", at: 0):
                    adobeTransform = d.u8(11)
                default:
                    break
                }
                offset = m + 3 + length - 2
            }
            // A profile is reported only when its chunks are complete: one count, every sequence number 1...count
            // exactly once (libjpeg's jpeg_read_icc_profile rule).
            if let count = iccChunks.first?.count {
                let sequences = Set(iccChunks.map(\.sequence))
                if count >= 1, iccChunks.count == count, iccChunks.allSatisfy({ $0.count == count }),
                    sequences == Set(1...count)
                {
                    iccBytes = iccChunks.reduce(0) { $0 + $1.bytes }
                } else {
                    warnings.append("jpeg: the ICC profile's APP2 chunks are incomplete or inconsistent; not reported")
                }
            }
            // EOI within the last 1 KiB: files often carry padding or vendor data after it.
            var i = body.count - 2
            while i >= max(0, body.count - 1024) {
                if body[i] == 0xFF && body[i + 1] == 0xD9 {
                    endsWithEOI = true
                    break
                }
                i -= 1
            }
        }
    }
}

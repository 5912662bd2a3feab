internal import CShims

/// The only Swift file that drives libpng (through the C shim, which owns libpng's setjmp).
enum LibPNG {
    /// What libpng read from the chunks before the image data.
    struct Header {
        var width: Int
        var height: Int
        var bitDepth: Int
        /// PNG colour type: 0 gray, 2 RGB, 3 palette, 4 gray + alpha, 6 RGBA.
        var colorType: Int
        var interlaced: Bool
        var channels: Int
        var hasTransparency: Bool
        var iccBytes: Int?
        /// pHYs: pixels per unit and whether the unit is the metre.
        var physical: (x: Int, y: Int, perMetre: Bool)?
        /// With a full decode: the image data was inflated whole by libdeflate, not by zlib inside libpng.
        var inflatedWhole: Bool
    }

    struct Limits {
        /// With a full decode: most pixels (width × height).
        var maxPixels: Int
        /// Largest ancillary chunk after decompression (iCCP, …).
        var maxChunkBytes: Int
        /// Largest single allocation libpng may make, and the most image data (filtered scanlines) inflated whole.
        var maxAllocation: Int
        /// With a full decode, inflate a clean file's image data whole with libdeflate, at about three times zlib's
        /// speed, and give it to libpng in stored blocks (CShims/png.c, `prepare_inflated`). Any file that is not
        /// clean, or whose data is larger than `maxAllocation`, is inflated by zlib inside libpng, as it always
        /// was. The result is the same either way (PNGWholeInflateTests), but for a few block headers that
        /// libdeflate accepts and zlib does not: more than 286 literal and length codes or 30 distance codes, and
        /// degenerate Huffman codes (docs/output.md, image). Off only in tests, to compare.
        var inflatesWhole = true
    }

    /// Reads the header, and with `pixels` the whole image as RGBA8 rows into it (then the chunks after the image
    /// data). `warnings` receives libpng's first warning and a count.
    static func read(
        _ body: UnsafeBufferPointer<UInt8>, limits: Limits, pixels: PixelAccumulator?, warnings: inout [String]
    ) -> Result<Header, ImageShim.Failure> {
        var cLimits = respdecode_png_limits(
            max_pixels: UInt64(max(limits.maxPixels, 0)), max_chunk_bytes: max(limits.maxChunkBytes, 0),
            max_allocation: max(limits.maxAllocation, 0), inflate_whole: limits.inflatesWhole ? 1 : 0)
        var header = respdecode_png_header()
        if let failure = ImageShim.run(
            library: "libpng", pixels: pixels, warnings: &warnings,
            {
                respdecode_png_read(body.baseAddress, body.count, &cLimits, &header, $0, $1, $2)
            })
        {
            return .failure(failure)
        }
        return .success(
            Header(
                width: Int(header.width), height: Int(header.height), bitDepth: Int(header.bit_depth),
                colorType: Int(header.color_type), interlaced: header.interlace != 0, channels: Int(header.channels),
                hasTransparency: header.has_trns != 0,
                iccBytes: header.has_icc != 0 ? Int(header.icc_bytes) : nil,
                physical: header.has_phys != 0
                    ? (Int(header.phys_x), Int(header.phys_y), header.phys_unit == 1) : nil,
                inflatedWhole: header.inflated_whole != 0))
    }
}

extension LibPNG.Limits {
    /// The settings of a decode with `options` (the image decoder's, and ``PNGInflateCheck``'s): libpng may make
    /// allocations up to 32 MiB, or the chunk limit if that is larger.
    init(_ options: ImageOptions, inflatesWhole: Bool = true) {
        self.init(
            maxPixels: options.maxPixels, maxChunkBytes: options.maxChunkBytes,
            maxAllocation: max(options.maxChunkBytes, 32 << 20), inflatesWhole: inflatesWhole)
    }
}

/// A full PNG decode both ways, compared: the image data inflated whole by libdeflate (what `--inflate` does with a
/// clean file) and inflated by zlib inside libpng (docs/output.md, image). The png fuzz target checks every input with
/// it; `PNGWholeInflateTests` checks the corpora and damaged files the same way.
public enum PNGInflateCheck {
    /// What zlib says, through libpng, of deflate block headers and codes that libdeflate accepts: more than 286
    /// literal and length codes or 30 distance codes declared or used, and code sets that are incomplete in ways
    /// libdeflate allows. A file decoded the whole way with one of these errors through zlib is the difference
    /// docs/output.md names; any other difference is a fault.
    static let differencesAllowed = [
        "too many length or distance symbols", "invalid code lengths set", "invalid literal/lengths set",
        "invalid distances set", "invalid literal/length code", "invalid distance code",
    ]

    /// Decodes `body` in full both ways with the image settings of `limits`.
    /// - Returns: nil when both give the same header, pixels, warnings and error, or differ only as the docs allow;
    ///   else the two outcomes.
    public static func difference(_ body: UnsafeBufferPointer<UInt8>, limits: Limits) -> String? {
        var decoderOptions = DecoderOptions()
        decoderOptions.limits = limits
        let options = ImageOptions(decoderOptions)
        func decode(whole: Bool) -> (outcome: String, failure: String?, inflatedWhole: Bool) {
            let settings = LibPNG.Limits(options, inflatesWhole: whole)
            let pixels = PixelAccumulator()
            var warnings: [String] = []
            switch LibPNG.read(body, limits: settings, pixels: pixels, warnings: &warnings) {
            case .success(var header):
                let inflatedWhole = header.inflatedWhole
                header.inflatedWhole = false
                return ("\(header) \(pixels.summary()) \(warnings)", nil, inflatedWhole)
            case .failure(let failure):
                return ("\(failure) \(warnings)", "\(failure)", false)
            }
        }
        let zlib = decode(whole: false)
        if zlib.inflatedWhole { return "inflated whole with whole inflating off" }
        let whole = decode(whole: true)
        if whole.outcome == zlib.outcome { return nil }
        if whole.failure == nil, let failure = zlib.failure,
            differencesAllowed.contains(where: { failure.contains($0) })
        {
            return nil
        }
        return "inflated whole: \(whole.outcome); through zlib: \(zlib.outcome)"
    }
}

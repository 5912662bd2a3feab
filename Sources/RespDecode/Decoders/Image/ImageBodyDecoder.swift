/// The image decoder (AFNetworking's `AFImageResponseSerializer`, for a pipeline): the body's format is told by its
/// first bytes, whatever the Content-Type says; PNG and JPEG go through libpng and libjpeg-turbo, GIF, BMP, ICO,
/// TIFF and WebP are read from their headers in Swift. The value is the image's metadata (``ImageInfo``); with
/// `--inflate` (AF's `automaticallyInflatesResponseImage`) PNG and JPEG are decoded in full to RGBA8 and summarised
/// (``PixelSummary``).
public struct ImageBodyDecoder: BodyDecoder {
    public let name = "image"

    /// AFNetworking's ten image types, plus `image/webp`.
    public let defaultAcceptableTypes: [MediaTypePattern] = [
        "image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon", "image/bmp", "image/x-bmp",
        "image/x-xbitmap", "image/x-win-bitmap", "image/webp",
    ].compactMap(MediaTypePattern.init)

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        // AF's image serializer gives no image and no error for an empty body.
        if Self.isNoContent(body) { return false }
        let options = ImageOptions(context.options)
        let r = ByteReader(body)
        var info: ImageInfo
        var warnings: [String] = []
        if PNGImage.matches(r) {
            info = try PNGImage.read(body, options: options, warnings: &warnings)
        } else if JPEGImage.matches(r) {
            info = try JPEGImage.read(body, options: options, warnings: &warnings)
        } else {
            info = try Self.readHeaderOnly(r, warnings: &warnings)
            if options.inflate {
                warnings.append("\(info.format) images are read from their header only; --inflate decodes PNG and JPEG")
            }
        }
        if let declared = context.mimeType, let expected = Self.format(ofMIMEType: declared), expected != info.format {
            warnings.insert("the Content-Type says \(declared) but the body is \(info.format)", at: 0)
        }
        context.warnings += warnings
        info.write(to: output, scale: context.options.imageScale)
        return true
    }

    /// GIF, BMP, ICO, TIFF and WebP, from their headers.
    private static func readHeaderOnly(_ r: ByteReader, warnings: inout [String]) throws(RecordError) -> ImageInfo {
        if GIFHeader.matches(r) { return try GIFHeader.read(r, warnings: &warnings) }
        if BMPHeader.matches(r) { return try BMPHeader.read(r, warnings: &warnings) }
        if ICOHeader.matches(r) { return try ICOHeader.read(r, warnings: &warnings) }
        if TIFFHeader.matches(r) { return try TIFFHeader.read(r, warnings: &warnings) }
        if WebPHeader.matches(r) { return try WebPHeader.read(r, warnings: &warnings) }
        let start = r.bytes.prefix(8).map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: " ")
        throw RecordError(
            .invalidImage,
            "not a PNG, JPEG, GIF, BMP, ICO, TIFF or WebP image (the body starts with \(start.isEmpty ? "nothing" : start))",
            location: .init(offset: 0))
    }

    /// The format a MIME type names, for the mismatch warning.
    static func format(ofMIMEType type: String) -> String? {
        switch type {
        case "image/png": "png"
        case "image/jpeg", "image/jpg", "image/pjpeg": "jpeg"
        case "image/gif": "gif"
        case "image/bmp", "image/x-bmp", "image/x-win-bitmap", "image/x-ms-bmp": "bmp"
        case "image/ico", "image/x-icon", "image/vnd.microsoft.icon": "ico"
        case "image/tiff": "tiff"
        case "image/webp": "webp"
        default: nil
        }
    }
}

/// The image settings of one decode, taken from the decoder options.
struct ImageOptions {
    /// Decode the pixels (`--inflate`).
    var inflate: Bool
    /// Most pixels a full decode may produce (`--max-image-pixels`).
    var maxPixels: Int
    /// Largest PNG ancillary chunk after decompression (`--max-image-chunk-bytes`).
    var maxChunkBytes: Int
    /// Most scans of a progressive JPEG (`--max-jpeg-scans`).
    var maxScans: Int
    /// Most pixels a progressive JPEG's scans may cover together (`--max-jpeg-scan-pixels`).
    var maxScanPixels: Int
    /// libjpeg's memory cap (`--max-image-memory`).
    var maxMemory: Int
    /// Most warnings of one image (`--max-warnings`).
    var maxWarnings: Int

    init(_ options: DecoderOptions) {
        let limits = options.limits
        inflate = options.imageInflate
        maxPixels = limits.maxImagePixels
        maxChunkBytes = limits.maxImageChunkBytes
        maxScans = limits.maxJPEGScans
        maxScanPixels = limits.maxJPEGScanPixels
        maxMemory = limits.maxImageMemory
        maxWarnings = limits.maxWarnings
    }

    /// The default limits' settings, decoding the pixels or not (for tests).
    init(inflate: Bool) {
        var options = DecoderOptions()
        options.imageInflate = inflate
        self.init(options)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// Every bound against hostile or runaway input, as named settings (SPEC §5). Going past one is `limitExceeded` on
/// that record — never a crash, never unbounded memory.
public struct Limits: Sendable, Hashable {
    /// Largest header section of one response (status line, fields and the empty line), in bytes; also caps each
    /// chunk-size line and a chunked body's trailer section. Default: 65,536 (64 KiB).
    public var maxHeaderBytes: Int
    /// Largest body of one record as framed (after de-chunking, before content-decoding), in bytes.
    /// Default: 67,108,864 (64 MiB).
    public var maxBodyBytes: Int
    /// Largest body after Content-Encoding is undone (every layer counts against it while decoding): stops
    /// decompression bombs within this much memory. Default: 67,108,864 (64 MiB).
    public var maxDecodedBodyBytes: Int
    /// Most content codings a Content-Encoding list may stack (`gzip, br` is two; `identity` does not count): each
    /// one is a pass over the body. Default: 4.
    public var maxContentCodings: Int
    /// Deepest nesting of arrays and objects (JSON), elements (XML) or containers (plist). Default: 512.
    public var maxDepth: Int
    /// Most bytes of a failing body kept in a line's `body` (base64 of at most this many bytes). Default: 4,096.
    public var maxErrorBodyBytes: Int
    /// Most objects a property list may expand to, counting a shared object once per use (JSON has no references).
    /// Default: 1,000,000.
    public var maxPlistObjects: Int
    /// Largest JSON value one record's xml or plist decoder may write, in bytes: guards the expansion of shared
    /// plist objects and XML namespaces and entities, which can make a small body a huge value.
    /// Default: 67,108,864 (64 MiB).
    public var maxValueBytes: Int
    /// Most pixels (width × height) an image may have to be decoded in full with `--inflate`; checked in 64-bit
    /// arithmetic from the header, before anything is allocated. Default: 100,000,000.
    public var maxImagePixels: Int
    /// Most scans a progressive JPEG may have with `--inflate` (each scan is a pass over the whole image).
    /// Default: 1,000.
    public var maxJPEGScans: Int
    /// Most pixels the scans of a progressive JPEG may cover together (scans × width × height) with `--inflate`:
    /// each scan is a pass over the whole image, so a valid script of hundreds of scans over a large image is
    /// seconds of work from a small file. Default: 2,000,000,000 (20 scans at 100 megapixels).
    public var maxJPEGScanPixels: Int
    /// Most memory libjpeg may use for one image (`max_memory_to_use`; progressive images keep all coefficients).
    /// Default: 268,435,456 (256 MiB).
    public var maxImageMemory: Int
    /// Largest PNG ancillary chunk after decompression (zTXt, iTXt, iCCP; libpng's `png_set_chunk_malloc_max`).
    /// Default: 8,000,000.
    public var maxImageChunkBytes: Int

    /// Largest text of one HAR entry or ndjson line: 2 × `maxBodyBytes` + `maxHeaderBytes` (a base64 body is 4/3
    /// of its bytes, plus escapes and the other fields), saturating instead of overflowing.
    public var maxRecordTextBytes: Int {
        let (twice, overflow) = maxBodyBytes.multipliedReportingOverflow(by: 2)
        let (cap, overflow2) = twice.addingReportingOverflow(max(maxHeaderBytes, 0))
        return overflow || overflow2 ? Int.max : max(cap, 0)
    }

    public init(
        maxHeaderBytes: Int = 64 * 1024,
        maxBodyBytes: Int = 64 * 1024 * 1024,
        maxDecodedBodyBytes: Int = 64 * 1024 * 1024,
        maxContentCodings: Int = 4,
        maxDepth: Int = 512,
        maxErrorBodyBytes: Int = 4096,
        maxPlistObjects: Int = 1_000_000,
        maxValueBytes: Int = 64 * 1024 * 1024,
        maxImagePixels: Int = 100_000_000,
        maxJPEGScans: Int = 1000,
        maxJPEGScanPixels: Int = 2_000_000_000,
        maxImageMemory: Int = 256 * 1024 * 1024,
        maxImageChunkBytes: Int = 8_000_000
    ) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.maxDecodedBodyBytes = maxDecodedBodyBytes
        self.maxContentCodings = maxContentCodings
        self.maxDepth = maxDepth
        self.maxErrorBodyBytes = maxErrorBodyBytes
        self.maxPlistObjects = maxPlistObjects
        self.maxValueBytes = maxValueBytes
        self.maxImagePixels = maxImagePixels
        self.maxJPEGScans = maxJPEGScans
        self.maxJPEGScanPixels = maxJPEGScanPixels
        self.maxImageMemory = maxImageMemory
        self.maxImageChunkBytes = maxImageChunkBytes
    }
}

/// Every bound against hostile or runaway input, as named settings (docs/reliability.md#limits). Going past one is
/// `limitExceeded` on
/// that record — never a crash, never unbounded memory.
///
/// Each default is the initial value of its property, and only there: `respdecode`'s options, `respdecode config`
/// and docs/options.md read it from `Limits()`. Framing, Content-Encoding and the decoders all take these, so they
/// live with the records they bound, in no stage's folder.
public struct Limits: Sendable, Hashable {
    /// Largest header section of one response (status line, fields and the empty line), in bytes; also caps each
    /// chunk-size line and a chunked body's trailer section.
    public var maxHeaderBytes: Int = 64 * 1024
    /// Largest body of one record as framed (after de-chunking, before content-decoding), in bytes.
    public var maxBodyBytes: Int = 64 * 1024 * 1024
    /// Largest body after Content-Encoding is undone (every layer counts against it while decoding): stops
    /// decompression bombs within this much memory.
    public var maxDecodedBodyBytes: Int = 64 * 1024 * 1024
    /// Most content codings a Content-Encoding list may stack (`gzip, br` is two; `identity` does not count): each
    /// one is a pass over the body.
    public var maxContentCodings: Int = 4
    /// Deepest nesting of arrays and objects (JSON), elements (XML), containers (plist), arrays, maps and tags
    /// (msgpack, CBOR: docs/decoding.md#msgpack-and-cbor) or open elements (HTML: past it the page is read no further,
    /// docs/decoding.md#bounds).
    public var maxDepth: Int = 512
    /// Most bytes of a failing body kept in a line's `body` (base64 of at most this many bytes).
    public var maxErrorBodyBytes: Int = 4096
    /// Most objects a property list may expand to, counting a shared object once per use (JSON has no references).
    public var maxPlistObjects: Int = 1_000_000
    /// Deepest nesting of protobuf messages: length-delimited fields are guessed as messages only this many levels
    /// deep (below, they are strings or bytes), and groups may nest this deep (docs/decoding.md#protobuf). Each level
    /// of guessing is a pass over the bytes below it, so this bounds the work per byte.
    public var maxProtobufDepth: Int = 16
    /// Largest JSON value one record's decoder may write, in bytes (xml, plist, form, multipart with its parts, sse,
    /// msgpack, cbor, protobuf; json and ndjson values are never longer than their body): guards the expansion of
    /// shared plist objects and XML namespaces and entities, which can make a small body a huge value, and the growth
    /// of binary formats into JSON (64 MB of one-byte msgpack items is 128 MB of JSON). In an html value it bounds the
    /// fields other than `text` (meta, links, headings, title).
    public var maxValueBytes: Int = 64 * 1024 * 1024
    /// Most pixels (width × height) an image may have to be decoded in full with `--inflate`; checked in 64-bit
    /// arithmetic from the header, before anything is allocated.
    public var maxImagePixels: Int = 100_000_000
    /// Most scans a progressive JPEG may have with `--inflate` (each scan is a pass over the whole image).
    public var maxJPEGScans: Int = 1000
    /// Most pixels the scans of a progressive JPEG may cover together (scans × width × height) with `--inflate`:
    /// each scan is a pass over the whole image, so a valid script of hundreds of scans over a large image is
    /// seconds of work from a small file.
    public var maxJPEGScanPixels: Int = 2_000_000_000
    /// Most memory libjpeg may use for one image (`max_memory_to_use`; progressive images keep all coefficients).
    public var maxImageMemory: Int = 256 * 1024 * 1024
    /// Largest PNG ancillary chunk after decompression (zTXt, iTXt, iCCP; libpng's `png_set_chunk_malloc_max`).
    public var maxImageChunkBytes: Int = 8_000_000
    /// Most warnings one result line keeps (framing, Content-Encoding and the decoder's together): past it, the
    /// last one kept says how many more there were. A decoder that can raise them by the thousand (the PNG chunk
    /// walk) stops collecting there too, so that a hostile file cannot make a huge line.
    public var maxWarnings: Int = 16
    /// Most bytes of text (UTF-8) one html or text value keeps in its `text`; past it the text is cut at a character
    /// boundary and the value's `truncated` names `text`.
    public var maxTextBytes: Int = 8 * 1024 * 1024
    /// Most links one html value lists; past it the rest are counted, not listed, and `truncated` names `links`.
    public var maxHTMLLinks: Int = 10_000
    /// Most name-value pairs one form body may have (docs/decoding.md#form); past it, `limitExceeded`.
    public var maxFormFields: Int = 100_000
    /// Most events and comments one event stream may have (docs/decoding.md#sse); past it, `limitExceeded`.
    public var maxEvents: Int = 100_000
    /// Most values one NDJSON, JSON Lines or JSON text sequence body may have (docs/decoding.md#ndjson); past it,
    /// `limitExceeded`.
    public var maxNDJSONValues: Int = 1_000_000
    /// Most parts one multipart value lists; past it the rest of the body is not read and `truncated` names `parts`
    /// (docs/decoding.md#multipart-limits).
    public var maxMultipartParts: Int = 10_000
    /// Most multipart bodies nested in one another, the record's own counting as one: a multipart part deeper than
    /// that is not decoded and carries a `limitExceeded` error (docs/decoding.md#multipart-limits).
    public var maxMultipartDepth: Int = 4
    /// Most bytes a compressed WARC entry of a WACZ may inflate to per byte stored (docs/framings.md#wacz): an entry
    /// declaring more is refused before it is read (entries up to 1 MiB always pass), and so is one that would take
    /// the WARC entries of one archive together past this many times the archive's size. Stops ZIP bombs.
    public var maxArchiveRatio: Int = 100
    /// Largest WARC entry of a WACZ, as inflated, in bytes: an entry declaring more is refused before it is read.
    public var maxArchiveEntryBytes: Int = 64 * 1024 * 1024 * 1024

    /// Largest text of one HAR entry or ndjson line: 2 × `maxBodyBytes` + `maxHeaderBytes` (a base64 body is 4/3
    /// of its bytes, plus escapes and the other fields), saturating instead of overflowing.
    public var maxRecordTextBytes: Int {
        let (twice, overflow) = maxBodyBytes.multipliedReportingOverflow(by: 2)
        let (cap, overflow2) = twice.addingReportingOverflow(max(maxHeaderBytes, 0))
        return overflow || overflow2 ? Int.max : max(cap, 0)
    }

    /// The defaults, with the limits given replaced (for tests and callers that set a few).
    public init(
        maxHeaderBytes: Int? = nil,
        maxBodyBytes: Int? = nil,
        maxDecodedBodyBytes: Int? = nil,
        maxContentCodings: Int? = nil,
        maxDepth: Int? = nil,
        maxErrorBodyBytes: Int? = nil,
        maxPlistObjects: Int? = nil,
        maxProtobufDepth: Int? = nil,
        maxValueBytes: Int? = nil,
        maxImagePixels: Int? = nil,
        maxJPEGScans: Int? = nil,
        maxJPEGScanPixels: Int? = nil,
        maxImageMemory: Int? = nil,
        maxImageChunkBytes: Int? = nil,
        maxArchiveRatio: Int? = nil,
        maxArchiveEntryBytes: Int? = nil,
        maxTextBytes: Int? = nil,
        maxHTMLLinks: Int? = nil,
        maxFormFields: Int? = nil,
        maxEvents: Int? = nil,
        maxNDJSONValues: Int? = nil,
        maxMultipartParts: Int? = nil,
        maxMultipartDepth: Int? = nil
    ) {
        if let maxHeaderBytes { self.maxHeaderBytes = maxHeaderBytes }
        if let maxBodyBytes { self.maxBodyBytes = maxBodyBytes }
        if let maxDecodedBodyBytes { self.maxDecodedBodyBytes = maxDecodedBodyBytes }
        if let maxContentCodings { self.maxContentCodings = maxContentCodings }
        if let maxDepth { self.maxDepth = maxDepth }
        if let maxErrorBodyBytes { self.maxErrorBodyBytes = maxErrorBodyBytes }
        if let maxPlistObjects { self.maxPlistObjects = maxPlistObjects }
        if let maxProtobufDepth { self.maxProtobufDepth = maxProtobufDepth }
        if let maxValueBytes { self.maxValueBytes = maxValueBytes }
        if let maxImagePixels { self.maxImagePixels = maxImagePixels }
        if let maxJPEGScans { self.maxJPEGScans = maxJPEGScans }
        if let maxJPEGScanPixels { self.maxJPEGScanPixels = maxJPEGScanPixels }
        if let maxImageMemory { self.maxImageMemory = maxImageMemory }
        if let maxImageChunkBytes { self.maxImageChunkBytes = maxImageChunkBytes }
        if let maxArchiveRatio { self.maxArchiveRatio = maxArchiveRatio }
        if let maxArchiveEntryBytes { self.maxArchiveEntryBytes = maxArchiveEntryBytes }
        if let maxTextBytes { self.maxTextBytes = maxTextBytes }
        if let maxHTMLLinks { self.maxHTMLLinks = maxHTMLLinks }
        if let maxFormFields { self.maxFormFields = maxFormFields }
        if let maxEvents { self.maxEvents = maxEvents }
        if let maxNDJSONValues { self.maxNDJSONValues = maxNDJSONValues }
        if let maxMultipartParts { self.maxMultipartParts = maxMultipartParts }
        if let maxMultipartDepth { self.maxMultipartDepth = maxMultipartDepth }
    }
}
